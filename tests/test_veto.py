"""Binding constraints veto for every model: the engine zeroes a constraint agent's score for a
solution that pursues a forbidden option, whatever the model said, and the stand-in never puts
a forbidden option first."""

from __future__ import annotations

import asyncio

import pytest

from hivemind_lab.agents.caller import AgentCaller
from hivemind_lab.agents.policy import critique as offline_critique
from hivemind_lab.agents.policy import propose as offline_propose
from hivemind_lab.agents.policy import score as offline_score
from hivemind_lab.agents.prompts import Task
from hivemind_lab.agents.schemas import (
    BindingConstraint,
    CritiquePoint,
    CritiqueTask,
    DecisionContext,
    Evidence,
    OptionStance,
    ProposeTask,
    ScoreOutput,
    ScoreTask,
    SolutionView,
)
from hivemind_lab.agents.testing import FunctionModel
from hivemind_lab.deliberation.binding import binding_points, first_moves_barred
from hivemind_lab.deliberation.practicality import (
    apply_binding,
    build_constraint_agents,
    score,
)
from hivemind_lab.deliberation.theory import hold_crossings
from hivemind_lab.problems.model import Fact
from hivemind_lab.samples import PROJECT
from tests.support import staged

OPTIONS = (
    "Open a second bakery shop in the old town",
    "Sell bread online across the region",
    "Keep the single bakery shop as it is",
)
BAN = BindingConstraint(
    id="constraint.1",
    text="A regional decree bans new bakery shops in the old town.",
    kind="legal",
    forbids=(0,),
)
CAP = BindingConstraint(
    id="constraint.2",
    text="The bank covenant limits new debt for online selling to 2x EBITDA.",
    kind="financial",
    limits=(1,),
)
CONTEXT = DecisionContext(
    problem="Where should the bakery grow?", options=OPTIONS, constraints=(BAN, CAP)
)


def view(*stances: tuple[int, str]) -> SolutionView:
    return SolutionView(
        title="A plan",
        recommendations=("Do it.",),
        stances=tuple(OptionStance.model_validate({"option": o, "stance": s}) for o, s in stances),
    )


FULL = ScoreOutput.model_validate({"score": 100, "reason": "No concern at all."})
NETWORK = ("legal", "financial", "operational")


def test_forbidden_option_pursued_now_scores_zero_from_the_agent_of_its_kind() -> None:
    plan = view((0, "pursue"), (1, "avoid"))
    legal = apply_binding(100, FULL, CONTEXT, plan, agent="legal", network=NETWORK)
    financial = apply_binding(100, FULL, CONTEXT, plan, agent="financial", network=NETWORK)
    assert legal.score == 0
    assert [(v.constraint, v.option, v.by) for v in legal.vetoes] == [
        ("constraint.1", 0, "decision")
    ]
    assert financial == (100, ())


def test_without_an_agent_of_the_kind_every_agent_answers_for_the_ban() -> None:
    plan = view((0, "pursue"))
    for agent in ("social", "occupational", "reputational"):
        bound = apply_binding(
            85, FULL, CONTEXT, plan, agent=agent, network=("social", "occupational", "reputational")
        )
        assert bound.score == 0 and bound.vetoes[0].constraint == "constraint.1"


def test_an_option_only_limited_or_not_pursued_now_is_not_vetoed() -> None:
    for plan in (view((1, "pursue")), view((2, "pursue"), (0, "later")), view((0, "avoid"))):
        for agent in NETWORK:
            assert apply_binding(90, FULL, CONTEXT, plan, agent=agent, network=NETWORK) == (90, ())


def test_a_violation_the_model_marked_on_a_pursued_option_vetoes() -> None:
    marked = ScoreOutput.model_validate(
        {
            "score": 80,
            "reason": "r",
            "violations": [{"constraint": "constraint.2", "option": 1}],
        }
    )
    bound = apply_binding(80, marked, CONTEXT, view((1, "pursue")), agent="legal", network=NETWORK)
    assert bound.score == 0 and bound.vetoes[0].by == "model"
    # not pursued now, or a constraint the decision does not have: the score stands
    assert (
        apply_binding(80, marked, CONTEXT, view((1, "later")), agent="legal", network=NETWORK).score
        == 80
    )
    unknown = marked.model_copy(
        update={
            "violations": [marked.violations[0].model_copy(update={"constraint": "constraint.9"})]
        }
    )
    assert (
        apply_binding(
            80, unknown, CONTEXT, view((1, "pursue")), agent="legal", network=NETWORK
        ).score
        == 80
    )


