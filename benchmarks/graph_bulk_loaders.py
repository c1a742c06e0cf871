"""Neo4j bulk ingest with 1 and N parallel loaders, side by side in one run.

Rows come in clusters of entities that never meet (as claims about separate topics do), so
`bulk_assert(loaders=N)` can split them into disjoint groups. Each configuration loads the same
rows into an emptied store, alternating, ``--repeats`` times; the best and median rates are
printed (target: >= 8,000 assertions/s), with the machine's load average before and after: the
server and the client share the cores, so other work on the machine shows in the rates. The
project's server is started for the run with the JVM's normal JIT and stopped after it (a
server that already runs, e.g. a test run's with the C1-only JIT, is refused unless
``--use-running``); the JVM's compiler flags are printed as read from the running process.

Run: .venv/bin/python benchmarks/graph_bulk_loaders.py [--rows 100000] [--loaders 1,2]
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import time

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--loaders", default="1,2")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cluster-entities", type=int, default=50)
    parser.add_argument(
        "--warmup",
        type=int,
        default=20_000,
        help="rows loaded and wiped once before measuring (a fresh JVM compiles as it goes)",
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
    if args.warmup:
        store.wipe()
        graph.bulk_assert(clustered_rows(random.Random(1), args.warmup, 50), model="warm")
    load_before = os.getloadavg()[0]
    for _ in range(args.repeats):
        for n in counts:
            store.wipe()
            start = time.perf_counter()
            graph.bulk_assert(rows, model="bulk", loaders=n)
            rates[n].append(len(rows) / (time.perf_counter() - start))
    store.wipe()
    store.close()
    stop_neo4j(env)
    print(f"{len(rows):,} assertions, clusters of {args.cluster_entities} entities")
    print(f"load average (1 min): {load_before:.1f} before, {os.getloadavg()[0]:.1f} after")
    print("loaders   best/s   median/s   vs 1 loader (median)")
    base = statistics.median(rates[counts[0]])
    for n in counts:
        median = statistics.median(rates[n])
        print(f"{n:>7}   {max(rates[n]):>6,.0f}   {median:>8,.0f}   {median / base:>6.2f}x")
    print("(target >= 8,000 assertions/s)")


if __name__ == "__main__":
    main()
