"""Which way agents move under stubbornness, in the engine, for any model.

Two engine rules keep the agents' path from depending on which weak points clear the bar
(docs/design/calibrations.md, "Rounds to halt"): a contradiction may name the option its critic
favours `instead`, which the engine then licenses (towards the critic's own commitment on it),
and first-move changes that cross in one round are taken on the minority's side only. Every
test runs at a stage boundary with hand-built solutions or a content-free function model.
"""

from __future__ import annotations

from hivemind_lab import Calibrations, Limits
from hivemind_lab.agents.caller import AgentCaller
from hivemind_lab.agents.prompts import Task
from hivemind_lab.agents.schemas import (
    CritiqueOutput,
    CritiquePoint,
    CritiqueTask,
    DecisionContext,
    OptionStance,
    OwnCourse,
    PointRef,
    ProposalOutput,
    ProposeTask,
    ReceivedCritique,
    ReviseTask,
    RevisionOutput,
)
from hivemind_lab.agents.testing import FunctionModel, answer
from hivemind_lab.deliberation.theory import (
    Licence,
    TheoryAgent,
    Weighing,
    hold_crossings,
    hold_unanswered,
    licence,
    revise,
)
from hivemind_lab.knowledge.retrieval import Passage, RetrievalIndex
from hivemind_lab.knowledge.slicing import Slice
from hivemind_lab.runs.results import Critique, Solution
from tests.support import run, staged

_solution = staged


def _contradiction(option: int, instead: int | None) -> CritiquePoint:
    return CritiquePoint.model_validate(
        {
            "kind": "contradiction",
            "option": option,
            "claim": "c",
            "strength": 4,
            "citation": "p1",
            "instead": instead,
        }
    )


# -- a contradiction names the option its critic favours instead ----------------------------------


def test_a_contradiction_naming_the_critics_option_licenses_the_move_to_it():
    before = _solution("t", (0, "pursue"), (1, "later"))
    after = _solution("t", (0, "later"), (1, "pursue"), round=1)
    critics = {"c": _solution("c", (1, "pursue"), (2, "later"))}
    listed = Weighing(
        must_answer=(PointRef(critic_id="c", point=0, option=0, weight=0.9),),
        may_weigh=(),
        below=(),
    )
    # "Not this" alone: only the first move's option is raised; dropping it alone would leave
    # no first move, so the whole revision is held, round after round.
    silent = (ReceivedCritique(critic_id="c", points=(_contradiction(0, None),)),)
    kept, held, *_ = hold_unanswered(
        before, after, licence(before, after, listed, critics, silent), exclusive=False
    )
    assert held == (0, 1) and kept.stances == before.stances
    # "Not this, but that": the critic's first move is raised too, and the move towards it taken.
    named = (ReceivedCritique(critic_id="c", points=(_contradiction(0, 1),)),)
    read = licence(before, after, listed, critics, named)
    assert read.raised == {0, 1} and read.away == set()
    taken, held, *_ = hold_unanswered(before, after, read, exclusive=False)
    assert taken.stances == after.stances and held == ()


def _point(kind: str, option: int, stance: str | None = None) -> CritiquePoint:
    return CritiquePoint.model_validate(
        {"kind": kind, "option": option, "claim": "c", "strength": 4, "stance": stance}
    )


def test_a_move_to_the_stance_a_listed_contradiction_argues_is_taken():
    """Seen on a capable model's run (2026-12-04, the grocer sweep): told to answer a
    contradiction arguing "pursue option C" and a gap on C from a critic who plans C later, the
    reviser moved C from later to pursue, exactly as argued, and the engine refused it as
    moving away from its critics (pursue and later are equally far from their mean, and the
    float sum came out a hair further)."""
    before = _solution("t", (0, "avoid"), (1, "pursue"), (2, "later"))
    after = _solution("t", (0, "avoid"), (1, "pursue"), (2, "pursue"), round=1)
    critics = {
        "a": _solution("a", (0, "avoid"), (1, "pursue"), (2, "later")),
        "b": _solution("b", (0, "avoid"), (1, "pursue"), (2, "pursue")),
    }
    listed = Weighing(
        must_answer=(
            PointRef(critic_id="a", point=0, option=2, weight=0.9),
            PointRef(critic_id="b", point=0, option=2, weight=0.9),
        ),
        may_weigh=(),
        below=(),
    )
    received = (
        ReceivedCritique(critic_id="a", points=(_point("gap", 2),)),
        ReceivedCritique(critic_id="b", points=(_point("contradiction", 2, "pursue"),)),
    )
    read = licence(before, after, listed, critics, received)
    assert read.away == set()
    taken, held, *_ = hold_unanswered(before, after, read, exclusive=False)
    assert taken.stances == after.stances and held == ()
    # What a contradiction argues is its stated stance, even where its critic's own plan differs.
    planned_later = {**critics, "b": _solution("b", (2, "later"))}
    assert licence(before, after, listed, planned_later, received).away == set()
    # Away from every point raising C (both argue later, or the gap's critic only) is held.
    to_avoid = _solution("t", (0, "avoid"), (1, "pursue"), (2, "avoid"), round=1)
    assert licence(before, to_avoid, listed, critics, received).away == {2}


