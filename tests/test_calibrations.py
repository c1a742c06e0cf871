"""The three calibrations act in the engine, the same way for any model.

Every test here runs at a stage boundary (the engine's weighing, the monitor's clustering, the
constraint score, a whole run) with the content-free test model or a function model, so none
rests on the offline stand-in's judgement.
"""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

from hivemind_lab import Calibrations, Limits
from hivemind_lab.agents.prompts import Task
from hivemind_lab.agents.schemas import (
    Concern,
    CritiqueOutput,
    CritiquePoint,
    CritiqueTask,
    OptionStance,
    PointRef,
    ReceivedCritique,
    ReviseTask,
    RevisionOutput,
    ScoreOutput,
    SolutionView,
    Stance,
)
from hivemind_lab.agents.testing import FunctionModel, answer
from hivemind_lab.deliberation.monitor import cluster_labels, solution_similarity
from hivemind_lab.deliberation.practicality import constraint_score
from hivemind_lab.deliberation.stances import decision_distance
from hivemind_lab.deliberation.theory import (
    BAR_TOLERANCE,
    SOURCE_SHARE,
    UNGROUNDED,
    Licence,
    Weighing,
    bar,
    hold_unanswered,
    licence,
    reach,
    weigh_points,
)
from hivemind_lab.runs.audit import read_records
from hivemind_lab.runs.results import Solution
from tests.support import run, staged

# -- the spec's loop: a debate always happens ------------------------------------------------------


def test_a_critique_and_revise_round_runs_before_the_monitor_may_halt(tmp_path, grocer, test_model):
    # Sufficiency far above the number of agents: the monitor would halt the proposals.
    debated = run(tmp_path / "one", grocer, model=test_model, sufficiency=50)
    assert debated.status == "converged" and debated.rounds == 1
    assert [m.round for m in debated.metrics] == [0, 1]
    kinds = [r.kind for r in read_records(tmp_path / "one" / "audit.jsonl")]
    assert kinds.index("theory.critique") < kinds.index("theory.revision")
    assert kinds.index("theory.revision") < kinds.index("practicality.score")
    manifest = json.loads((tmp_path / "one" / "manifest.json").read_text())
    assert manifest["limits"]["min_rounds"] == 1
    two = run(
        tmp_path / "two", grocer, model=test_model, sufficiency=50, limits=Limits(min_rounds=2)
    )
    assert two.rounds == 2
    today = run(
        tmp_path / "zero", grocer, model=test_model, sufficiency=50, limits=Limits(min_rounds=0)
    )
    assert today.rounds == 0 and [m.round for m in today.metrics] == [0]


def test_min_rounds_cannot_exceed_max_rounds():
    with pytest.raises(ValueError, match="min_rounds"):
        Limits(min_rounds=3, max_rounds=2)


# -- stubbornness: which points clear an agent's bar ---------------------------------------------


def _point(option: int, citation: str | None, strength: int, kind: str = "contradiction"):
    return CritiquePoint.model_validate(
        {
            "kind": kind,
            "option": option,
            "claim": f"{kind} on {option} ({citation})",
            "strength": strength,
            "citation": citation,
        }
    )


SHOWN = {c: frozenset({"p1", "p2", "p3", "p4", "p5", "p6"}) for c in "abcdef"}
RECEIVED = (
    # option 0: three distinct decisive passages (weight 1 - 0.25**3 ≈ 0.98)
    ReceivedCritique(critic_id="a", points=(_point(0, "p1", 5), _point(1, "p4", 4))),
    ReceivedCritique(critic_id="b", points=(_point(0, "p2", 5), _point(2, "elsewhere", 5))),
    ReceivedCritique(critic_id="c", points=(_point(0, "p3", 5), _point(3, "p5", 2, "support"))),
)
"""Option 1: one passage of strength 4 (0.6). Option 2: a decisive point citing nothing its critic
was shown (0.15). Option 3: a support point (never to answer)."""


def _classes(stubbornness: float) -> dict[int, str]:
    w = weigh_points(RECEIVED, SHOWN, stubbornness)
    out = {p.option: "must" for p in w.must_answer if p.option is not None}
    out |= {p.option: "may" for p in w.may_weigh if p.option is not None}
    out |= {p.option: "below" for p in w.below if p.option is not None}
    return out


