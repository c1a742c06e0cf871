"""Deliberations and the knowledge base as a graph worth analysing, on both stores: typed
entities with readable labels, the named relations, PageRank that separates evidence, agent
triads, ideas held by one agent only, and disagreement as conflicts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hivemind_lab.errors import InputError
from hivemind_lab.experiments import ExperimentSpec, run
from hivemind_lab.experiments import graph_views as views
from hivemind_lab.experiments.graph_export import (
    EXPORT_PREDICATES,
    LABEL_CHARS,
    export_runs,
    is_dissent,
    knowledge_claims,
    run_order,
    run_settings,
)
from hivemind_lab.knowledge import load_documents
from tests.support import KNOWLEDGE, PROBLEMS, REPO

RELATIONS = {
    "has_option",
    "has_constraint",
    "recommends",
    "judged",
    "cites",
    "supports",
    "contradicts",
    "scored_by",
    "concludes",
    "in_school",
    "dissents_from",
}


@pytest.fixture(scope="module")
def sweep(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("sweep") / "runs"
    spec = ExperimentSpec.model_validate(
        {
            "name": "export",
            "problems": [str(PROBLEMS / "regional-grocer-discounter-price-war.toml")],
            "inputs": {"sufficiency": 2, "feasibility": 40, "density": 6000},
            "limits": {"max_rounds": 2, "max_regenerations": 0},
            "space": {
                "stubbornness": [0.1, 0.9],
                "similarity_threshold": [0.35],
                "severity": [0.5],
            },
        }
    )
    run(spec, project=REPO, root=root)
    return root


def test_knowledge_base_structure_schools_and_dissents():
    documents = load_documents(KNOWLEDGE)
    claims = knowledge_claims(documents)
    in_school = [c for c in claims if c.predicate == "in_school"]
    assert len(in_school) == len(documents)
    assert {c.object for c in in_school} == {d.school for d in documents}
    dissents = [c for c in claims if c.predicate == "dissents_from"]
    dissenters = {d.id for d in documents if is_dissent(d)}
    assert dissenters and {c.evidence for c in dissents} == dissenters
    assert all(len(c.subject) <= LABEL_CHARS for c in claims)


def test_a_sweep_exports_a_graph_worth_analysing(graph_factory, sweep):
    graph = graph_factory(predicates=EXPORT_PREDICATES)
    summary = export_runs(graph, sweep, knowledge=KNOWLEDGE)
    assert summary.runs == ("run1", "run2")
    assert "stubbornness 0.1" in summary.settings["run1"]  # numbered along the grid
    assert set(summary.kinds.values()) >= {
        "problem",
        "option",
        "agent",
        "document",
        "school",
        "constraint",
    }
    snap = graph.snapshot()
    live = views.live(snap)
    assert {a.predicate_key for a in live} >= RELATIONS
    # Agents are the models holding their claims; labels are readable, never hashes.
    agents = sorted(m for m, kind in summary.kinds.items() if kind == "agent")
    assert agents[0] == "run1:theory-00"
    assert {a.source_model for a in live} >= set(agents) | {"client", "knowledge-base"}
    # PageRank separates entities: the best-ranked document well above the least.
    ranked = views.ranking(snap, summary.kinds, "document", top=100)
    assert ranked[0][1] > 1.5 * ranked[-1][1]
    assert all(not name.startswith("kb-") for name, _ in ranked)  # titles, not ids
    triads = views.agent_triads(snap)
    assert sum(triads.values()) > 0 and set(triads) <= set(views.TRIADS)
    # Ideas one agent alone holds have exactly one holder.
    for idea in views.solitary_ideas(snap, summary.kinds):
        held = [
            a
            for a in live
            if a.subject == idea["option"] and a.object == idea["evidence"] and a.support == 1
        ]
        assert [a.source_model for a in held] == [idea["agent"]]
    islands = views.idea_islands(snap, summary.kinds)
    assert sum(len(i) for i in islands) == len(
        {x for i in views.solitary_ideas(snap, summary.kinds) for x in (i["agent"], i["evidence"])}
    )
    matrix = views.divergence_matrix(graph, agents[:4])
    assert all(matrix[i][i] == 0.0 for i in range(4))
    # Stance divergence: the mean gap in commitment (pursue 1, later 0.5, avoid/unaddressed 0)
    # over the options either agent judged; 0 exactly for the same decision.
    held = views.stances(snap)
    stance = views.stance_divergence(snap, agents)
    weight = {"pursue": 1.0, "later": 0.5, "avoid": 0.0}
    for i, a in enumerate(agents):
        for j, b in enumerate(agents):
            x, y = held.get(a, {}), held.get(b, {})
            options = x.keys() | y.keys()
            gaps = [abs(weight[x.get(o, "avoid")] - weight[y.get(o, "avoid")]) for o in options]
            assert stance[i][j] == pytest.approx(sum(gaps) / max(len(gaps), 1), abs=1e-6)
            assert stance[i][j] == stance[j][i]
    assert len({v for row in stance for v in row}) > 2  # graded, not only same/different


def test_agents_that_judge_an_option_differently_are_in_conflict(graph_factory, sweep):
    graph = graph_factory(predicates=EXPORT_PREDICATES)
    export_runs(graph, sweep)
    snap = graph.snapshot()
    judged = {}
    for a in views.live(snap):
        if a.predicate_key == "judged":
            judged.setdefault(a.subject, set()).add(a.object)
    split = {option for option, stances in judged.items() if len(stances) > 1}
    assert split  # the sweep's agents do disagree on some option
    conflicts = graph.conflicts("strategy", "all")
    assert {
        c.assertion_a.subject for c in conflicts if c.assertion_a.predicate == "judged"
    } == split


def test_export_refuses_a_graph_that_would_conflict_with_itself(graph, sweep):
    with pytest.raises(InputError, match="EXPORT_PREDICATES"):
        export_runs(graph, sweep)


def _request_only_run(root: Path, name: str, stubbornness: float) -> Path:
    folder = root / name
    folder.mkdir()
    record = {
        "seq": 0,
        "ts": "2026-12-01T00:00:00+00:00",
        "actor": "client",
        "kind": "deliberation.request",
        "payload": {
            "request": {"problem_id": "p"},
            "calibrations": {
                "stubbornness": stubbornness,
                "similarity_threshold": 0.35,
                "severity": 0.5,
            },
            "seed": 0,
        },
        "prev": "0" * 64,
        "hash": "0" * 64,
    }
    (folder / "audit.jsonl").write_text(json.dumps(record) + "\n", "utf-8")
    return folder


def test_runs_are_numbered_along_their_settings_not_their_folder_hashes(tmp_path):
    folders = [
        _request_only_run(tmp_path, "deliberation-0a", 0.9),
        _request_only_run(tmp_path, "deliberation-1b", 0.1),
        _request_only_run(tmp_path, "deliberation-2c", 0.5),
    ]
    ordered = sorted(folders, key=run_order)
    assert [f.name for f in ordered] == ["deliberation-1b", "deliberation-2c", "deliberation-0a"]
    assert run_settings(ordered[0]) == "p: stubbornness 0.1, similarity 0.35, severity 0.5"