def test_the_named_option_pulls_only_as_far_as_its_critic_commits():
    before = _solution("t", (0, "pursue"))
    to_two = _solution("t", (0, "avoid"), (2, "pursue"), round=1)
    # The critic names option 2 but only plans it later: pursuing it now goes past the critic.
    critics = {"c": _solution("c", (1, "pursue"), (2, "later"))}
    listed = Weighing(
        must_answer=(PointRef(critic_id="c", point=0, option=0, weight=0.9),),
        may_weigh=(),
        below=(),
    )
    named = (ReceivedCritique(critic_id="c", points=(_contradiction(0, 2),)),)
    read = licence(before, to_two, listed, critics, named)
    assert 2 in read.away
    kept, held, *_ = hold_unanswered(before, to_two, read, exclusive=False)
    assert kept.stances == before.stances and held == (0, 2)
    # A point below the bar names nothing the engine acts on.
    below = Weighing(must_answer=(), may_weigh=(), below=listed.must_answer)
    assert licence(before, to_two, below, critics, named).raised == frozenset()


# -- first moves that cross in one round ---------------------------------------------------------


def test_crossing_first_moves_move_the_minority_only():
    before = {
        "a": _solution("a", (0, "pursue")),
        "b": _solution("b", (0, "pursue"), (1, "later")),
        "c": _solution("c", (0, "pursue")),
        "d": _solution("d", (1, "pursue")),
    }
    after = {
        "a": _solution("a", (1, "pursue"), round=1),  # majority leaves for the minority's...
        "b": _solution("b", (0, "pursue"), round=1),  # a sequel dropped: no first move changes
        "c": _solution("c", (1, "pursue"), (0, "later"), round=1),
        "d": _solution("d", (0, "pursue"), round=1),  # ...while the minority joins it
    }
    reaches = dict.fromkeys(before, 1.0)
    assert hold_crossings(before, after, reaches) == ("a", "c")
    # Without a crossing every move stands, the majority's too.
    alone = {**after, "d": before["d"]}
    assert hold_crossings(before, alone, reaches) == ()