def _always_full(task: Task, seed: int | None) -> ScoreOutput:
    assert isinstance(task, ScoreTask)
    assert task.constraints == (BAN, CAP)  # every practicality task lists them
    return FULL


def test_the_engine_vetoes_whatever_score_the_model_gave() -> None:
    agents = build_constraint_agents(PROJECT / "data" / "practicality", ["legal", "financial"])
    caller = AgentCaller(FunctionModel(_always_full))
    solutions = [("s-banned", view((0, "pursue"), (2, "avoid"))), ("s-fine", view((1, "pursue")))]
    scores = asyncio.run(score(caller, agents, solutions, severity=0.5, context=CONTEXT))
    got = {(s.constraint, s.solution_id): s for s in scores}
    banned = got["legal", "s-banned"]
    assert banned.score == 0 and banned.model_score == 100
    assert [(v.constraint, v.option) for v in banned.vetoes] == [("constraint.1", 0)]
    assert got["financial", "s-banned"].score == 100
    assert {got[c, "s-fine"].score for c in ("legal", "financial")} == {100}
    assert not got["legal", "s-fine"].vetoes


def test_the_engine_contradicts_a_forbidden_option_in_every_critique_once() -> None:
    target = view((0, "pursue"), (1, "avoid"))
    points = binding_points(target, CONTEXT)
    assert [(p.kind, p.option, p.citation, p.strength) for p in points] == [
        ("contradiction", 0, "constraint.1", 5)
    ]
    already = binding_points(target, CONTEXT, points)
    assert already == points
    assert binding_points(view((1, "pursue")), CONTEXT) == ()


# The stand-in, on a constructed problem whose evidence favours the banned option.

GROWTH = (
    "Opening a second bakery shop in the old town doubles sales: bakeries that open a second "
    "shop in a busy old town grow revenue fast and profit strongly from foot traffic.",
    "Selling bread online across the region rarely pays: online bread orders stay small, "
    "delivery costs eat the margin and most online bakery ventures fail.",
    "Keeping a single bakery shop as it is leaves growth on the table; bakeries that stand "
    "still lose customers to rivals.",
)


def _evidence() -> tuple[Evidence, ...]:
    return tuple(
        Evidence(id=f"kb.{n}", document_id=f"doc{n}", text=text, about=(n,))
        for n, text in enumerate(GROWTH)
    )


def _propose(
    constraints: tuple[BindingConstraint, ...], facts: tuple[Fact, ...] = (), *, exclusive: bool
) -> ProposeTask:
    return ProposeTask(
        problem="Should the bakery open a second shop in the old town, sell online, or keep its single shop?",
        options=OPTIONS,
        facts=facts,
        constraints=constraints,
        exclusive=exclusive,
        agent_id="theory-0",
        evidence=_evidence(),
    )


def _first(out: object) -> set[int]:
    return {s.option for s in out.stances if s.stance in ("pursue", "later")}  # type: ignore[attr-defined]


@pytest.mark.parametrize("exclusive", [True, False])
def test_the_stand_in_never_puts_a_forbidden_option_first(exclusive: bool) -> None:
    free = offline_propose(_propose((), exclusive=exclusive), 0)
    assert 0 in {s.option for s in free.stances if s.stance == "pursue"}  # the evidence favours it
    recorded = offline_propose(_propose((BAN,), exclusive=exclusive), 0)
    assert 0 not in _first(recorded)
    assert (0, "avoid") in {(s.option, s.stance) for s in recorded.stances}
    # A ban only in a fact's words is no binding constraint: the decision records it or not.
    fact = Fact(
        id="client.1",
        text="A regional decree bans any new bakery shop in the old town.",
        source="client",
    )
    read = offline_propose(_propose((), (fact,), exclusive=exclusive), 0)
    assert 0 in {s.option for s in read.stances if s.stance == "pursue"}


def test_the_stand_in_critique_and_score_see_the_ban() -> None:
    banned = view((0, "pursue"), (2, "avoid"))
    task = CritiqueTask(
        problem="p",
        options=OPTIONS,
        constraints=(BAN,),
        critic_id="theory-1",
        critic_position=view((2, "pursue")),
        target_id="theory-0",
        target=banned,
        evidence=_evidence(),
    )
    first = offline_critique(task).points[0]
    assert isinstance(first, CritiquePoint)
    assert (first.kind, first.option, first.citation) == ("contradiction", 0, "constraint.1")
    scored = offline_score(
        ScoreTask(
            problem="p",
            options=OPTIONS,
            constraints=(BAN, CAP),
            constraint="legal",
            solution_id="s",
            solution=banned,
            evidence=(),
        )
    )
    assert scored.score == 0
    assert [(v.constraint, v.option) for v in scored.violations] == [("constraint.1", 0)]
    limited = offline_score(
        ScoreTask(
            problem="p",
            options=OPTIONS,
            constraints=(BAN, CAP),
            constraint="financial",
            solution_id="s",
            solution=view((1, "pursue")),
            evidence=(),
        )
    )
    assert not limited.violations and limited.score > 0
    assert [c.basis for c in limited.concerns] == ["constraint.2"]


