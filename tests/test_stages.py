"""Each stage at its boundary: the data it takes, the data it returns.

The monitor and the aggregate are pure: they get solutions built here. Practicality calls a
model: it gets the content-free test model or a function written by the test, so what is
checked is the stage's own arithmetic (severity, identical solutions asked once, the binding
veto, the feasibility veto at its exact boundary), never a model's judgement.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from hivemind_lab.agents.caller import AgentCaller
from hivemind_lab.agents.prompts import Task
from hivemind_lab.agents.schemas import (
    BindingConstraint,
    Concern,
    DecisionContext,
    OptionStance,
    ScoreOutput,
    ScoreTask,
    Stance,
    Violation,
)
from hivemind_lab.agents.testing import FunctionModel
from hivemind_lab.deliberation import monitor, practicality
from hivemind_lab.deliberation.embedders import TfidfEmbedder
from hivemind_lab.runs.results import ConstraintScore, Solution
from tests.support import REPO

PRACTICALITY = REPO / "data" / "practicality"
EMBEDDER = TfidfEmbedder()
RAISE = "raise prices on the premium range and fund a loyalty scheme"
MATCH = "match the discounter's prices on staples and cut store opening hours"


def solution(agent: str, text: str, stances: Sequence[Stance] = (), *, cite: str = "") -> Solution:
    return Solution(
        id=f"g0.r0.{agent}",
        agent_id=agent,
        regeneration=0,
        round=0,
        title=text[:30],
        recommendations=(text,),
        rationale=f"rationale of {agent}",
        citations=(cite,) if cite else (),
        stances=tuple(OptionStance(option=i, stance=s) for i, s in enumerate(stances)),  # type: ignore[arg-type]
    )


# -- monitor ---------------------------------------------------------------------------------
def test_cluster_solutions_partitions_the_solutions_in_order_of_first_appearance():
    solutions = [
        solution("a", RAISE, ["pursue", "avoid"]),
        solution("b", MATCH, ["avoid", "pursue"]),
        solution("c", RAISE, ["pursue", "avoid"]),
    ]
    clusters = monitor.cluster_solutions(solutions, 0.8, EMBEDDER)
    assert [c.solution_ids for c in clusters] == [("g0.r0.a", "g0.r0.c"), ("g0.r0.b",)]
    assert [c.agent_ids for c in clusters] == [("a", "c"), ("b",)]
    assert [c.index for c in clusters] == [0, 1]
    assert clusters[0].representative_id in clusters[0].solution_ids
    assert clusters[0].cohesion == pytest.approx(1.0) and clusters[1].cohesion == 1.0
    assert monitor.cluster_solutions([], 0.8, EMBEDDER) == ()


def test_a_low_threshold_lumps_what_a_high_one_splits():
    solutions = [
        solution("a", RAISE, ["pursue", "later"]),
        solution("b", RAISE + " next year", ["pursue", "avoid"]),
        solution("c", MATCH, ["avoid", "pursue"]),
    ]
    counts = [
        len(monitor.cluster_solutions(solutions, t, EMBEDDER)) for t in (0.0, 0.5, 0.9, 0.999)
    ]
    assert counts == sorted(counts) and counts[0] == 1 and counts[-1] == 3


@pytest.mark.parametrize(("sufficiency", "halted"), [(1, False), (2, True), (3, True)])
def test_observe_halts_when_the_conclusions_are_few_enough(sufficiency, halted):
    solutions = [
        solution("a", RAISE, ["pursue", "avoid"]),
        solution("b", MATCH, ["avoid", "pursue"]),
        solution("c", RAISE, ["pursue", "avoid"]),
    ]
    report = monitor.observe(
        solutions,
        threshold=0.8,
        sufficiency=sufficiency,
        embedder=EMBEDDER,
        regeneration=1,
        round=2,
    )
    assert report.distinct_conclusions == len(report.clusters) == 2
    assert report.halted is halted
    assert (report.regeneration, report.round, report.similarity_threshold) == (1, 2, 0.8)
    assert report.embedder == EMBEDDER.name


def _score(solution_id: str, constraint: str, value: int) -> ConstraintScore:
    return ConstraintScore(constraint=constraint, solution_id=solution_id, score=value, reason="")


def test_aggregate_ranks_by_agents_then_mean_score_and_keeps_every_justification():
    solutions = [
        solution("a", RAISE, ["pursue", "avoid"], cite="doc1#p1"),
        solution("b", MATCH, ["avoid", "pursue"], cite="doc2#p1"),
        solution("c", RAISE, ["pursue", "avoid"], cite="doc3#p2"),
        solution("d", "close the weakest stores", ["avoid", "avoid"]),
    ]
    report = monitor.observe(
        solutions, threshold=0.8, sufficiency=3, embedder=EMBEDDER, regeneration=0, round=0
    )
    scores = [
        _score("g0.r0.a", "legal", 80),
        _score("g0.r0.a", "financial", 60),
        _score("g0.r0.c", "legal", 70),
        _score("g0.r0.c", "financial", 50),
        _score("g0.r0.b", "legal", 40),
        _score("g0.r0.b", "financial", 40),
        _score("g0.r0.d", "legal", 90),
        _score("g0.r0.d", "financial", 90),
    ]
    verdict = practicality.judge(scores, feasibility=50, severity=0.5, regeneration=0)
    conclusions = monitor.aggregate(report, solutions, verdict, rationales={1: "the model's"})
    assert [c.agents for c in conclusions] == [("a", "c"), ("d",), ("b",)]  # size, then mean
    first = conclusions[0]
    assert first.rank == 1 and first.scores == {"financial": 55.0, "legal": 75.0}
    assert first.mean_score == 65.0
    assert [j.citations for j in first.justifications] == [("doc1#p1",), ("doc3#p2",)]
    assert (
        "2 agent(s) (a, c)" in first.combined_rationale
        and "2 passage(s)" in first.combined_rationale
    )
    assert conclusions[2].combined_rationale == "the model's"  # cluster 1 is b's
    unscored = monitor.aggregate(report, solutions, None)
    assert [c.mean_score for c in unscored] == [0.0, 0.0, 0.0] and unscored[0].scores == {}


def test_a_conclusion_in_breach_of_a_binding_constraint_never_heads_the_list():
    """The larger cluster pursues an option a binding constraint bars: it ranks below the
    smaller lawful one, so the report never leads with a barred first move."""
    from hivemind_lab.runs.results import BindingVeto

    solutions = [
        solution("a", RAISE, ["pursue", "avoid"]),
        solution("b", RAISE, ["pursue", "avoid"]),
        solution("c", MATCH, ["avoid", "pursue"]),
    ]
    report = monitor.observe(
        solutions, threshold=0.8, sufficiency=3, embedder=EMBEDDER, regeneration=0, round=0
    )
    veto = (BindingVeto(constraint="constraint.1", option=0, by="decision"),)
    scores = [
        _score("g0.r0.a", "legal", 0).model_copy(update={"vetoes": veto}),
        _score("g0.r0.b", "legal", 0).model_copy(update={"vetoes": veto}),
        _score("g0.r0.c", "legal", 60),
    ]
    verdict = practicality.judge(scores, feasibility=10, severity=0.5, regeneration=0)
    conclusions = monitor.aggregate(report, solutions, verdict)
    assert [c.agents for c in conclusions] == [("c",), ("a", "b")]
    # without the veto, size ranks first as before
    lawful = [s.model_copy(update={"vetoes": (), "score": 70}) for s in scores[:2]] + scores[2:]
    verdict = practicality.judge(lawful, feasibility=10, severity=0.5, regeneration=0)
    assert next(c.agents for c in monitor.aggregate(report, solutions, verdict)) == ("a", "b")


# -- practicality ----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def agents() -> list[practicality.ConstraintAgent]:
    return practicality.build_constraint_agents(PRACTICALITY, ["legal", "financial"])


def scripted(answers: dict[str, ScoreOutput], asked: list[ScoreTask]) -> FunctionModel:
    """Each constraint agent answers with its scripted output, whatever the solution."""

    def reply(task: Task, seed: int | None) -> ScoreOutput:
        assert isinstance(task, ScoreTask)
        asked.append(task)
        return answers[task.constraint]

    return FunctionModel(reply)


async def score_set(agents, model, solutions, *, severity=0.5, context=None):
    views = [(s.id, s.view()) for s in solutions]
    caller = AgentCaller(model, seed=0)
    return await practicality.score_set(caller, agents, views, severity=severity, context=context)


async def test_score_set_asks_once_per_distinct_solution_and_copies_the_scores(agents):
    asked: list[ScoreTask] = []
    model = scripted(
        {
            "legal": ScoreOutput(score=70, reason="ok"),
            "financial": ScoreOutput(
                score=80,
                reason="tight",
                concerns=[
                    Concern(grade="major", text="margin"),
                    Concern(grade="minor", text="x", mitigated=True),
                ],
            ),
        },
        asked,
    )
    solutions = [solution("a", RAISE), solution("b", MATCH), solution("c", RAISE)]
    scored = await score_set(agents, model, solutions, severity=0.75)
    assert len(asked) == len(scored.scored) == 4  # 2 agents x 2 distinct solutions
    assert {t.solution_id for t in asked} == {"g0.r0.a", "g0.r0.b"}
    assert len(scored.per_solution) == 6
    by = {(s.solution_id, s.constraint): s.score for s in scored.per_solution}
    # above the neutral severity the unmitigated major concern costs half its penalty a second
    # time; the mitigated one nothing
    financial = round(80 - practicality.GRADE_PENALTY["major"] * 0.5)
    assert financial < 80
    assert by == {
        (sid, c): v
        for sid in ("g0.r0.a", "g0.r0.b", "g0.r0.c")
        for c, v in (("legal", 70), ("financial", financial))
    }


async def test_score_requests_are_byte_identical_at_every_severity(agents):
    """Severity is the engine's: the model is asked the same thing at 0 and 1, so a model's own
    variation between requests cannot pass for the calibration's effect (the local model's
    anchors moved more from one request to another than severity moved them)."""
    answer = ScoreOutput(score=80, reason="", concerns=[Concern(grade="major", text="x")])
    sent = []
    for severity in (0.0, 1.0):
        model = scripted({"legal": answer, "financial": answer}, [])
        await score_set(
            agents, model, [solution("a", RAISE), solution("b", MATCH)], severity=severity
        )
        sent.append([r.model_dump_json() for r in model.requests])
    assert len(sent[0]) == 4
    assert sent[0] == sent[1]


async def test_severity_moves_the_score_of_a_concern_continuously(agents):
    answers = {
        c: ScoreOutput(score=80, reason="", concerns=[Concern(grade="critical", text="x")])
        for c in ("legal", "financial")
    }
    got = []
    for severity in (0.0, 0.5, 1.0):
        scored = await score_set(
            agents, scripted(answers, []), [solution("a", RAISE)], severity=severity
        )
        got.append(scored.scored[0].score)
    assert got[0] > got[1] > got[2] >= 0
    # the stage applies the severity, not the model: at the neutral severity the model's score
    # (which already weighs its concerns) stands; at the extremes a concern's penalty moves it
    assert got == [90, 80, round(80 - practicality.GRADE_PENALTY["critical"])]


async def test_severity_spreads_solutions_by_their_concerns(agents):
    """The same model score for every solution; only their unmitigated concerns differ. At the
    neutral severity the model's score stands (it already weighs the concerns); stricter, the
    scores keep the concerns' order and the spread grows with severity; every concerned
    solution's score falls as severity rises."""
    concerns = {
        RAISE: [],
        MATCH: [Concern(grade="minor", text="hours")],
        "sell the chain": [Concern(grade="major", text="jobs"), Concern(grade="minor", text="x")],
        "close half the stores": [Concern(grade="critical", text="town")],
    }

    def reply(task: Task, seed: int | None) -> ScoreOutput:
        assert isinstance(task, ScoreTask)
        return ScoreOutput(score=70, reason="", concerns=concerns[task.solution.text()])

    solutions = [solution(f"s{i}", text) for i, text in enumerate(concerns)]
    rows = {}
    for severity in (0.0, 0.5, 0.75, 1.0):
        scored = await score_set(agents, FunctionModel(reply), solutions, severity=severity)
        legal = {s.solution_id: s.score for s in scored.per_solution if s.constraint == "legal"}
        rows[severity] = [legal[s.id] for s in solutions]
    assert set(rows[0.5]) == {70}
    for severity in (0.75, 1.0):
        row = rows[severity]
        assert row == sorted(row, reverse=True) and len(set(row)) == len(row), (severity, row)
    for i in range(1, len(solutions)):  # each concerned solution falls as severity rises
        assert rows[0.0][i] > rows[0.5][i] > rows[0.75][i] > rows[1.0][i] >= 0, i
    assert rows[0.5][0] == rows[1.0][0] == 70  # no concern: strictness has nothing to weigh
    # leniency gives every plan the same benefit of the doubt: it never reorders them
    assert len(set(rows[0.0])) == 1 and rows[0.0][0] > 70
    spread = [rows[sev][0] - rows[sev][-1] for sev in (0.5, 0.75, 1.0)]
    assert spread == sorted(spread) and spread[0] < spread[-1]