def test_points_clear_the_bar_by_evidence_weight():
    assert _classes(0.0) == {0: "must", 1: "must", 2: "must", 3: "below"}
    assert _classes(0.5) == {0: "must", 1: "must", 2: "below", 3: "below"}
    assert _classes(0.95) == {0: "may", 1: "below", 2: "below", 3: "below"}
    assert _classes(1.0) == {0: "below", 1: "below", 2: "below", 3: "below"}


def test_a_point_near_the_bar_may_be_weighed_on_both_sides_of_it():
    weight = 0.6  # option 1's point
    line = (weight + 0.05) / (1 + 2 * BAR_TOLERANCE)  # stubbornness whose bar is 0.05 above it
    for s in (line - 0.04, line, line + 0.04):
        assert _classes(s)[1] == "may", s
    assert _classes(line - 0.1)[1] == "must" and _classes(line + 0.1)[1] == "below"


def test_a_passage_repeated_by_many_critics_counts_once():
    same = tuple(ReceivedCritique(critic_id=c, points=(_point(0, "p1", 5),)) for c in "abcdef")
    distinct = tuple(
        ReceivedCritique(critic_id=c, points=(_point(0, f"p{i + 1}", 5),))
        for i, c in enumerate("abcdef")
    )
    once = weigh_points(same, SHOWN, 0.5).must_answer[0].weight
    many = weigh_points(distinct, SHOWN, 0.5).must_answer[0].weight
    assert once == pytest.approx(SOURCE_SHARE)
    assert many > 0.99
    ungrounded = weigh_points(
        (ReceivedCritique(critic_id="a", points=(_point(0, None, 5), _point(0, "zz", 5))),),
        SHOWN,
        0.0,
    )
    assert ungrounded.must_answer[0].weight == pytest.approx(SOURCE_SHARE * UNGROUNDED)


def test_the_default_stubbornness_sits_off_the_weight_lattice():
    singles = [SOURCE_SHARE * k / 5 * g for k in range(1, 6) for g in (1.0, UNGROUNDED)]
    lattice = {
        round(1 - np.prod([1 - w for w in combo]), 9)
        for n in (1, 2, 3)
        for combo in itertools.combinations_with_replacement(singles, n)
    }
    line = bar(Calibrations().stubbornness)
    edges = (line - BAR_TOLERANCE, line + BAR_TOLERANCE)
    assert min(abs(w - e) for w in lattice for e in edges) > 1e-3  # no rounding decides


def test_a_contradiction_weighs_only_what_the_peers_backing_the_stance_leave_standing():
    against = tuple(
        ReceivedCritique(critic_id=c, points=(_point(0, f"p{i + 1}", 4),))
        for i, c in enumerate("abc")
    )
    backers = tuple(
        ReceivedCritique(critic_id=c, points=(_point(0, f"p{i + 4}", 4, "support"),))
        for i, c in enumerate("de")
    )

    def weight(received):
        w = weigh_points(received, SHOWN, 0.0)
        return next(p.weight for p in w.must_answer if p.critic_id == "a")

    lone, backed = weight(against), weight(against + backers)
    assert backed == pytest.approx(lone * 0.4**2, abs=1e-6)  # two backers of 0.6 leave 0.16
    elsewhere = tuple(  # backing is per option
        ReceivedCritique(critic_id=c, points=(_point(1, f"p{i + 4}", 4, "support"),))
        for i, c in enumerate("de")
    )
    assert weight(against + elsewhere) == pytest.approx(lone)
    # Some stubbornness moves a lone stance but not one most peers back.
    s = (backed + lone) / 2 / (1 + 2 * BAR_TOLERANCE)
    assert [p.option for p in weigh_points(against, SHOWN, s).must_answer] == [0, 0, 0]
    assert not weigh_points(against + backers, SHOWN, s).must_answer


