"""Neo4j bulk ingest with 1 and N parallel loaders, side by side in one run.

Rows come in clusters of entities that never meet (as claims about separate topics do), so
`bulk_assert(loaders=N)` can split them into disjoint groups. Each configuration loads the same
rows into an emptied store, alternating, ``--repeats`` times; the best and median rates are
printed (target: >= 8,000 assertions/s), with the machine's load average before and after: the
server and the client share the cores, so other work on the machine shows in the rates. The
project's server is started for the run with the JVM's normal JIT and stopped after it (a
server that already runs, e.g. a test run's with the C1-only JIT, is refused unless
``--use-running``); the JVM's compiler flags are printed as read from the running process.
Two unmeasured loads of the same rows come first (``--warmup``), and each configuration's
server CPU per load is printed in three parts read from /proc: the threads that write (Bolt
workers and the rest), the JIT's compiler threads and the garbage collector's. On 2 cores a
fresh JVM's C2 compiler took 2-24 s of CPU per 50,000-row load after a 20,000-row warm-up,
competing with the writers for the cores.

Run: .venv/bin/python benchmarks/graph_bulk_loaders.py [--rows 100000] [--loaders 1,2]
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import time
from pathlib import Path

from graph_store import DOMAIN, PREDICATES, jvm_flags, neo4j_env, stop_neo4j

from hivemind_lab.graph import GraphConfig, HivemindGraph, open_store


def clustered_rows(rng: random.Random, n: int, cluster_entities: int) -> list[dict]:
    clusters = max(1, n // (cluster_entities * 4))
    out = []
    for _ in range(n):
        c = rng.randrange(clusters)
        out.append(
            {
                "subject": f"topic {c} concept {rng.randrange(cluster_entities)}",
                "predicate": rng.choice(PREDICATES),
                "obj": f"topic {c} concept {rng.randrange(cluster_entities)}",
                "confidence": round(rng.uniform(0.3, 1.0), 3),
                "domain": DOMAIN,
                "evidence": "synthetic benchmark claim",
            }
        )
    return out


def cpu_seconds(pid: str) -> dict[str, float]:
    """CPU time (user + system) a process's threads have used so far, from /proc, in three
    groups: the JIT's compiler threads, the garbage collector's, and the rest (Bolt workers
    doing the writes); empty when unreadable."""
    out = {"jit": 0.0, "gc": 0.0, "work": 0.0}
    for task in Path(f"/proc/{pid}/task").glob("*") if pid else []:
        try:
            stat = (task / "stat").read_text()
        except OSError:
            continue
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2 :].split()
        used = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        group = "jit" if "Compiler" in name else "gc" if name.startswith(("GC ", "G1 ")) else "work"
        out[group] += used
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--loaders", default="1,2")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cluster-entities", type=int, default=50)
    parser.add_argument(
        "--warmup",
        type=int,
        default=2,
        help="unmeasured loads (with a wipe each) of the measured rows first: a fresh JVM's "
        "JIT compiles the load and wipe paths as it goes (its compiler threads' CPU is printed)",
    )
    parser.add_argument(
        "--use-running", action="store_true", help="measure a Neo4j server that already runs"
    )
    args = parser.parse_args()
    counts = [int(x) for x in args.loaders.split(",")]
    print(
        f"machine: {platform.node()} · {os.cpu_count()} cores · python {platform.python_version()} "
        f"· {time.strftime('%Y-%m-%d')}"
    )
    env = neo4j_env(allow_running=args.use_running)
    print(f"server JVM: {jvm_flags(env)}")
    config = GraphConfig(
        store="neo4j",
        neo4j_uri=env["NEO4J_URI"],
        neo4j_user=env["NEO4J_USER"],
        neo4j_password=env["NEO4J_PASSWORD"],
    )
    store = open_store(config)
    graph = HivemindGraph(store, config)
    rows = clustered_rows(random.Random(7), args.rows, args.cluster_entities)
    rates: dict[int, list[float]] = {n: [] for n in counts}
    server_cpu: dict[int, list[dict[str, float]]] = {n: [] for n in counts}
    client_cpu: dict[int, list[float]] = {n: [] for n in counts}
    server = env.get("NEO4J_PID", "")
    for _ in range(args.warmup):
        store.wipe()
        graph.bulk_assert(rows, model="warm", loaders=counts[-1])
    load_before = os.getloadavg()[0]
    for _ in range(args.repeats):
        for n in counts:
            store.wipe()
            cpu_before, client_before = cpu_seconds(server), time.process_time()
            start = time.perf_counter()
            graph.bulk_assert(rows, model="bulk", loaders=n)
            rates[n].append(len(rows) / (time.perf_counter() - start))
            after = cpu_seconds(server)
            server_cpu[n].append({k: after[k] - cpu_before[k] for k in after})
            client_cpu[n].append(time.process_time() - client_before)
    store.wipe()
    store.close()
    stop_neo4j(env)
    print(f"{len(rows):,} assertions, clusters of {args.cluster_entities} entities")
    print(f"load average (1 min): {load_before:.1f} before, {os.getloadavg()[0]:.1f} after")
    print(
        "loaders   best/s   median/s   vs first   CPU s per load (medians): server work/JIT/GC, client"
    )
    base = statistics.median(rates[counts[0]])
    for n in counts:
        median = statistics.median(rates[n])
        used = {k: statistics.median(c[k] for c in server_cpu[n]) for k in ("work", "jit", "gc")}
        print(
            f"{n:>7}   {max(rates[n]):>6,.0f}   {median:>8,.0f}   {median / base:>7.2f}x   "
            f"{used['work']:>5.1f} / {used['jit']:.1f} / {used['gc']:.1f}, "
            f"{statistics.median(client_cpu[n]):.1f}"
        )
    print("(target >= 8,000 assertions/s)")


if __name__ == "__main__":
    main()