async def test_a_binding_constraint_vetoes_a_solution_pursuing_what_it_forbids(agents, test_model):
    context = DecisionContext(
        problem="p",
        options=("raise prices", "match prices"),
        constraints=(
            BindingConstraint(
                id="constraint.1", text="no price matching", kind="legal", forbids=(1,)
            ),
        ),
    )
    solutions = [
        solution("a", RAISE, ["pursue", "avoid"]),
        solution("b", MATCH, ["avoid", "pursue"]),
    ]
    scored = await score_set(agents, test_model, solutions, context=context)
    by = {(s.solution_id, s.constraint): s for s in scored.per_solution}
    vetoed = by["g0.r0.b", "legal"]
    assert vetoed.score == 0 and [(v.constraint, v.option, v.by) for v in vetoed.vetoes] == [
        ("constraint.1", 1, "decision")
    ]
    assert vetoed.model_score is not None  # what the model said is kept beside the veto
    assert not by["g0.r0.b", "financial"].vetoes  # the legal agent answers for a legal ban
    assert not by["g0.r0.a", "legal"].vetoes  # a plan that avoids the option stands


async def test_a_violation_the_model_marks_vetoes_only_a_pursued_option_of_a_known_constraint(
    agents,
):
    context = DecisionContext(
        problem="p",
        options=("raise prices", "match prices"),
        constraints=(BindingConstraint(id="constraint.1", text="a limit", limits=(0,)),),
    )
    violations = [
        Violation(constraint="constraint.1", option=0),
        Violation(constraint="constraint.9", option=0),  # not a constraint of the decision
        Violation(constraint="constraint.1", option=1),  # an option the plan avoids
    ]
    answers = {
        c: ScoreOutput(score=90, reason="", violations=violations) for c in ("legal", "financial")
    }
    solutions = [
        solution("a", RAISE, ["pursue", "avoid"]),
        solution("b", MATCH, ["avoid", "later"]),
    ]
    scored = await score_set(agents, scripted(answers, []), solutions, context=context)
    by = {s.solution_id: s for s in scored.per_solution if s.constraint == "legal"}
    assert by["g0.r0.a"].score == 0
    assert [(v.constraint, v.option, v.by) for v in by["g0.r0.a"].vetoes] == [
        ("constraint.1", 0, "model")
    ]
    assert by["g0.r0.b"].score == 90 and not by["g0.r0.b"].vetoes