def test_a_stance_change_is_taken_only_towards_the_critics_who_raised_it():
    before = _solution((0, "pursue"), (1, "later"))
    critics = {
        "a": _solution((0, "avoid"), (1, "pursue")),
        "b": _solution((0, "later"), (1, "pursue")),
    }
    raised = Weighing(
        must_answer=tuple(
            PointRef(critic_id=c, point=i, option=o, weight=0.9)
            for c in "ab"
            for i, o in enumerate((0, 1))
        ),
        may_weigh=(),
        below=(),
    )
    towards = _solution((0, "later"), (1, "pursue"), round=1)
    read = licence(before, towards, raised, critics)
    assert read.raised == {0, 1} and read.away == set()
    taken, held, *_ = hold_unanswered(before, towards, read, exclusive=False)
    assert taken.stances == towards.stances and held == ()
    # Ruling out the option both critics pursue answers nobody: held, the plan stands.
    away = _solution((0, "pursue"), (1, "avoid"), round=1)
    read = licence(before, away, raised, critics)
    assert read.away == {1}
    kept, held, *_ = hold_unanswered(before, away, read, exclusive=False)
    assert held == (1,) and kept.stances == before.stances and kept.round == 1
    # Below the bar nothing is raised, so nothing moves, towards the critics or not.
    silent = Weighing(must_answer=(), may_weigh=(), below=raised.must_answer)
    kept, held, *_ = hold_unanswered(
        before, towards, licence(before, towards, silent, critics), exclusive=False
    )
    assert held == (0, 1) and kept.stances == before.stances


# -- stubbornness: the engine takes only the moves a cleared point licenses ----------------------


def _solution(*stances: tuple[int, Stance], round: int = 0) -> Solution:
    return staged("t", *stances, round=round)


def _raised(*options: int) -> Licence:
    return Licence(raised=frozenset(options), away=frozenset())


def test_a_stance_change_no_cleared_point_addresses_is_not_taken():
    before = _solution((0, "pursue"), (1, "avoid"), (2, "later"))
    after = _solution((0, "later"), (1, "pursue"), (2, "avoid"), round=1)
    # One change (on option 2) no cleared point addresses: the revision is held whole, never
    # taken in part under its own words, and the reason names the option by its letter.
    kept, held, reason = hold_unanswered(before, after, _raised(0, 1), exclusive=False)
    assert held == (0, 1, 2) and kept.stances == before.stances and kept.round == 1
    assert kept.title == before.title and kept.recommendations == before.recommendations
    assert "option C" in reason
    taken, held, reason = hold_unanswered(before, after, _raised(0, 1, 2), exclusive=False)
    assert taken == after and held == () and reason == ""
    kept, held, *_ = hold_unanswered(before, after, _raised(), exclusive=False)
    assert held == (0, 1, 2) and kept.stances == before.stances and kept.round == 1
    # exclusive: the stances move together when a cleared point addresses any changed option
    taken, held, *_ = hold_unanswered(before, after, _raised(1), exclusive=True)
    assert taken.stances == after.stances and held == ()


def test_the_engine_never_writes_a_first_move_nobody_proposed():
    before = _solution((0, "pursue"), (1, "later"))
    after = _solution((0, "later"), (1, "pursue"), round=1)
    # Only the old first move is raised: taking its change alone would leave no first move.
    kept, held, *_ = hold_unanswered(before, after, _raised(0), exclusive=False)
    assert held == (0, 1) and kept.stances == before.stances  # the whole revision is held
    # Only the new first move is raised: taking it alone would pursue both.
    kept, held, *_ = hold_unanswered(before, after, _raised(1), exclusive=False)
    assert held == (0, 1) and kept.stances == before.stances


def _flipper(task: Task, seed: int | None):
    """Content-free answers, except that every revision flips every stance."""
    if not isinstance(task, ReviseTask):
        return answer(task, seed)
    flip: dict[str, Stance] = {"pursue": "avoid", "avoid": "pursue", "later": "pursue"}
    current = task.current
    return RevisionOutput(
        **current.model_dump(exclude={"stances", "recommendations"}),
        stances=[OptionStance(option=s.option, stance=flip[s.stance]) for s in current.stances],
        recommendations=[f"{r} (revised)" for r in current.recommendations],
    )


