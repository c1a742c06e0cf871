"""Deliberations and the knowledge base as a graph worth analysing, on both stores: typed
entities with readable labels, the named relations, PageRank that separates evidence, agent
triads, ideas held by one agent only, and disagreement as conflicts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hivemind_lab.errors import InputError
from hivemind_lab.experiments import ExperimentSpec, run
from hivemind_lab.experiments import graph_views as views
from hivemind_lab.experiments.graph_export import (
    EXPORT_PREDICATES,
    LABEL_CHARS,
    deliberations,
    export_runs,
    is_dissent,
    knowledge_claims,
    run_order,
    run_settings,
)
from hivemind_lab.inputs import Calibrations
from hivemind_lab.knowledge import load_documents
from hivemind_lab.runs.rundir import RunDir
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


def _copy_of_run(source: Path, folder: Path, **updates: Any) -> Path:
    """A finished run's manifest (with ``updates``: calibrations, strategy) and result."""
    run = RunDir(source)
    manifest = run.read_manifest()
    calibrations = {k: v for k, v in updates.items() if k in Calibrations.model_fields}
    others = {k: v for k, v in updates.items() if k not in calibrations}
    copy = manifest.model_copy(
        update={"calibrations": manifest.calibrations.model_copy(update=calibrations), **others}
    )
    target = RunDir(folder)
    target.path.mkdir()
    target.write_manifest(copy)
    target.write_result(run.read_result())
    return folder


def _a_deliberation(sweep: Path) -> Path:
    return next(p for p in sorted(sweep.iterdir()) if p.name.startswith("deliberation-"))


def test_runs_are_numbered_along_their_settings_not_their_folder_hashes(sweep, tmp_path):
    source = _a_deliberation(sweep)
    settings = {"similarity_threshold": 0.35, "severity": 0.5}
    folders = [
        _copy_of_run(source, tmp_path / "deliberation-0a", stubbornness=0.9, **settings),
        _copy_of_run(source, tmp_path / "deliberation-1b", stubbornness=0.1, **settings),
        _copy_of_run(source, tmp_path / "deliberation-2c", stubbornness=0.5, **settings),
    ]
    ordered = sorted(folders, key=run_order)
    assert [f.name for f in ordered] == ["deliberation-1b", "deliberation-2c", "deliberation-0a"]
    problem = RunDir(source).read_manifest().request.problem_id
    assert run_settings(ordered[0]) == f"{problem}: stubbornness 0.1, similarity 0.35, severity 0.5"


def test_runs_are_chosen_by_their_manifests_strategy_not_their_folder_name(sweep, tmp_path):
    source = _a_deliberation(sweep)
    _copy_of_run(source, tmp_path / "deliberation-ok")
    _copy_of_run(source, tmp_path / "deliberation-but-a-vote", strategy="vote")
    _copy_of_run(source, tmp_path / "renamed-by-hand")
    (tmp_path / "deliberation-unfinished").mkdir()
    assert [p.name for p in deliberations(tmp_path)] == ["deliberation-ok", "renamed-by-hand"]