@pytest.mark.parametrize(("feasibility", "vetoed"), [(65, True), (64, False), (66, True)])
async def test_the_set_is_vetoed_when_its_mean_score_is_at_or_below_feasibility(
    agents, feasibility, vetoed
):
    """Real scores through the stage (70 and 60: mean exactly 65): at the bar vetoes, a point
    below it passes."""
    answers = {
        "legal": ScoreOutput(score=70, reason=""),
        "financial": ScoreOutput(score=60, reason=""),
    }
    solutions = [solution("a", RAISE), solution("b", MATCH)]
    scored = await score_set(agents, scripted(answers, []), solutions)
    verdict = practicality.judge(
        scored.per_solution, feasibility=feasibility, severity=0.5, regeneration=0
    )
    assert verdict.mean_score == 65.0
    assert verdict.per_constraint == {"financial": 60.0, "legal": 70.0}
    assert verdict.vetoed is vetoed


def test_a_set_whose_every_plan_breaches_a_binding_constraint_is_vetoed():
    """However high the other constraint agents score it, a set with no lawful plan has
    nothing to recommend: it is vetoed, and regenerates."""
    from hivemind_lab.runs.results import BindingVeto

    veto = (BindingVeto(constraint="constraint.1", option=0, by="decision"),)
    scores = [
        _score("g0.r0.a", "legal", 0).model_copy(update={"vetoes": veto}),
        _score("g0.r0.a", "financial", 100),
        _score("g0.r0.b", "legal", 0).model_copy(update={"vetoes": veto}),
        _score("g0.r0.b", "financial", 100),
    ]
    verdict = practicality.judge(scores, feasibility=10, severity=0.5, regeneration=0)
    assert verdict.mean_score == 50 and verdict.vetoed
    lawful = [*scores[:2], _score("g0.r0.b", "legal", 100), scores[3]]
    assert not practicality.judge(lawful, feasibility=10, severity=0.5, regeneration=0).vetoed