def _follower(task: Task, seed: int | None):
    """Content-free answers, except that a critic contradicts each stance it does not share
    (naming its own in the claim) and backs each it shares, and a reviser takes the critic's
    stance on every point the engine listed: a model that answers its critics."""
    if isinstance(task, CritiqueTask):
        mine = {st.option: st.stance for st in task.critic_position.stances}
        cited = task.evidence[0].id if task.evidence else None
        points = [
            CritiquePoint.model_validate(
                {
                    "kind": "support" if mine.get(st.option) == st.stance else "contradiction",
                    "option": st.option,
                    "claim": mine.get(st.option, "later"),
                    "strength": 3,
                    "citation": cited,
                }
            )
            for st in task.target.stances
        ]
        return CritiqueOutput(points=points, summary="s")
    if not isinstance(task, ReviseTask):
        return answer(task, seed)
    stances: dict[int, str] = {st.option: st.stance for st in task.current.stances}
    by_critic = {c.critic_id: c.points for c in task.critiques}
    for ref in (*task.must_answer, *task.may_weigh):
        point = by_critic[ref.critic_id][ref.point]
        if point.kind == "contradiction" and point.option is not None:
            stances[point.option] = point.claim
    current = task.current
    return RevisionOutput(
        **current.model_dump(exclude={"stances", "recommendations"}),
        stances=[
            OptionStance.model_validate({"option": o, "stance": st}) for o, st in stances.items()
        ],
        recommendations=[f"{r} (revised)" for r in current.recommendations],
    )


def _magnitudes(tmp_path, grocer, reviser, values) -> dict[float, float]:
    """The first revision round's magnitude for each stubbornness, one critique and revise
    round on the grocer with a content-free ``reviser``."""
    magnitude = {}
    for s in values:
        result = run(
            tmp_path / f"s{s}",
            grocer,
            model=FunctionModel(reviser),
            sufficiency=1,
            calibrations=Calibrations(stubbornness=s),
            limits=Limits(max_rounds=1, max_regenerations=0),
        )
        revised = [m for m in result.metrics if m.round == 1]
        assert revised, "a critique and revise round must run"
        magnitude[s] = revised[0].revision_magnitude
    return magnitude


@pytest.mark.parametrize("reviser", [_flipper, _follower])
def test_revision_magnitude_falls_as_stubbornness_rises_whatever_the_model_does(
    tmp_path, grocer, reviser
):
    magnitude = _magnitudes(tmp_path, grocer, reviser, (0.0, 0.35, 0.7, 0.95, 1.0))
    values = list(magnitude.values())
    assert values == sorted(values, reverse=True), magnitude
    assert magnitude[1.0] == 0
    if reviser is _follower:  # answering the critics moves an agent; flipping away does not
        assert magnitude[0.0] > 0, magnitude
    else:
        assert magnitude[0.0] == 0, magnitude


def _hedger(task: Task, seed: int | None):
    """Content-free answers, except that a critic contradicts each stance it does not share with
    a strength that grows with the option's index (so a higher stubbornness lists fewer
    points), and a reviser given one option to answer takes the critic's stance on it whole,
    given several hedges them all to "later": a model whose move is larger when fewer points
    are listed (what the stand-in did before the reach, 2026-12-01)."""
    if isinstance(task, CritiqueTask):
        mine = {st.option: st.stance for st in task.critic_position.stances}
        cited = task.evidence[0].id if task.evidence else None
        points = [
            CritiquePoint.model_validate(
                {
                    "kind": "contradiction",
                    "option": st.option,
                    "claim": mine.get(st.option, "avoid"),
                    "strength": 1 + st.option % 5,
                    "citation": cited,
                }
            )
            for st in task.target.stances
            if mine.get(st.option) != st.stance
        ]
        return CritiqueOutput(points=points, summary="s")
    if not isinstance(task, ReviseTask):
        return answer(task, seed)
    by_critic = {c.critic_id: c.points for c in task.critiques}
    listed = [by_critic[r.critic_id][r.point] for r in (*task.must_answer, *task.may_weigh)]
    stances: dict[int, str] = {st.option: st.stance for st in task.current.stances}
    options = {p.option for p in listed if p.option is not None}
    for point in listed:
        if point.option is not None:
            stances[point.option] = point.claim if len(options) == 1 else "later"
    current = task.current
    return RevisionOutput(
        **current.model_dump(exclude={"stances", "recommendations"}),
        stances=[
            OptionStance.model_validate({"option": o, "stance": st}) for o, st in stances.items()
        ],
        recommendations=[f"{r} (revised)" for r in current.recommendations],
    )


