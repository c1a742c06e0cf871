"""PageRank on a 10^6-edge graph: igraph against networkx in one run (target: igraph >= 20x).

Run: .venv/bin/python benchmarks/graph_pagerank.py [--edges 1000000]
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import igraph as ig
import networkx as nx
import numpy as np


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edges", type=int, default=1_000_000)
    parser.add_argument("--nodes", type=int, default=200_000)
    args = parser.parse_args()
    print(
        f"machine: {platform.node()} · {os.cpu_count()} cores · python {platform.python_version()} "
        f"· igraph {ig.__version__} · networkx {nx.__version__} · {time.strftime('%Y-%m-%d')}"
    )
    rng = np.random.default_rng(0)
    # Preferential-looking degrees: sources uniform, targets skewed (a few hub concepts).
    sources = rng.integers(0, args.nodes, args.edges)
    targets = np.minimum((rng.pareto(1.5, args.edges) * 50).astype(np.int64), args.nodes - 1)
    weights = rng.uniform(0.3, 1.0, args.edges)
    edges = list(zip(sources.tolist(), targets.tolist(), strict=True))

    start = time.perf_counter()
    g = ig.Graph(n=args.nodes, edges=edges, directed=True)
    g.es["weight"] = weights.tolist()
    build_ig = time.perf_counter() - start
    start = time.perf_counter()
    pr_ig = g.pagerank(directed=True, weights="weight", damping=0.85)
    time_ig = time.perf_counter() - start

    start = time.perf_counter()
    h = nx.DiGraph()
    h.add_nodes_from(range(args.nodes))
    h.add_weighted_edges_from(
        zip(sources.tolist(), targets.tolist(), weights.tolist(), strict=True)
    )
    build_nx = time.perf_counter() - start
    start = time.perf_counter()
    pr_nx = nx.pagerank(h, alpha=0.85, weight="weight", tol=1e-10, max_iter=200)
    time_nx = time.perf_counter() - start

    top_ig = np.argsort(pr_ig)[::-1][:10].tolist()
    top_nx = sorted(pr_nx, key=pr_nx.get, reverse=True)[:10]
    print(
        f"graph: {args.nodes:,} nodes, {g.ecount():,} edges (networkx DiGraph merges parallel "
        f"edges: {h.number_of_edges():,})"
    )
    print(f"igraph:   build {build_ig:.2f} s, PageRank {time_ig:.3f} s")
    print(f"networkx: build {build_nx:.2f} s, PageRank {time_nx:.3f} s")
    print(f"speed-up igraph vs networkx (PageRank): {time_nx / time_ig:.1f}x (target >= 20x)")
    print(f"top-10 nodes agree: {len(set(top_ig) & set(top_nx))}/10")


if __name__ == "__main__":
    main()