def test_an_empty_set_is_not_judged():
    with pytest.raises(ValueError, match="no scores"):
        practicality.judge([], feasibility=50, severity=0.5, regeneration=0)


def test_a_cluster_shows_a_lawful_member_when_its_medoid_is_barred():
    """Two alike plans, one pursuing a barred option now: the cluster they make shows the lawful
    one (whichever is its medoid), and is not counted as in breach."""
    from hivemind_lab.runs.results import BindingVeto

    solutions = [
        solution("a", RAISE, ["pursue", "pursue"]),
        solution("b", RAISE + " in every region", ["pursue", "later"]),
    ]
    report = monitor.observe(
        solutions, threshold=0.3, sufficiency=1, embedder=EMBEDDER, regeneration=0, round=0
    )
    assert len(report.clusters) == 1
    veto = (BindingVeto(constraint="constraint.1", option=1, by="decision"),)
    barred = next(s.id for s in solutions if s.id == report.clusters[0].representative_id)
    scores = [
        _score(s.id, "legal", 0 if s.id == barred else 80).model_copy(
            update={"vetoes": veto if s.id == barred else ()}
        )
        for s in solutions
    ]
    verdict = practicality.judge(scores, feasibility=10, severity=0.5, regeneration=0)
    top = monitor.aggregate(report, solutions, verdict)[0]
    lawful = next(s for s in solutions if s.id != barred)
    assert top.recommendations == lawful.recommendations
    assert top.title == lawful.title


async def test_the_same_words_under_other_stances_are_scored_apart(agents):
    """Plans share a score only when their words and stances are the same: the same steps
    under a stance that breaches a binding constraint must get their own (vetoed) score."""
    asked: list[ScoreTask] = []
    model = scripted(
        {"legal": ScoreOutput(score=80, reason=""), "financial": ScoreOutput(score=80, reason="")},
        asked,
    )
    solutions = [
        solution("a", RAISE, ["pursue", "later"]),
        solution("b", RAISE, ["pursue", "pursue"]),
    ]
    scored = await score_set(agents, model, solutions)
    assert len(asked) == 4 and len(scored.scored) == 4