def test_fewer_listed_points_never_move_an_agent_further(tmp_path, grocer):
    magnitude = _magnitudes(tmp_path, grocer, _hedger, (0.0, 0.3, 0.5, 0.6, 0.7, 0.9))
    # Without the reach this model moved further at 0.6 and 0.7 (0.57, 0.58) than at 0
    # (0.5): a single listed point let it move one option all the way. The engine bounds the
    # move by what was listed; it cannot make a model that hedges move more at a lower
    # stubbornness, so between neighbouring values a small rise stays possible (0.28 -> 0.33).
    values = list(magnitude.values())
    assert max(values[1:]) <= values[0], str(magnitude)
    assert magnitude[0.0] > magnitude[0.9] == 0, str(magnitude)


def test_a_revision_moves_no_further_than_the_listed_points_reach():
    before = _solution((0, "pursue"), (1, "later"), (2, "avoid"), (3, "later"), (4, "pursue"))
    after = _solution(
        (0, "pursue"), (1, "avoid"), (2, "later"), (3, "pursue"), (4, "avoid"), round=1
    )
    whole = decision_distance(before.stances, after.stances)
    for r in sorted({round(0.05 * i, 2) for i in range(21)} | {whole}):
        licensed = Licence(raised=frozenset(range(5)), away=frozenset(), reach=r)
        solution, held, reason = hold_unanswered(before, after, licensed, exclusive=False)
        moved = decision_distance(before.stances, solution.stances)
        assert moved <= r + 1e-9, (r, moved)
        # all or nothing: the revision whole within its reach, else the previous plan whole
        assert solution == (
            after
            if r + 1e-9 >= whole
            else before.model_copy(update={"id": after.id, "round": 1, "adopted": ()})
        ), r
        assert bool(held) == bool(reason) == (r + 1e-9 < whole), r
    # exclusive: the revision is taken whole, or not at all
    before_x = _solution((0, "pursue"), (1, "avoid"))
    after_x = _solution((0, "avoid"), (1, "pursue"), round=1)
    for r, moves in ((0.9, False), (1.0, True)):
        licensed = Licence(raised=frozenset({0, 1}), away=frozenset(), reach=r)
        solution, _, *_ = hold_unanswered(before_x, after_x, licensed, exclusive=True)
        assert (solution.stances == after_x.stances) is moves


def test_the_reach_grows_with_the_evidence_listed():
    assert reach([]) == 0
    assert reach([SOURCE_SHARE]) == 1  # one decisive, grounded, undisputed passage
    weights = [0.05, 0.3, 0.12, 0.45, 0.2]
    grown = [reach(weights[:k]) for k in range(len(weights) + 1)]
    assert grown == sorted(grown) and grown[-1] <= 1
    # what the engine lists at a higher stubbornness weighs less, so it reaches less
    reaches = [weigh_points(RECEIVED, SHOWN, s).reach for s in (0.0, 0.5, 0.7, 0.95, 1.0)]
    assert reaches == sorted(reaches, reverse=True) and reaches[-1] == 0 < reaches[0]


# -- severity ------------------------------------------------------------------------------------


def _scored(anchor: int, *grades: str, mitigated: bool = False) -> ScoreOutput:
    return ScoreOutput.model_validate(
        {
            "score": anchor,
            "reason": "r",
            "concerns": [
                Concern.model_validate(
                    {"option": 0, "grade": g, "mitigated": mitigated, "text": "concern"}
                )
                for g in grades
            ],
        }
    )


def test_severity_moves_constraint_scores_monotonically_and_spreads_solutions():
    solutions = {
        "clean": _scored(85),
        "mitigated": _scored(85, "critical", mitigated=True),
        "minor": _scored(85, "minor"),
        "major": _scored(85, "major"),
        "critical": _scored(85, "critical", "major"),
    }
    by_severity = {
        sev: {name: constraint_score(out, sev) for name, out in solutions.items()}
        for sev in (0.0, 0.5, 1.0)
    }
    for name in solutions:
        row = [by_severity[sev][name] for sev in (0.0, 0.5, 1.0)]
        assert row == sorted(row, reverse=True), name
    for scores in by_severity.values():
        assert scores["clean"] == scores["mitigated"]
        assert all(0 <= v <= 100 for v in scores.values())
    # leniency keeps the model's order: a riskier plan never passes a cleaner one
    assert len(set(by_severity[0.0].values())) == 1
    risky, clean = _scored(60, "critical", "critical"), _scored(85)
    for sev in (0.0, 0.1, 0.25, 0.4, 0.5, 0.75, 1.0):
        assert constraint_score(risky, sev) < constraint_score(clean, sev), sev
    # the model's score already weighs its concerns: it stands at the neutral severity, and
    # stricter severity spreads the solutions by their unmitigated concerns
    assert set(by_severity[0.5].values()) == {85}
    strict = by_severity[1.0]
    assert strict["clean"] > strict["minor"] > strict["major"] > strict["critical"]
    # continuous in severity: a small step moves a score by a small amount
    out = solutions["major"]
    assert abs(constraint_score(out, 0.5) - constraint_score(out, 0.51)) < 1.0
    assert by_severity[1.0]["critical"] == 85 - 35 - 15  # a critical and a major concern
    assert constraint_score(_scored(30, "critical", "major"), 1.0) == 0  # clipped, never negative
    assert constraint_score(_scored(90, "critical"), 0.0) == 95  # and never above 100