# A constraint that bars an option as a first move but allows it later (not_first / after):
# a dividend barred now, lawful after the leaseback.

FIRST = (
    "Sale and leaseback of the depot",
    "Pay a special dividend",
    "Raise equity with a rights issue",
)
ORDER = BindingConstraint(
    id="constraint.1",
    text="The covenant bars any distribution until the leaseback has closed.",
    kind="financial",
    not_first=(1,),
    after=0,
)
ORDERED = DecisionContext(
    problem="How do we fund the buyback?", options=FIRST, constraints=(ORDER,)
)


@pytest.mark.parametrize("model_score", [100, 85, 50])
def test_a_not_first_option_pursued_now_is_vetoed_whatever_the_score(model_score: int) -> None:
    said = ScoreOutput.model_validate({"score": model_score, "reason": "Sound and lawful."})
    for plan in (view((1, "pursue")), view((0, "pursue"), (1, "pursue"))):
        bound = apply_binding(model_score, said, ORDERED, plan, agent="financial", network=NETWORK)
        assert bound.score == 0
        assert [(v.constraint, v.option, v.by) for v in bound.vetoes] == [
            ("constraint.1", 1, "decision")
        ]


def test_a_not_first_option_sequenced_after_its_prerequisite_is_not_vetoed() -> None:
    plan = view((0, "pursue"), (1, "later"), (2, "avoid"))
    for agent in NETWORK:
        assert apply_binding(85, FULL, ORDERED, plan, agent=agent, network=NETWORK) == (85, ())
    assert binding_points(plan, ORDERED) == ()


def test_the_engine_contradicts_a_not_first_option_pursued_now_and_says_what_comes_first() -> None:
    (point,) = binding_points(view((1, "pursue"), (0, "later")), ORDERED)
    assert (point.kind, point.option, point.citation, point.strength) == (
        "contradiction",
        1,
        "constraint.1",
        5,
    )
    assert "first move" in point.claim and repr(FIRST[0]) in point.claim


_solution = staged


def test_a_crossing_side_leaving_a_not_first_option_always_moves() -> None:
    """Crossing first moves: the side leaving an option barred as a first move moves, even
    when more agents backed it (the majority would otherwise stay on it)."""
    before = {
        "a": _solution("a", (1, "pursue")),
        "b": _solution("b", (1, "pursue")),
        "c": _solution("c", (0, "pursue")),
    }
    after = {
        "a": _solution("a", (0, "pursue"), (1, "later"), round=1),
        "b": _solution("b", (1, "pursue"), round=1),
        "c": _solution("c", (1, "pursue"), round=1),
    }
    reaches = dict.fromkeys(before, 1.0)
    # unbarred, the majority leaving option 1 is held on it; barred first, it moves
    assert hold_crossings(before, after, reaches) == ("a",)
    assert hold_crossings(before, after, reaches, first_moves_barred(ORDERED)) == ("c",)
    assert first_moves_barred(ORDERED) == frozenset({1})


@pytest.mark.parametrize("exclusive", [True, False])
def test_the_stand_in_never_pursues_now_an_option_barred_as_a_first_move(exclusive: bool) -> None:
    order = BindingConstraint(
        id="constraint.1",
        text="No new bakery shop may open before online sales are running.",
        kind="legal",
        not_first=(0,),
        after=1,
    )
    out = offline_propose(_propose((order,), exclusive=exclusive), 0)
    assert 0 not in {s.option for s in out.stances if s.stance == "pursue"}  # favoured, yet not now
    banned = view((0, "pursue"), (2, "avoid"))
    scored = offline_score(
        ScoreTask(
            problem="p",
            options=OPTIONS,
            constraints=(order,),
            constraint="legal",
            solution_id="s",
            solution=banned,
            evidence=(),
        )
    )
    assert scored.score == 0 and [(v.constraint, v.option) for v in scored.violations] == [
        ("constraint.1", 0)
    ]
    sequenced = view((1, "pursue"), (0, "later"))
    later = offline_score(
        ScoreTask(
            problem="p",
            options=OPTIONS,
            constraints=(order,),
            constraint="legal",
            solution_id="s",
            solution=sequenced,
            evidence=(),
        )
    )
    assert not later.violations and later.score > 0
