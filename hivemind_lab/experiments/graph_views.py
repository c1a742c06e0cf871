"""Read-outs of an exported deliberation graph for notebooks: which evidence ranks highest, how
agents agree or clash in triads, which ideas one agent alone holds, and how far agents diverge.
Pure functions over a `GraphSnapshot` (plus `HivemindGraph.divergence` for the matrix), and
`project_neo4j` to find the project's Neo4j server."""

from __future__ import annotations

import subprocess
from collections import Counter
from collections.abc import Mapping, Sequence
from itertools import combinations
from pathlib import Path

from hivemind_lab.experiments.graph_export import DOMAIN, EntityKind
from hivemind_lab.graph import GraphConfig, HivemindGraph
from hivemind_lab.graph.analytics import GraphSnapshot, entity_graph
from hivemind_lab.graph.models import Assertion

TRIADS = {
    "+++": "all three agree",
    "++-": "two pairs agree, one clashes",
    "+--": "one pair agrees, two clash",
    "---": "all three clash",
}


def live(snap: GraphSnapshot) -> list[Assertion]:
    """Active assertions of the export's domain."""
    return [a for a in snap.assertions.values() if a.status == "active" and a.domain == DOMAIN]


def labels(snap: GraphSnapshot) -> dict[str, str]:
    """Entity key → the label it was written with."""
    out: dict[str, str] = {}
    for a in snap.assertions.values():
        out.setdefault(a.subject_key, a.subject)
        out.setdefault(a.object_key, a.object)
    return out


def ranking(
    snap: GraphSnapshot, kinds: Mapping[str, EntityKind], kind: EntityKind, *, top: int = 10
) -> list[tuple[str, float]]:
    """Entities of one kind by PageRank, highest first."""
    names = labels(snap)
    rows = [
        (names[key], score)
        for key, score in snap.pagerank.items()
        if kinds.get(names.get(key, "")) == kind
    ]
    return sorted(rows, key=lambda r: (-r[1], r[0]))[:top]


def agent_signs(snap: GraphSnapshot) -> dict[tuple[str, str], str]:
    """Per pair of agents of one run, ``+`` if neither contradicts the other, ``-`` otherwise
    (from the final critiques)."""
    said: dict[tuple[str, str], set[str]] = {}
    for a in live(snap):
        if a.predicate_key in ("supports", "contradicts"):
            pair = (min(a.subject, a.object), max(a.subject, a.object))
            said.setdefault(pair, set()).add(a.predicate_key)
    return {pair: "-" if "contradicts" in kinds else "+" for pair, kinds in said.items()}


def agent_triads(snap: GraphSnapshot) -> dict[str, int]:
    """Counts of agreement/disagreement triads: triples of agents of one run whose three pairs
    all critiqued each other, by how many pairs clash (structural balance: ``+++`` and ``+--``
    are balanced, ``++-`` and ``---`` are not)."""
    signs = agent_signs(snap)
    agents = sorted({a for pair in signs for a in pair})
    counts: Counter[str] = Counter()
    for x, y, z in combinations(agents, 3):
        pairs = [(x, y), (x, z), (y, z)]
        if all(p in signs for p in pairs):
            counts["".join(sorted((signs[p] for p in pairs), key=lambda sign: sign != "+"))] += 1
    return {shape: counts[shape] for shape in TRIADS if counts[shape]}


def solitary_ideas(snap: GraphSnapshot, kinds: Mapping[str, EntityKind]) -> list[dict[str, str]]:
    """Evidence exactly one agent gives for an option (no other agent cites that document for
    that option): the ideas held by one agent only."""
    rows = [
        {"agent": a.source_model, "option": a.subject, "evidence": a.object}
        for a in live(snap)
        if a.predicate_key == "cites"
        and a.support == 1
        and kinds.get(a.subject) == "option"
        and kinds.get(a.source_model) == "agent"
    ]
    return sorted(rows, key=lambda r: (r["agent"], r["option"], r["evidence"]))


def idea_islands(snap: GraphSnapshot, kinds: Mapping[str, EntityKind]) -> list[list[str]]:
    """The solitary ideas as a graph of agent → document edges: each weakly connected
    component is an island of evidence that a single agent (or a few, if they share a
    document) brings and nobody else corroborates."""
    ideas = solitary_ideas(snap, kinds)
    if not ideas:
        return []
    edges = [
        Assertion(
            id=str(i),
            subject=r["agent"],
            predicate="cites",
            object=r["evidence"],
            confidence=1.0,
            source_model=r["agent"],
            domain=DOMAIN,
            created_at="",
            subject_key=r["agent"],
            object_key=r["evidence"],
        )
        for i, r in enumerate(ideas)
    ]
    graph = entity_graph(edges)
    names = graph.vs["name"]
    parts = graph.connected_components(mode="weak")
    return sorted(([names[v] for v in part] for part in parts), key=lambda p: (-len(p), p))


def stances(snap: GraphSnapshot) -> dict[str, dict[str, str]]:
    """Agent → option → its final stance (pursue / later / avoid), from ``option judged``."""
    held: dict[str, dict[str, str]] = {}
    for a in live(snap):
        if a.predicate_key == "judged":
            held.setdefault(a.source_model, {})[a.subject] = a.object
    return held


COMMITMENT = {"pursue": 1.0, "later": 0.5, "avoid": 0.0}
"""How much of an option a plan does: now, after something else, or not (unaddressed: not)."""


def stance_divergence(snap: GraphSnapshot, agents: Sequence[str]) -> list[list[float]]:
    """Pairwise distance of two agents' final decisions: the mean difference of their
    commitment to each option either judged (pursue 1, later 0.5, avoid or unaddressed 0).
    0 = the same decision; 1 = one pursues what the other avoids, on every option; "A then B"
    against "B then A" is 0.5. Agents of different runs of one problem compare on its options."""
    held = stances(snap)

    def score(a: str, b: str) -> float:
        x, y = held.get(a, {}), held.get(b, {})
        options = x.keys() | y.keys()
        if not options:
            return 0.0
        gaps = [abs(COMMITMENT[x.get(o, "avoid")] - COMMITMENT[y.get(o, "avoid")]) for o in options]
        return sum(gaps) / len(gaps)

    return [[round(score(a, b), 6) for b in agents] for a in agents]


def divergence_matrix(graph: HivemindGraph, models: Sequence[str]) -> list[list[float]]:
    """Pairwise divergence scores (0 = same claims, 1 = disjoint) in the export's domain."""
    return [[graph.divergence(a, b, DOMAIN).divergence_score for b in models] for a in models]


def project_neo4j(root: Path) -> GraphConfig | None:
    """The project's own Neo4j server (``scripts/neo4j start``) if it is running, else None: lets
    a notebook run the same analytics on Neo4j as on the embedded store. Its state file is read
    as data, never sourced."""
    script = root / "scripts" / "neo4j"
    state = root / ".cache" / "neo4j" / "state.env"
    if (
        not script.exists()
        or subprocess.run([str(script), "status"], capture_output=True).returncode
    ):
        return None
    values = {}
    for line in state.read_text().splitlines():
        key, sep, value = line.partition("=")
        if sep and not key.startswith("#"):
            values[key.strip()] = value.strip().strip("'\"")
    return GraphConfig(
        store="neo4j",
        neo4j_uri=values["NEO4J_URI"],
        neo4j_user=values["NEO4J_USER"],
        neo4j_password=values["NEO4J_PASSWORD"],
    )
