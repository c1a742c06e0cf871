"""Knowledge-graph store benchmark: both stores, the same operations.

Prints, for LadybugDB (embedded) and Neo4j (the project's own server, started by
scripts/neo4j when NEO4J_URI is not set):
- assert-with-conflict-detection latency p50/p95 at 10^3, 10^4 and 10^5 assertions
  (target: p95 at 10^5 within 3x of 10^3, i.e. index lookups, not scans);
- bulk ingest rate (target: >= 5,000 assertions/s on Neo4j with batching);
- query + context packing latency p50/p95 at 10^5 assertions (target: p95 <= 30 ms embedded),
  over 100 distinct questions (each assertion is rendered and token-counted once, then cached).

Run: .venv/bin/python benchmarks/graph_store.py [--max 100000] [--stores ladybug,neo4j]
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from hivemind_lab.graph import GraphConfig, HivemindGraph, open_store

REPO = Path(__file__).resolve().parents[1]
DOMAIN = "theory"
PREDICATES = ["is", "causes", "includes", "relates_to", "requires", "equals"]


NEO4J = REPO / "scripts" / "neo4j"
STATE = REPO / ".cache" / "neo4j" / "state.env"


def neo4j_env(*, allow_running: bool = True) -> dict[str, str]:
    """NEO4J_URI/USER/PASSWORD of the server to measure: the caller's NEO4J_URI, else the
    project's own server, started here with the JVM's normal JIT (the test default
    ``-XX:TieredStopAtLevel=1`` favours start-up time over throughput). A server that is
    already running is someone else's (a test run's, perhaps with the C1-only JIT, and the
    benchmark wipes its data): used only with ``allow_running``. The result's NEO4J_STARTED
    says whether this call started it (then stop it with `stop_neo4j`)."""
    if os.environ.get("NEO4J_URI"):
        return {k: os.environ[k] for k in ("NEO4J_URI", "NEO4J_USER", "NEO4J_PASSWORD")}
    running = subprocess.run([str(NEO4J), "status"], capture_output=True).returncode == 0
    if running and not allow_running:
        raise SystemExit(
            "a Neo4j server is already running (scripts/neo4j status), probably for a test run: "
            "the benchmark would wipe its data and measure its JIT flags, not the normal ones. "
            "Wait for it to stop, or pass --use-running."
        )
    env = {**os.environ, "NEO4J_JAVA_OPTS": os.environ.get("NEO4J_JAVA_OPTS", " ")}
    subprocess.run([str(NEO4J), "start"], check=True, env=env)
    values = {}
    for line in STATE.read_text().splitlines():
        key, _, value = line.partition("=")
        values[key.strip()] = value.strip().strip('"')
    values["NEO4J_STARTED"] = "" if running else "1"
    return values


def stop_neo4j(env: dict[str, str]) -> None:
    """Stops the project's server if `neo4j_env` started it."""
    if env.get("NEO4J_STARTED"):
        subprocess.run([str(NEO4J), "stop"], check=False)


def jvm_flags(env: dict[str, str]) -> str:
    """The server JVM's compiler flags as it runs (read from /proc), for the report."""
    pid = env.get("NEO4J_PID", "")
    try:
        args = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
    except (OSError, ValueError):
        return "unknown (not the project's server, or not on Linux)"
    jit = [a for a in args if a.startswith("-XX:") and ("Tiered" in a or "Compil" in a)]
    heap = [a for a in args if a.startswith("-Xmx")]
    if jit:
        return f"{' '.join(heap + jit)} (C1 only: NOT the normal JIT)"
    return f"{' '.join(heap)}, no compiler flags: the normal tiered C1+C2 JIT"


def rows(rng: random.Random, n: int, n_entities: int) -> list[dict]:
    return [
        {
            "subject": f"concept {rng.randrange(n_entities)}",
            "predicate": rng.choice(PREDICATES),
            "obj": f"concept {rng.randrange(n_entities)}",
            "confidence": round(rng.uniform(0.3, 1.0), 3),
            "domain": DOMAIN,
            "evidence": "synthetic benchmark claim",
        }
        for _ in range(n)
    ]


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


