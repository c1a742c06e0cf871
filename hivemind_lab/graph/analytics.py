"""Graph analytics on data read from the store: PageRank, motifs, islands, communities.

`GraphSnapshot` reads the assertions once into memory and builds an igraph graph over entities
(one vertex per normalised subject or object, one edge per live assertion, weighted by
confidence). igraph's C core does PageRank, motif census and Leiden communities orders of
magnitude faster than pure-Python networkx (see benchmarks/graph_pagerank.py); `to_networkx`
hands the same graph to networkx users.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from hivemind_lab.graph.keys import key_terms
from hivemind_lab.graph.models import Assertion

if TYPE_CHECKING:
    import igraph as ig


@dataclass(frozen=True)
class ConflictEdge:
    id: str
    a_id: str
    b_id: str
    status: str
    domain: str
    kind: str


@dataclass
class GraphSnapshot:
    """An in-memory view of the graph for ranking and pattern mining."""

    assertions: dict[str, Assertion]
    conflicts: list[ConflictEdge]
    graph: ig.Graph
    pagerank: dict[str, float]
    word_index: dict[str, set[str]]
    by_entity: dict[str, list[str]] = field(default_factory=dict)
    created: dict[str, float] = field(default_factory=dict)
    """Creation time of each assertion (epoch seconds), parsed once."""
    changes: int = 0
    """Assertions added or changed since PageRank was last computed."""
    ranked_at: float = 0.0

    @classmethod
    def build(
        cls, assertions: Iterable[Assertion], conflicts: Iterable[ConflictEdge]
    ) -> GraphSnapshot:
        import igraph as ig  # ~0.1 s: loaded on the first analytics query, not at start-up

        snap = cls(
            {}, list(conflicts), ig.Graph(directed=True), {}, defaultdict(set), defaultdict(list)
        )
        for a in assertions:
            snap.put(a)
        snap.rerank()
        return snap

    def put(self, a: Assertion) -> None:
        """Add an assertion, or replace it (same id) with a changed version."""
        new = a.id not in self.assertions
        self.assertions[a.id] = a
        self.changes += 1
        if not new or a.status != "active":
            return
        try:
            self.created[a.id] = datetime.fromisoformat(a.created_at).timestamp()
        except ValueError:
            self.created[a.id] = 0.0
        for key in (a.subject_key, a.object_key):
            self.by_entity.setdefault(key, []).append(a.id)
            for word in key_terms(key):
                self.word_index.setdefault(word, set()).add(key)

    def rerank(self) -> None:
        """Rebuild the entity graph and its PageRank from the current assertions."""
        active = [a for a in self.assertions.values() if a.status == "active"]
        self.graph = entity_graph(active)
        self.pagerank = pagerank(self.graph)
        self.changes = 0
        self.ranked_at = time.monotonic()

    def neighbours(self, keys: set[str]) -> set[str]:
        """Entities one edge away from ``keys``."""
        out: set[str] = set()
        for key in keys:
            for assertion_id in self.by_entity.get(key, ()):
                a = self.assertions[assertion_id]
                out.update((a.subject_key, a.object_key))
        return out - keys


def entity_graph(assertions: Sequence[Assertion], *, directed: bool = True) -> ig.Graph:
    """Directed entity graph: subject → object per assertion, with edge attributes."""
    import igraph as ig

    names: dict[str, int] = {}
    edges: list[tuple[int, int]] = []
    for a in assertions:
        for key in (a.subject_key, a.object_key):
            names.setdefault(key, len(names))
        edges.append((names[a.subject_key], names[a.object_key]))
    graph = ig.Graph(n=len(names), edges=edges, directed=directed)
    graph.vs["name"] = list(names)
    graph.es["weight"] = [max(a.confidence, 1e-6) for a in assertions]
    graph.es["assertion_id"] = [a.id for a in assertions]
    graph.es["predicate"] = [a.predicate_key for a in assertions]
    graph.es["model"] = [a.source_model for a in assertions]
    graph.es["domain"] = [a.domain for a in assertions]
    return graph


def pagerank(graph: ig.Graph, *, damping: float = 0.85) -> dict[str, float]:
    """Weighted PageRank per entity name (sums to 1)."""
    if graph.vcount() == 0:
        return {}
    weights = graph.es["weight"] if graph.ecount() else None
    scores = graph.pagerank(directed=graph.is_directed(), damping=damping, weights=weights)
    return dict(zip(graph.vs["name"], scores, strict=True))


def triangle_cycles(graph: ig.Graph, limit: int = 10_000) -> list[tuple[str, str, str]]:
    """Directed 3-cycles A→B→C→A, each reported once (rotation starting at the smallest name)."""
    names = graph.vs["name"]
    simple = graph.copy().simplify(multiple=True, loops=True, combine_edges="first")
    out_sets = [set(simple.successors(v)) for v in range(simple.vcount())]
    seen: set[tuple[int, int, int]] = set()
    cycles: list[tuple[str, str, str]] = []
    for a in range(simple.vcount()):
        for b in out_sets[a]:
            for c in out_sets[b]:
                if c != a and a in out_sets[c]:
                    key = min((a, b, c), (b, c, a), (c, a, b))
                    if key not in seen:
                        seen.add(key)
                        cycles.append((names[key[0]], names[key[1]], names[key[2]]))
                        if len(cycles) >= limit:
                            return cycles
    return cycles


def motif_census(graph: ig.Graph) -> dict[str, int]:
    """Counts of connected 3-node directed motifs by shape (igraph's motif census)."""
    if graph.vcount() < 3:
        return {}
    import igraph as ig

    simple = graph.copy().simplify(multiple=True, loops=True, combine_edges="first")
    counts = simple.motifs_randesu(size=3)
    shapes = {}
    for isoclass, count in enumerate(counts):
        if count != count or count == 0:  # NaN marks disconnected classes
            continue
        pattern = ig.Graph.Isoclass(3, isoclass, directed=True)
        shapes[_shape_name(pattern)] = int(count)
    return shapes


def _shape_name(pattern: ig.Graph) -> str:
    """A readable name for a 3-node directed motif."""
    ins, outs = pattern.indegree(), pattern.outdegree()
    count = pattern.ecount()
    if count == 2 and max(ins) == 2:
        return "A->C, B->C (in-star)"
    if count == 2 and max(outs) == 2:
        return "A->B, A->C (out-star)"
    if count == 2 and not pattern.is_mutual().count(True):
        return "A->B->C (chain)"
    if count == 3 and ins == [1, 1, 1] and outs == [1, 1, 1]:
        return "A->B->C->A (cycle)"
    if count == 3 and sorted(outs) == [0, 1, 2] and sorted(ins) == [0, 1, 2]:
        return "A->B->C, A->C (feed-forward)"
    # The rest have a mutual pair: name each pair once (A<->B), not as two edges in a row,
    # so "A->B A->C B->A" reads as "A<->B, A->C".
    edges = set(pattern.get_edgelist())
    parts = []
    for i, j in ((0, 1), (0, 2), (1, 2)):
        a, b = "ABC"[i], "ABC"[j]
        if (i, j) in edges and (j, i) in edges:
            parts.append(f"{a}<->{b}")
        elif (i, j) in edges:
            parts.append(f"{a}->{b}")
        elif (j, i) in edges:
            parts.append(f"{b}->{a}")
    return ", ".join(parts)


def communities(graph: ig.Graph) -> list[list[str]]:
    """Modularity communities of the undirected, confidence-weighted entity graph.

    Uses igraph's greedy modularity optimisation, which is deterministic (Leiden and Louvain
    draw random numbers from a process-wide generator), so the same graph always yields the
    same clusters.
    """
    if graph.vcount() == 0:
        return []
    undirected = graph.as_undirected(mode="collapse", combine_edges={"weight": "sum"})
    undirected.simplify(loops=True, combine_edges={"weight": "sum"})
    if undirected.ecount() == 0:
        return [[name] for name in sorted(graph.vs["name"])]
    partition = undirected.community_fastgreedy(weights="weight").as_clustering()
    names = graph.vs["name"]
    groups = [sorted(names[v] for v in members) for members in partition]
    return sorted(groups, key=lambda g: (-len(g), g))


def islands(graph: ig.Graph, *, max_size: int = 2) -> list[list[str]]:
    """Weakly connected components of at most ``max_size`` entities."""
    if graph.vcount() == 0:
        return []
    names = graph.vs["name"]
    parts = graph.connected_components(mode="weak")
    return [[names[v] for v in part] for part in parts if len(part) <= max_size]


def to_networkx(graph: ig.Graph) -> Any:
    """The same graph as a networkx MultiDiGraph (node names as ids)."""
    import networkx as nx

    out = nx.MultiDiGraph() if graph.is_directed() else nx.MultiGraph()
    names = graph.vs["name"]
    out.add_nodes_from(names)
    for edge in graph.es:
        out.add_edge(names[edge.source], names[edge.target], **edge.attributes())
    return out