async def test_a_revision_the_engine_cannot_take_is_asked_again_with_the_reason():
    """Title, steps and stances always come from one reply: a revision that changes a stance no
    cleared point addresses is sent back once with the reason, and the second answer is taken
    whole; a reviser that ignores the reason keeps its previous solution whole."""
    context = DecisionContext(
        problem="Which way should the grocer grow?",
        options=("expand the stores", "sell online", "cut prices"),
    )
    current = _solution("t", (0, "pursue"), (1, "avoid"), (2, "avoid"))
    critic = _solution("c", (1, "pursue"), (0, "avoid"), (2, "avoid"))
    critique = Critique(
        critic_id="c",
        target_id="t",
        target_solution_id=current.id,
        regeneration=0,
        round=0,
        points=(_contradiction(0, 1).model_copy(update={"strength": 5}),),
    )

    def reviser(complies: bool) -> tuple[FunctionModel, list[ReviseTask]]:
        asked: list[ReviseTask] = []

        def reply(task: Task, seed: int | None) -> RevisionOutput:
            assert isinstance(task, ReviseTask)
            if task.agent_id == "c":  # the critic received nothing: it keeps its plan
                return RevisionOutput(
                    title=critic.title,
                    stances=list(critic.stances),
                    recommendations=list(critic.recommendations),
                    rationale="",
                )
            asked.append(task)
            # first: moves to y as asked, and also plans z (no point raised z)
            plan = {0: "avoid", 1: "pursue", 2: "later"}
            if task.not_taken is not None and complies:
                plan[2] = "avoid"
            title = "Y then Z" if plan[2] == "later" else "Y alone"
            return RevisionOutput(
                title=f"{title} #{len(asked)}",
                stances=[OptionStance(option=o, stance=st) for o, st in plan.items()],  # type: ignore[arg-type]
                recommendations=[title],
                rationale="",
            )

        return FunctionModel(reply), asked

    for complies in (True, False):
        model, asked = reviser(complies)
        out = await revise(
            AgentCaller(model),
            [_agent("t"), _agent("c")],
            {"t": current, "c": critic},
            [critique],
            context,
            stubbornness=0.0,
            round=1,
            is_repeat=lambda view: False,
        )
        taken = out.solutions["t"]
        assert len(asked) == 2 and asked[0].not_taken is None
        reason = asked[1].not_taken
        assert reason is not None and "option C" in reason.reason
        assert reason.revision.title == "Y then Z #1"
        if complies:
            assert out.held.get("t") is None, (out.held, reason, out.weighings["t"])
            assert taken.title == "Y alone #2" and out.held.get("t") is None
            assert _plan(taken) == {1: "pursue"}
        else:  # the previous solution whole: its words and its stances
            assert (taken.title, taken.stances) == (current.title, current.stances)
            assert out.held["t"] == (0, 1, 2)


def _agent(agent_id: str) -> TheoryAgent:
    """An agent whose one passage (``p1``, the critic's citation) every option retrieves."""
    passage = Passage(
        id="p1",
        document_id="d",
        text="A grocer that grows should sell online before it can expand the stores or cut prices.",
    )
    return TheoryAgent(
        id=agent_id,
        slice=Slice(index=0, document_ids=("d",), tokens=10, deviation=0, topics=()),
        index=RetrievalIndex([passage]),
        shared=RetrievalIndex([]),
    )


def _plan(solution: Solution) -> dict[int, str]:
    return {st.option: st.stance for st in solution.stances if st.stance != "avoid"}


def test_a_tied_crossing_moves_the_side_with_the_heavier_evidence_against_it():
    before = {"a": _solution("a", (0, "pursue")), "b": _solution("b", (1, "pursue"))}
    after = {"a": _solution("a", (1, "pursue"), round=1), "b": _solution("b", (0, "pursue"))}
    assert hold_crossings(before, after, {"a": 0.4, "b": 0.9}) == ("a",)
    assert hold_crossings(before, after, {"a": 0.9, "b": 0.4}) == ("b",)
    # Equal evidence: one side still moves (the earliest agent's), so the two meet.
    assert len(hold_crossings(before, after, {"a": 0.5, "b": 0.5})) == 1


# -- a whole run: a model that moves to whatever its critics name --------------------------------


def _first(stances) -> int | None:
    return next((st.option for st in stances if st.stance == "pursue"), None)


def _joiner(task: Task, seed: int | None):
    """Content-free answers, except: every agent whose id ends in 0 or 3 proposes option 1,
    the others option 0 (a minority and a majority); a critic contradicts a first move it does
    not share, decisively and naming its own `instead`, and backs one it shares, weakly; a
    reviser moves its first move to the option named by the first contradiction the engine
    listed."""
    if isinstance(task, ProposeTask):
        option = 1 if task.agent_id[-1] in "03" else 0
        return ProposalOutput(
            title=f"option {option}",
            stances=[OptionStance(option=option, stance="pursue")],
            recommendations=[f"do option {option}"],
            rationale="r",
            citations=[e.id for e in task.evidence[:1]],
        )
    if isinstance(task, CritiqueTask):
        mine, theirs = _first(task.critic_position.stances), _first(task.target.stances)
        cited = task.evidence[0].id if task.evidence else None
        if theirs is None:
            return CritiqueOutput(points=[], summary="s")
        if mine == theirs:  # a weak, uncited backing: a majority's stance stays open to move
            point = {"kind": "support", "option": theirs, "claim": "c", "strength": 1}
        else:
            point = {"kind": "contradiction", "option": theirs, "claim": "c", "strength": 5}
            point |= {"citation": cited, "instead": mine}
        return CritiqueOutput(points=[CritiquePoint.model_validate(point)], summary="s")
    if not isinstance(task, ReviseTask):
        return answer(task, seed)
    by_critic = {c.critic_id: c.points for c in task.critiques}
    listed = [by_critic[r.critic_id][r.point] for r in (*task.must_answer, *task.may_weigh)]
    named = next((p.instead for p in listed if p.instead is not None), None)
    current = task.current
    stances = current.stances if named is None else [OptionStance(option=named, stance="pursue")]
    return RevisionOutput(
        **current.model_dump(exclude={"title", "stances", "recommendations"}),
        title=f"option {_first(stances)}",
        stances=list(stances),
        recommendations=[f"{r} (revised)" for r in current.recommendations],
    )


