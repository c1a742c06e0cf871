"""A sweep on a two-node Ray cluster against the same sweep run locally, side by side in one run.

The cluster is the one `tests/test_ray_cluster.py` builds: a head (no CPUs) and a second node
(2 CPUs) as separate Ray processes, on loopback only, inside a private user, network and
process namespace (`unshare`), so no Ray server listens on the host's interfaces and every Ray
process ends with the run. The sweep is the grocer grid on the offline model; the local run
uses ``--workers`` processes. Printed: wall time of the local sweep, of starting the two Ray
nodes and of the sweep on the cluster, and whether every run's result equals the local one
(wall time, the audit chain's head and the shared cache's split of calls left out, as in the
test).

Run: .venv/bin/python benchmarks/ray_sweep.py [--stubbornness 0.1,0.6] [--workers 2]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hivemind_lab.experiments import ExperimentSpec, run  # noqa: E402
from tests.support import child_env  # noqa: E402
from tests.test_ray_cluster import _outcome  # noqa: E402

GROCER = "data/problems/regional-grocer-discounter-price-war.toml"

CLUSTER = r"""
import json, os, shutil, subprocess, sys, tempfile, time

tmp, repo, spec_file = sys.argv[1:4]
report = {}
subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
env = {**os.environ, "HOME": tmp, "RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0"}
bin_ray = os.path.join(os.path.dirname(sys.executable), "ray")
ray = [bin_ray, "start", "--disable-usage-stats", "--node-ip-address", "127.0.0.1",
       "--object-store-memory", "100000000"]

def start(args, ports):
    fixed = ["--metrics-export-port", str(ports[0]), "--dashboard-agent-grpc-port",
             str(ports[1]), "--dashboard-agent-listen-port", str(ports[2]),
             "--runtime-env-agent-port", str(ports[3])]
    for attempt in (1, 2):  # one retry of Ray's start-up race (ray-project/ray#65983)
        if subprocess.run([*ray, *args, *fixed], env=env, timeout=600).returncode == 0:
            return
        report.setdefault("retries", []).append(args[0])
        if args[0] == "--head":
            subprocess.run([bin_ray, "stop", "--force"], env=env, timeout=120)
    raise SystemExit(f"ray start {args[0]} failed twice")

sessions = tempfile.mkdtemp(prefix="hmray-")
try:
    started = time.perf_counter()
    start(["--head", "--port", "46379", "--num-cpus", "0", "--include-dashboard=false",
           "--temp-dir", sessions], (52301, 52302, 52303, 52304))
    start(["--address", "127.0.0.1:46379", "--num-cpus", "2"], (52311, 52312, 52313, 52314))
    report["start_s"] = time.perf_counter() - started
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "hivemind_lab", "sweep", spec_file, "--ray", "127.0.0.1:46379"],
        cwd=repo, env=env, capture_output=True, text=True, timeout=1800)
    report["sweep_s"] = time.perf_counter() - started
    report["code"] = done.returncode
    report["err"] = done.stderr[-2000:]
finally:
    import psutil
    me = os.getpid()
    for proc in psutil.process_iter():
        if proc.pid not in (me, 1):
            proc.kill()
    shutil.rmtree(sessions, ignore_errors=True)
    print(json.dumps(report))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--stubbornness", default="0.1,0.6", help="the grid's values")
    parser.add_argument("--workers", type=int, default=2, help="local worker processes")
    args = parser.parse_args()
    unshare = shutil.which("unshare")
    if unshare is None or shutil.which("ip") is None:
        raise SystemExit("unshare and ip are needed to keep the Ray cluster on loopback")
    grid = [float(v) for v in args.stubbornness.split(",")]
    name = f"ray-bench-{os.getpid()}"
    values = {
        "name": name,
        "problems": [GROCER],
        "inputs": {"sufficiency": 1, "feasibility": 55, "density": 8000},
        "limits": {"max_rounds": 3, "max_regenerations": 1},
        "space": {
            "kind": "grid",
            "stubbornness": grid,
            "similarity_threshold": [0.35],
            "severity": [0.5],
        },
        "seeds": [0],
    }
    load = os.getloadavg()
    print(
        f"machine: {platform.node()} · {os.cpu_count()} cores · python "
        f"{platform.python_version()} · {datetime.now(UTC):%Y-%m-%d %H:%M} UTC · "
        f"load {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}",
        flush=True,
    )
    with tempfile.TemporaryDirectory(prefix="raybench-") as tmp_name:
        tmp = Path(tmp_name)
        started = time.perf_counter()
        local = run(
            ExperimentSpec.model_validate(values),
            project=ROOT,
            root=tmp / "local",
            workers=args.workers,
        )
        local_s = time.perf_counter() - started
        spec_file = tmp / "cluster.toml"
        spec_file.write_text(
            f'name = "{name}"\nproblems = ["{GROCER}"]\nseeds = [0]\n'
            "[inputs]\nsufficiency = 1\nfeasibility = 55\ndensity = 8000\n"
            "[limits]\nmax_rounds = 3\nmax_regenerations = 1\n"
            f'[space]\nkind = "grid"\nstubbornness = {json.dumps(grid)}\n'
            "similarity_threshold = [0.35]\nseverity = [0.5]\n"
        )
        isolated = [
            unshare,
            "--user",
            "--map-root-user",
            "--net",
            "--pid",
            "--fork",
            "--mount-proc",
        ]
        done = subprocess.run(
            [*isolated, sys.executable, "-c", CLUSTER, str(tmp), str(ROOT), str(spec_file)],
            env=child_env(tmp),
            capture_output=True,
            text=True,
            timeout=3600,
        )
        if done.returncode != 0:
            raise SystemExit(f"cluster run failed: {done.stderr[-3000:]}")
        report = json.loads(done.stdout.strip().splitlines()[-1])
        runs = ROOT / "experiments" / "runs" / name
        try:
            if report.get("code") != 0:
                raise SystemExit(f"sweep on the cluster failed: {report.get('err')}")
            cluster, here = _outcome(runs), _outcome(tmp / "local")
            equal = cluster == here and len(here) == len(local.runs)
        finally:
            shutil.rmtree(runs, ignore_errors=True)
    after = os.getloadavg()
    print("| sweep | points | wall | equal to local |")
    print("| --- | --- | --- | --- |")
    print(f"| local, {args.workers} worker processes | {len(local.runs)} | {local_s:.1f} s | — |")
    print(
        f"| two-node Ray cluster (head 0 CPUs + node 2 CPUs, loopback) | {len(cluster)} "
        f"| {report['sweep_s']:.1f} s (+ {report['start_s']:.1f} s starting the nodes"
        f"{', retried ' + ', '.join(report['retries']) if report.get('retries') else ''}) "
        f"| {'yes' if equal else 'NO'} |"
    )
    print(f"load after: {after[0]:.1f} / {after[1]:.1f} / {after[2]:.1f}")


if __name__ == "__main__":
    main()