def run(kind: str, sizes: list[int], samples: int) -> None:
    rng = random.Random(7)
    with tempfile.TemporaryDirectory() as tmp:
        env: dict[str, str] = {}
        if kind == "neo4j":
            env = neo4j_env()
            print(f"server JVM: {jvm_flags(env)}")
            config = GraphConfig(
                store="neo4j",
                neo4j_uri=env["NEO4J_URI"],
                neo4j_user=env["NEO4J_USER"],
                neo4j_password=env["NEO4J_PASSWORD"],
            )
        else:
            config = GraphConfig(db_path=Path(tmp) / "bench.lbdb")
        store = open_store(config)
        store.wipe()
        graph = HivemindGraph(store, config)
        loaded, ingest_s = 0, 0.0
        step_rates = []
        print(f"\n== {kind}")
        print("assertions   assert p50 ms   assert p95 ms   conflicts/assert")
        p95s = {}
        for size in sizes:
            n_entities = max(50, size // 4)
            batch = rows(rng, size - loaded, n_entities)
            start = time.perf_counter()
            graph.bulk_assert(batch, model="bulk")
            took = time.perf_counter() - start
            ingest_s += took
            step_rates.append((loaded, size, (size - loaded) / took))
            loaded = size
            latencies, conflicts = [], 0
            for i in range(samples):
                subject = f"concept {rng.randrange(n_entities)}"
                t0 = time.perf_counter()
                result = graph.assert_claim(
                    subject, "is", f"value {i}", 0.6, DOMAIN, model=f"m{i % 3}"
                )
                latencies.append(time.perf_counter() - t0)
                conflicts += len(result.conflicts_detected)
            p95s[size] = pct(latencies, 0.95)
            print(
                f"{size:>10,}   {pct(latencies, 0.5):>13.2f}   {p95s[size]:>13.2f}   "
                f"{conflicts / samples:>16.2f}"
            )
        print(
            f"p95 ratio {sizes[-1]:,} / {sizes[0]:,}: {p95s[sizes[-1]] / p95s[sizes[0]]:.2f}x (target <= 3x)"
        )
        steps = ", ".join(f"{a:,}->{b:,}: {r:,.0f}/s" for a, b, r in step_rates)
        print(
            f"bulk ingest: {loaded:,} assertions in {ingest_s:.1f} s = {loaded / ingest_s:,.0f}/s "
            f"overall; by step {steps} (target >= 5,000/s on Neo4j)"
        )
        start = time.perf_counter()
        graph.snapshot()
        print(
            f"analytics snapshot (PageRank over {loaded:,} assertions) built in "
            f"{time.perf_counter() - start:.2f} s"
        )
        latencies, cpu = [], []
        n_entities = max(50, sizes[-1] // 4)
        for _ in range(100):
            question = f"How does concept {rng.randrange(n_entities)} relate to concept {rng.randrange(n_entities)}?"
            t0, c0 = time.perf_counter(), time.process_time()
            graph.query(question, 2000, DOMAIN, model="claude")
            latencies.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
        # CPU time is printed too: on a shared machine wall time also counts other processes.
        print(
            f"query + packing at {loaded:,}: p50 {pct(latencies, 0.5):.1f} ms, "
            f"p95 {pct(latencies, 0.95):.1f} ms wall; CPU p50 {pct(cpu, 0.5):.1f} ms, "
            f"p95 {pct(cpu, 0.95):.1f} ms (target p95 <= 30 ms embedded)"
        )
        store.wipe()
        store.close()
        stop_neo4j(env)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max", type=int, default=100_000)
    parser.add_argument("--stores", default="ladybug,neo4j")
    parser.add_argument("--samples", type=int, default=200)
    args = parser.parse_args()
    sizes = [s for s in (1_000, 10_000, 100_000) if s <= args.max]
    print(
        f"machine: {platform.node()} · {os.cpu_count()} cores · python {platform.python_version()} "
        f"· {time.strftime('%Y-%m-%d')}"
    )
    for kind in args.stores.split(","):
        run(kind.strip(), sizes, args.samples)
    _ = statistics  # keep import for readers extending the script


if __name__ == "__main__":
    main()