# -- similarity ------------------------------------------------------------------------------------

P, L, A = "pursue", "later", "avoid"
PLANS = (
    (A, P, P, A, P),
    (P, A, A, P, A),
    (P, A, L, P, A),
    (A, L, A, A, A),
    (A, A, A, P, A),
    (A, A, A, L, A),
    (P, L, L, A, A),
    (A, P, P, P, P),
    (A, L, A, A, A),
    (A, L, A, P, A),
    (A, L, L, A, A),
    (P, A, A, A, P),
)
"""A constructed set of plans on five options: some share their first move, some their sequel,
some nothing."""
EVERY_PLAN_ON_THREE = tuple((*plan, A, A) for plan in itertools.product((P, L, A), repeat=3))
"""Every plan on the first three of the options, the rest ruled out: among them the shapes a
model writes most (one first move, with or without a sequel), which a distance that counts a
sequel by the number of options named leaves apart from every plan with another first move."""


class _WordedLikeTheirPlans:
    """Texts that read alike exactly as much as their plans decide alike (what the wording of
    real plans tends to do), so the blend of text and decision spans the whole range."""

    name = "worded-like-their-plans"
    floor = 0.0

    def __init__(self, solutions: list[SolutionView]) -> None:
        from hivemind_lab.deliberation.monitor import decision_similarity

        values, vectors = np.linalg.eigh(decision_similarity(solutions))
        self.vectors = vectors * np.sqrt(np.clip(values, 0.0, None))
        self.rows = {s.text(): i for i, s in enumerate(solutions)}

    def embed(self, texts):
        v = np.array([self.vectors[self.rows[t]] for t in texts])
        return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_cluster_count_responds_across_the_whole_threshold_range():
    """With the mean difference over the options named (until 2026-12-02) the widest flat
    stretch on this set was 0.29: every plan lumped together below it."""
    plans = PLANS + EVERY_PLAN_ON_THREE
    solutions = [
        SolutionView(
            title=f"plan {k}",
            recommendations=(f"plan {k}",),
            stances=tuple(OptionStance(option=o, stance=s) for o, s in enumerate(plan)),  # type: ignore[arg-type]
        )
        for k, plan in enumerate(plans)
    ]
    sims = solution_similarity(solutions, _WordedLikeTheirPlans(solutions))
    thresholds = [round(0.01 * i, 2) for i in range(101)]
    counts = [len(set(cluster_labels(sims, t))) for t in thresholds]
    assert counts == sorted(counts)  # never fewer conclusions at a higher threshold
    assert counts[0] == 1 and counts[-1] == len(set(plans))  # the same plan twice is one
    flats = [list(g) for _, g in itertools.groupby(range(len(counts)), key=counts.__getitem__)]
    widest = max(thresholds[g[-1]] - thresholds[g[0]] for g in flats)
    assert widest <= 0.15, counts


def test_the_decision_distance_is_continuous_not_equal_or_unequal():
    from hivemind_lab.deliberation.stances import decision_distance

    def d(a, b):
        return decision_distance(
            [OptionStance(option=o, stance=s) for o, s in enumerate(a)],  # type: ignore[arg-type]
            [OptionStance(option=o, stance=s) for o, s in enumerate(b)],  # type: ignore[arg-type]
        )

    same, sequel, swapped, apart = (
        d((P, L, A), (P, L, A)),
        d((P, L, A), (P, A, L)),
        d((P, L, A), (L, P, A)),
        d((P, A, A), (A, P, A)),
    )
    assert same == 0 < sequel < swapped < apart == 1
