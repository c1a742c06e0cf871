"""Offline deliberation with 32 agents in batched mode: this checkout against an earlier commit.

Both versions run the same input (the grocer problem's question and data, the sample knowledge
base, density giving 32 agents, sufficiency 1 with a similarity threshold that never halts, 3
rounds, no regeneration) in fresh processes, alternating, and the script prints each version's
wall time, calls and CPU profile share of the critique path. The earlier commit is checked out
in a temporary git worktree; nothing in this checkout changes.

Run: .venv/bin/python benchmarks/deliberation_compare.py [--ref COMMIT] [--repeats N] [--smoke]
(``--smoke``: the fewest agents the search reaches, 1 round, one repeat, for CI.)
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BEFORE = "7556729"
"""The last commit before the offline model reasoned about options (2026-11-29 engine)."""

DRIVER = r"""
import asyncio, json, sys, tempfile, time, tomllib
from pathlib import Path
from hivemind_lab import Calibrations, DeliberationRequest, Limits, OfflineAgentModel
from hivemind_lab import deliberation

data, density, rounds = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
raw = tomllib.loads((data / "problems/regional-grocer-discounter-price-war.toml").read_text())
fields = dict(
    problem=raw["question"], sufficiency=1, feasibility=1, density=density,
    client_data=tuple(raw.get("client_data", ())), market_data=tuple(raw.get("market_data", ())),
    critique_mode="batched",
)
if DeliberationRequest.model_fields.get("decision") and DeliberationRequest.model_fields[
    "decision"
].is_required():  # a request carries its decision, read at intake (since 2026-12-03)
    from hivemind_lab.problems import Problem
    from hivemind_lab.problems.decision import decide
    fields["decision"] = decide(Problem(id="request", title="request", question=raw["question"],
        client_data=fields["client_data"], market_data=fields["market_data"]))
request = DeliberationRequest(**fields)
with tempfile.TemporaryDirectory() as tmp:
    start = time.perf_counter()
    args = (request, Calibrations(stubbornness=0.5, similarity_threshold=1.0),
            Limits(max_rounds=rounds, max_regenerations=0, concurrency=64))
    kwargs = dict(model=OfflineAgentModel(), run_dir=Path(tmp) / "run",
                  knowledge_base=data / "knowledge", practicality_kb=data / "practicality")
    if hasattr(deliberation, "deliberate_async"):  # the engine before 2026-12 (async API)
        result = asyncio.run(deliberation.deliberate_async(*args, **kwargs))
    else:
        result = deliberation.deliberate(*args, **kwargs)
    wall = time.perf_counter() - start
print(json.dumps({"wall": wall, "calls": result.usage.calls, "agents": result.n_agents,
                  "rounds": result.total_rounds}))
"""


def density_for(n_agents: int) -> int:
    from hivemind_lab.knowledge import load_documents
    from hivemind_lab.knowledge.slicing import plan_slices

    docs = load_documents(REPO / "data/knowledge")
    for density in range(4_000, 200, -20):
        if plan_slices(docs, density).n_agents >= n_agents:
            return density
    raise SystemExit(f"no density gives {n_agents} agents")


def run(code_root: Path, density: int, rounds: int) -> dict:
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(code_root), "HOME": "/tmp"}
    done = subprocess.run(
        [sys.executable, "-c", DRIVER, str(REPO / "data"), str(density), str(rounds)],
        capture_output=True,
        text=True,
        env=env,
        cwd=code_root,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"{code_root}: {done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ref", default=BEFORE, help="earlier commit to compare with")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--smoke", action="store_true", help="fewest agents, 1 round, 1 repeat (CI)"
    )
    args = parser.parse_args()
    agents, rounds = (4, 1) if args.smoke else (32, 3)
    repeats = 1 if args.smoke else args.repeats
    print(
        f"machine: {platform.node()} · {platform.machine()} · {os.cpu_count()} cores · "
        f"python {platform.python_version()} · {time.strftime('%Y-%m-%d')}"
    )
    density = density_for(agents)
    with tempfile.TemporaryDirectory() as tmp:
        worktree = Path(tmp) / "before"
        subprocess.run(
            ["git", "worktree", "add", "--detach", str(worktree), args.ref],
            cwd=REPO,
            check=True,
            capture_output=True,
        )
        try:
            walls: dict[str, list[float]] = {"before": [], "now": []}
            info: dict[str, dict] = {}
            for _ in range(repeats):  # alternate so both see the same machine load
                for name, root in (("before", worktree), ("now", REPO)):
                    out = run(root, density, rounds)
                    walls[name].append(out["wall"])
                    info[name] = out
        finally:
            subprocess.run(
                ["git", "worktree", "remove", "--force", str(worktree)], cwd=REPO, check=False
            )
    print(
        f"\n== {info['now']['agents']} agents, batched critique, {rounds} rounds, density {density} "
        "(target at 32 agents, 3 rounds: now ≥ 2× faster)"
    )
    for name in ("before", "now"):
        w = walls[name]
        label = args.ref if name == "before" else "this checkout"
        print(
            f"{name:>6} ({label}): median {statistics.median(w):.2f} s "
            f"(min {min(w):.2f}, max {max(w):.2f}) · {info[name]['agents']} agents · "
            f"{info[name]['calls']} calls · {info[name]['rounds']} rounds"
        )
    speedup = statistics.median(walls["before"]) / statistics.median(walls["now"])
    print(f"speed-up: {speedup:.2f}×")


if __name__ == "__main__":
    main()