def test_the_minority_joins_the_majority_instead_of_swapping_with_it(tmp_path, grocer):
    def at(stubbornness: float, folder: str):
        return run(
            tmp_path / folder,
            grocer,
            model=FunctionModel(_joiner),
            sufficiency=1,
            density=4000,  # nine agents: two propose option 1, seven option 0
            calibrations=Calibrations(stubbornness=stubbornness, similarity_threshold=0.5),
            limits=Limits(max_rounds=4, max_regenerations=0),
        )

    result = at(0.0, "s0")
    # Each majority agent is contradicted by two grounded, decisive points and backed only
    # weakly, so it must answer and may move all the way: without the crossing rule the seven
    # and the two swapped places (two against seven after round 1, and so on).
    assert result.status == "converged" and result.rounds == 1, result.rounds
    (conclusion,) = result.conclusions
    assert conclusion.title == "option 0"  # the majority's first move, not the minority's
    # Nothing moves at stubbornness 1, so the two sides never meet.
    stuck = at(1.0, "s1")
    assert stuck.status == "non_converged" and stuck.rounds == 4


def test_a_crossing_never_keeps_agents_on_a_forbidden_first_move():
    """Three agents leave option 0, which a binding constraint forbids, while one moves onto
    it: the majority rule would hold the three on the forbidden option; they move instead."""
    before = {a: _solution(a, (0, "pursue"), (1, "avoid")) for a in ("a", "b", "c")}
    before["d"] = _solution("d", (0, "avoid"), (1, "pursue"))
    after = {a: _solution(a, (0, "avoid"), (1, "pursue"), round=1) for a in ("a", "b", "c")}
    after["d"] = _solution("d", (0, "pursue"), (1, "avoid"), round=1)
    reaches = dict.fromkeys(before, 1.0)
    assert set(hold_crossings(before, after, reaches)) == {"a", "b", "c"}
    assert set(hold_crossings(before, after, reaches, frozenset({0}))) == {"d"}


def test_on_an_open_question_a_changed_course_is_taken_when_a_point_cleared_the_bar():
    def course(action: str, round: int) -> Solution:
        return _solution("t", round=round).model_copy(update={"course": OwnCourse(action=action)})

    before, after = course("Open a second shop.", 0), course("Sell online first.", 1)
    cleared = Licence(raised=frozenset(), away=frozenset(), reach=1.0, listed=True)
    taken, held, *_ = hold_unanswered(before, after, cleared, exclusive=False)
    assert taken.course == after.course and held == ()
    nothing = Licence(raised=frozenset(), away=frozenset(), reach=0.0, listed=False)
    kept, _, *_ = hold_unanswered(before, after, nothing, exclusive=False)
    assert kept.course == before.course


async def test_a_reviser_of_an_open_question_is_shown_its_own_course():
    """On an open question the plan is its course: the revise task carries it (a recorded
    capable-model run was shown ``course: null`` and had to write its course again)."""
    context = DecisionContext(problem="How should the museum approach the next five years?")
    own = OwnCourse(action="Run a scenario session, then decide on the grant by March.")
    current = _solution("t").model_copy(update={"course": own})
    asked: list[ReviseTask] = []

    def reply(task: Task, seed: int | None) -> RevisionOutput:
        assert isinstance(task, ReviseTask)
        asked.append(task)
        return RevisionOutput(
            title="t", course=task.current.course, recommendations=["r"], rationale=""
        )

    out = await revise(
        AgentCaller(FunctionModel(reply)),
        [_agent("t")],
        {"t": current},
        [],
        context,
        stubbornness=0.3,
        round=1,
        is_repeat=lambda view: False,
    )
    assert asked[0].current.course == own
    assert out.solutions["t"].course == own
