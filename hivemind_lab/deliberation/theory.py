"""The theory network: one agent per knowledge slice; propose, critique every peer, revise.

Calls within a phase run concurrently (bounded by the caller); results are always processed in
agent order, so a run's outcome does not depend on which call finished first.
"""

from __future__ import annotations

import asyncio
import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from hivemind_lab.agents.caller import AgentCaller
from hivemind_lab.agents.schemas import (
    MAX_POINTS,
    MAX_TARGETS,
    BatchCritiqueOutput,
    BatchCritiqueTask,
    CritiqueOutput,
    CritiquePoint,
    CritiqueTarget,
    CritiqueTask,
    DecisionContext,
    Evidence,
    NotTaken,
    OptionStance,
    PointRef,
    ProposalOutput,
    ProposeTask,
    ReceivedCritique,
    RefusedProposal,
    ReviseTask,
    RevisionOutput,
    SolutionView,
)
from hivemind_lab.deliberation.binding import binding_points, first_moves_barred
from hivemind_lab.deliberation.stances import (
    COMMITMENT,
    UNNAMED,
    changed_options,
    commitments,
    decision_distance,
)
from hivemind_lab.knowledge.documents import Document
from hivemind_lab.knowledge.retrieval import RetrievalIndex, split_passages
from hivemind_lab.knowledge.slicing import Slice
from hivemind_lab.problems import AttachedDocument
from hivemind_lab.runs.results import Critique, Solution
from hivemind_lab.wire import option_letter

SHARED_TOPIC = "client-data"
"""Topic given to client-cleared and market data passages."""
MAX_ATTEMPTS = 3
"""Proposals an agent may make per phase before it abstains for refusing to stop repeating."""
REASKS = 1
"""Times a reviser is asked again, with the reason, when the engine cannot take its revision
whole (each costs one call; a model that follows the engine's weighing needs one at most)."""
EVIDENCE_K = 6
SHARED_K = 2
OPTION_K = 3
"""Passages an agent retrieves per option."""


@dataclass(frozen=True)
class TheoryAgent:
    """A theory agent: retrieval over its own slice, and over the client and market data."""

    id: str
    slice: Slice
    index: RetrievalIndex
    shared: RetrievalIndex
    titles: Mapping[str, str] = field(default_factory=dict)
    _memo: dict[tuple[str, tuple[str, ...]], tuple[Evidence, ...]] = field(
        default_factory=dict, compare=False, repr=False
    )

    def _hits(self, query: str, k: int, *, about: tuple[int, ...] = ()) -> list[Evidence]:
        return [
            Evidence.of(hit, title=self.titles.get(hit.passage.document_id, ""), about=about)
            for hit in self.index.search(query, k)
        ]

    def evidence(self, query: str, k: int = EVIDENCE_K) -> tuple[Evidence, ...]:
        """Top-k passages of the agent's own slice, then the best client/market passages."""
        shared = [Evidence.of(hit) for hit in self.shared.search(query, SHARED_K)]
        return (*self._hits(query, k), *shared)

    def option_evidence(self, problem: str, options: Sequence[str]) -> tuple[Evidence, ...]:
        """The agent's own passages on each option (problem + option as the query), each
        passage once with the options it was retrieved for. Memoised: the same evidence serves
        the agent's proposal, its critiques of every peer and its revisions."""
        key = (problem, tuple(options))
        if key in self._memo:
            return self._memo[key]
        if not options:
            found = self.evidence(problem)
        else:
            about: dict[str, list[int]] = {}
            best: dict[str, Evidence] = {}
            for i, option in enumerate(options):
                for ev in self._hits(f"{option}. {option}. {problem}", OPTION_K):
                    about.setdefault(ev.id, []).append(i)
                    if ev.id not in best or ev.score > best[ev.id].score:
                        best[ev.id] = ev
            found = tuple(best[pid].model_copy(update={"about": tuple(about[pid])}) for pid in best)
        self._memo[key] = found
        return found


def build_agents(
    slices: Sequence[Slice],
    documents: Mapping[str, Document],
    shared: Sequence[AttachedDocument] = (),
) -> list[TheoryAgent]:
    """One agent per slice; client-cleared and market data join every agent's index."""
    shared_index = RetrievalIndex(
        p for d in shared for p in split_passages(d.id, d.text, topics=(SHARED_TOPIC,))
    )
    agents = []
    for s in slices:
        passages = [
            p
            for doc_id in s.document_ids
            for p in split_passages(doc_id, documents[doc_id].text, topics=documents[doc_id].topics)
        ]
        agents.append(
            TheoryAgent(
                id=f"theory-{s.index:02d}",
                slice=s,
                index=RetrievalIndex(passages),
                shared=shared_index,
                titles={doc_id: documents[doc_id].title for doc_id in s.document_ids},
            )
        )
    return agents


RepeatCheck = Callable[[SolutionView], bool]

# -- stubbornness: which critique points a reviser must answer ------------------------------------

BAR_TOLERANCE = 0.05
"""Half-width of the band around an agent's bar: a point weighing within it may be weighed, one
above it must be answered. Without a band, weights that sit on the bar flip with rounding."""
SOURCE_SHARE = 0.75
"""The most one source (one passage) can weigh: only several distinct passages make a point
near-certain, however strongly one critic states it."""
UNGROUNDED = 0.2
"""Share of its strength a point keeps when its citation is not in the evidence its critic was
shown (cited nothing, or something else): every such point of one option and kind together
counts as one source."""


class Weighing(NamedTuple):
    """The engine's reading of the critiques one agent received."""

    must_answer: tuple[PointRef, ...]
    may_weigh: tuple[PointRef, ...]
    below: tuple[PointRef, ...]
    """Points under the bar (support points are weighed but never need an answer)."""
    reach: float = 1.0
    """How far the listed points may move the agent (`reach`): 0 with nothing listed."""


class Licence(NamedTuple):
    """Which of a revision's stance changes the critiques license."""

    raised: frozenset[int]
    """Options a point the reviser must answer or may weigh addresses."""
    away: frozenset[int]
    """Raised options whose stance changed away from the critics who raised them."""
    reach: float = 1.0
    """The most the revision may move (`revision_movement`), from the listed points' weight."""
    listed: bool = True
    """Whether any point cleared the agent's bar (on an open question, where points name no
    option, a changed course is taken only then)."""


TIE = 1e-9
"""Commitment distances closer than this are equal (thirds do not sum exactly in floats)."""


def licence(
    before: Solution,
    after: Solution,
    weighing: Weighing,
    critics: Mapping[str, Solution],
    received: Sequence[ReceivedCritique] = (),
) -> Licence:
    """Read a revision against the points that cleared the agent's bar: a change on a raised
    option answers its critics when it brings the agent's commitment on it (`stances`) nearer
    the mean commitment of the critics who raised it, or nearer the stance a listed
    contradiction on it argues (its `stance`, the stance the critic's evidence favours), and
    goes against them when it does neither (a sequel none of them holds, a first move none of
    them takes). An equal distance (within `TIE`) is no move away.

    A critique point carries its critic's evidence; answering it moves the agent towards the
    critic, not past it or elsewhere. A listed contradiction that names the option its critic
    favours `instead` raises that option too, with the same pull: towards the critic's own
    commitment on it, so an agent can be moved to an option some peer pursues and to no other
    (without it, an agent told "not this" on its first move could only drop it, and the
    engine, which never writes a first move, held the whole revision round after round).

    The argued stance counts since 2026-12-04: a capable model told to answer a contradiction
    arguing "pursue option C", beside a gap on C from a critic who planned C later, moved C to
    pursue exactly as argued and was refused as moving away (pursue and later are equally far
    from their mean, and the float sum came out a hair further).

    Args:
        received: the critiques the points of ``weighing`` refer to (for `stance` and
            `instead`).
    """
    raised: dict[int, set[str]] = {}
    argued: dict[int, list[float]] = {}
    points = {c.critic_id: c.points for c in received}
    for p in (*weighing.must_answer, *weighing.may_weigh):
        said = points.get(p.critic_id, ())
        point = said[p.point] if p.point < len(said) else None
        contradiction = point if point is not None and point.kind == "contradiction" else None
        if p.option is not None:
            raised.setdefault(p.option, set()).add(p.critic_id)
            if contradiction and contradiction.stance and contradiction.option == p.option:
                argued.setdefault(p.option, []).append(COMMITMENT[contradiction.stance])
        if contradiction and contradiction.instead is not None:
            raised.setdefault(contradiction.instead, set()).add(p.critic_id)
    old, new = commitments(before.stances), commitments(after.stances)

    def nearer(target: float, option: int) -> bool:
        """The change on ``option`` brings the agent no further from ``target``."""
        return (
            abs(new.get(option, UNNAMED) - target) <= abs(old.get(option, UNNAMED) - target) + TIE
        )

    away: set[int] = set()
    for option, ids in raised.items():
        known = [commitments(critics[c].stances).get(option, UNNAMED) for c in ids if c in critics]
        if not known:
            continue
        if nearer(sum(known) / len(known), option):
            continue
        if any(nearer(stance, option) for stance in argued.get(option, ())):
            continue
        away.add(option)
    listed = bool(weighing.must_answer or weighing.may_weigh)
    return Licence(frozenset(raised), frozenset(away), weighing.reach, listed)


def bar(stubbornness: float) -> float:
    """The evidence weight a point needs to move an agent, a straight line in stubbornness from
    just below 0 (every point clears) to just above 1 (none does), widened by the tolerance so
    that the band ends outside the 0..1 range of weights at both ends."""
    return (1.0 + 2.0 * BAR_TOLERANCE) * stubbornness - BAR_TOLERANCE


def reach(weights: Sequence[float]) -> float:
    """How far an agent may move, in decision distance (0 to 1), given the weights of the
    groups of points it must answer or may weigh: their combined weight ``1 - prod(1 - w)``
    as a share of `SOURCE_SHARE`, at most 1. One decisive, grounded passage nobody disputes
    may move an agent all the way; weaker or disputed evidence moves it less; a point more
    never moves it less.

    So the movement the engine takes scales with the evidence the agent must answer, whatever
    the model does with it: a model that re-decides its whole plan on any point it takes made a
    larger move when a higher stubbornness listed fewer, weaker points (2026-12-01, on the
    stand-in), and cooperative agents in the majority swapped places with the minority on
    weak, disputed points instead of letting the minority come to them.
    """
    combined = 1.0 - math.prod(1.0 - w for w in weights)
    return min(1.0, combined / SOURCE_SHARE)


def point_weight(point: CritiquePoint, shown: frozenset[str]) -> float:
    """A single point's weight: its stated strength (1-5) as a share of `SOURCE_SHARE`, cut to
    `UNGROUNDED` of it when its citation is not something its critic was shown."""
    grounded = point.citation is not None and point.citation in shown
    return SOURCE_SHARE * point.strength / 5 * (1.0 if grounded else UNGROUNDED)


def weigh_points(
    received: Sequence[ReceivedCritique],
    shown: Mapping[str, frozenset[str]],
    stubbornness: float,
) -> Weighing:
    """Weigh every critique point one agent received and sort it against the agent's bar.

    Points are weighed together with the others on the same option, of the same kind (and, on
    an open question, for the same course): each distinct cited passage counts once (at the strongest weight any critic gave it), however
    many critics repeat it, and the group's weight is ``1 - prod(1 - w)`` over its sources.
    A contradiction keeps only the share ``1 - support`` that the peers backing the agent's
    stance on the same option leave standing (their support points, weighed the same way):
    a stance most peers back is not overturned by one critic, a lone stance is. Without it
    every agent, majority or not, must answer every contradiction, and cooperative agents all
    jump at once and keep swapping places instead of meeting.

    Args:
        received: the critiques of the agent's solution.
        shown: critic id → the passage and fact ids that critic was shown.
        stubbornness: the agent's stubbornness (0 to 1).
    """
    sources: dict[tuple[int | None, str, str | None], dict[str, float]] = {}
    for critique in received:
        grounded = shown.get(critique.critic_id, frozenset())
        for point in critique.points:
            weight = point_weight(point, grounded)
            cited = point.citation if point.citation in grounded else None
            group = sources.setdefault((point.option, point.kind, point.course), {})
            source = cited or "ungrounded"
            group[source] = max(group.get(source, 0.0), weight)
    combined = {
        key: 1.0 - math.prod(1.0 - w for w in group.values()) for key, group in sources.items()
    }
    backing: dict[int, dict[str, float]] = {}
    for (option, kind, _), group in sources.items():
        if kind == "support" and option is not None:
            merged = backing.setdefault(option, {})
            for source, w in group.items():
                merged[source] = max(merged.get(source, 0.0), w)
    support = {o: 1.0 - math.prod(1.0 - w for w in g.values()) for o, g in backing.items()}
    for key in combined:
        option, kind, _ = key
        if kind == "contradiction" and option is not None:
            combined[key] *= 1.0 - support.get(option, 0.0)
    line = bar(stubbornness)
    must: list[PointRef] = []
    may: list[PointRef] = []
    below: list[PointRef] = []
    listed: dict[tuple[int | None, str, str | None], float] = {}
    for critique in received:
        for index, point in enumerate(critique.points[:MAX_POINTS]):
            weight = round(combined[(point.option, point.kind, point.course)], 6)
            ref = PointRef(
                critic_id=critique.critic_id, point=index, option=point.option, weight=weight
            )
            key = (point.option, point.kind, point.course)
            if point.kind == "support":
                below.append(ref)
            elif weight >= line + BAR_TOLERANCE:
                must.append(ref)
                listed[key] = weight
            elif weight > line - BAR_TOLERANCE:
                may.append(ref)
                listed[key] = weight
            else:
                below.append(ref)
    return Weighing(tuple(must), tuple(may), tuple(below), reach(list(listed.values())))


def revision_movement(before: Solution, after: Solution) -> float:
    """How far a revision moved, in [0, 1]: the decision distance between the stances before
    and after (`hivemind_lab.deliberation.stances`); on an open question (no stances), 1 when
    the course of action changed, else 0."""
    if before.stances or after.stances:
        return decision_distance(before.stances, after.stances)
    old = before.course.action if before.course else ""
    new = after.course.action if after.course else ""
    return 0.0 if old == new else 1.0


class Hold(NamedTuple):
    """What the engine takes of a revision: the revision whole, or the previous solution whole."""

    solution: Solution
    held: tuple[int, ...] = ()
    """Options whose stance change was not taken (empty: the revision was taken)."""
    reason: str = ""
    """Why not, in the words the reviser is told when it is asked again (empty: taken)."""


def _letters(options: Sequence[int]) -> str:
    return ", ".join(option_letter(o) for o in options)


def hold_unanswered(
    before: Solution, after: Solution, licensed: Licence, *, exclusive: bool
) -> Hold:
    """Take a revision whole or not at all: its stance changes are taken only when each is on
    an option a point that cleared the agent's bar raised, none moves away from the critics
    who raised it (`licence`) and together they move the plan no further than the listed points
    reach (`reach`). So how far an agent moves depends on its stubbornness and on the evidence
    against it, whatever the model does with the critiques.

    The engine never edits a stance under the model's words: a solution's title, steps and
    stances always come from one reply. Until 2026-12-03 it took the licensed part of a
    revision and kept the previous stance on the rest, under the revision's text, and a report's
    headline could name another first move than the plan under it. Now a revision it cannot
    take whole is held whole, with the reason, and the caller asks the model again with it
    (`revise`). On an open question (no stances) a changed course is taken only when some point
    cleared the bar.
    """
    changed = changed_options(before.stances, after.stances)
    if not before.stances and not after.stances:
        if revision_movement(before, after) > 0 and not licensed.listed:
            return Hold(
                _kept(before, after),
                (),
                "no critique point cleared your bar, so your course of action stays as it was",
            )
        return Hold(after)
    if not changed:
        return Hold(after)
    # On an exclusive decision the stances move together (one option pursued): a change that
    # answers one raised option carries the others with it.
    answered = changed & (licensed.raised - licensed.away)
    unraised = [] if exclusive and answered else sorted(changed - licensed.raised)
    away = sorted(changed & licensed.away)
    moved = revision_movement(before, after)
    reasons = []
    if unraised:
        reasons.append(
            f"it changes your stance on option {_letters(unraised)}, which no point you must "
            "answer or may weigh addresses"
        )
    if away:
        reasons.append(f"on option {_letters(away)} it moves away from the critics who raised it")
    if moved > licensed.reach + 1e-9:
        reasons.append(
            f"it moves your plan further ({moved:.2f} of the whole decision) than the points "
            f"listed reach ({licensed.reach:.2f}): change fewer options, or change them less"
        )
    if not reasons:
        return Hold(after)
    return Hold(_kept(before, after), tuple(sorted(changed)), "; ".join(reasons))


def hold_crossings(
    before: Mapping[str, Solution],
    after: Mapping[str, Solution],
    reaches: Mapping[str, float],
    forbidden: frozenset[int] = frozenset(),
) -> tuple[str, ...]:
    """The first-move changes of one round that cross: agents leaving first move X for Y in
    the same round as others leave Y for X. Only one side moves: a side leaving a first move
    a binding constraint forbids (``forbidden``) always moves; otherwise the one whose first move
    fewer agents took before the round (the minority joins; the majority stays); on a tie, the
    side whose movers were listed the heavier evidence (their summed `reach`) moves, and on
    equal evidence the side holding the earliest agent in order stays. The side that stays keeps
    its previous solution whole (`revise`): from 2026-12-02 to 12-03 it kept its first move under
    the rest of its revision's text, so a plan's words named another first move than its
    stances.

    Why: revisions are simultaneous, so at a low stubbornness, where weak and disputed points
    must be answered, agents most peers back left their first move for a minority's while the
    minority left its own for theirs, and the agents swapped places round after round instead
    of meeting (2026-12-02, on the stand-in; the reach bounds how far one agent moves, not
    which way the others move at the same time). This reads only stances and the engine's
    weighing, so it acts the same for every model.

    Args:
        before: agent id → the solution it revised, in agent order.
        after: agent id → the revision the engine would take (`hold_unanswered`).
        reaches: agent id → the reach of the points it was listed.
        forbidden: options a binding constraint of the decision bars as a first move (forbids,
            or allows only later: `first_moves_barred`).

    Returns:
        The agents of the sides that stay, in agent order.
    """
    old = {a: _first_moves(s.stances) for a, s in before.items() if s.stances}
    new = {a: _first_moves(after[a].stances) for a in old if a in after and after[a].stances}
    movers = {a: (old[a], new[a]) for a in new if new[a] != old[a]}
    order = {a: i for i, a in enumerate(before)}
    backers = Counter(old.values())
    held: set[str] = set()
    pairs = {frozenset(move) for move in movers.values()}
    for pair in sorted(pairs, key=lambda p: sorted(sorted(k) for k in p)):
        x, y = sorted(pair, key=sorted)
        out_x = [a for a, m in movers.items() if m == (x, y)]
        out_y = [a for a, m in movers.items() if m == (y, x)]
        if not out_x or not out_y:
            continue

        def standing(side: list[str], key: frozenset[int]) -> tuple[bool, int, float, int]:
            # the side that stays: off any forbidden option, then more backers, then less
            # evidence against it, then the side holding the earliest agent
            return (
                not key & forbidden,
                backers[key],
                -sum(reaches.get(a, 0.0) for a in side),
                -min(order[a] for a in side),
            )

        stays = out_x if standing(out_x, x) > standing(out_y, y) else out_y
        held.update(stays)
    return tuple(sorted(held, key=order.__getitem__))


def _first_moves(stances: Sequence[OptionStance]) -> frozenset[int]:
    return frozenset(st.option for st in stances if st.stance == "pursue")


def _kept(before: Solution, after: Solution) -> Solution:
    """The previous solution, under the revision's id and round."""
    return before.model_copy(update={"id": after.id, "round": after.round, "adopted": ()})


def _solution(
    agent_id: str, out: ProposalOutput, *, regeneration: int, round: int, n_options: int
) -> Solution:
    """The engine's record of a reply; stances on options the problem does not have (a model
    can name index 5 of three options: the schema's enum is fixed) are dropped, last word wins."""
    stances = {st.option: st for st in out.stances if st.option < n_options}
    return Solution(
        id=f"g{regeneration}.r{round}.{agent_id}",
        agent_id=agent_id,
        regeneration=regeneration,
        round=round,
        title=out.title,
        recommendations=tuple(out.recommendations),
        rationale=out.rationale,
        citations=tuple(out.citations),
        adopted=tuple(out.adopted) if isinstance(out, RevisionOutput) else (),
        stances=tuple(stances.values()),
        facts_used=tuple(out.facts_used),
        constraints_used=tuple(out.constraints_used),
        course=out.course,
    )


@dataclass(frozen=True)
class ProposalRound:
    solutions: dict[str, Solution]
    refused: tuple[str, ...]
    """Ids of proposals refused as repeats of vetoed solutions."""
    abstained: tuple[str, ...]
    """Agents that produced only repeats."""


def _repeat_reason(solution: Solution, excluded: Sequence[SolutionView]) -> str:
    """Why a proposal was refused as a repeat, naming the vetoed solution it repeats when its
    stances are that solution's (else the refusal came from the similarity threshold)."""
    same = [v for v in excluded if v.stances == solution.stances]
    if same:
        return f"it repeats vetoed solution {same[0].title!r}: the same stances on every option"
    return (
        "it is within the similarity threshold of a vetoed solution in `excluded`: "
        "change what it recommends, not only its words"
    )


async def propose(
    caller: AgentCaller,
    agents: Sequence[TheoryAgent],
    context: DecisionContext,
    *,
    regeneration: int,
    excluded: Sequence[SolutionView],
    is_repeat: RepeatCheck,
) -> ProposalRound:
    """Every agent proposes from its own slice; repeats of vetoed solutions are refused."""

    async def one(agent: TheoryAgent) -> tuple[Solution | None, list[str]]:
        refused: list[str] = []
        told: list[RefusedProposal] = []
        for attempt in range(MAX_ATTEMPTS):
            task = ProposeTask(
                **dict(context),
                agent_id=agent.id,
                evidence=agent.option_evidence(context.problem, context.options),
                excluded=tuple(excluded),
                attempt=attempt,
                refused=tuple(told),
            )
            out = await caller.ask(agent.id, task, ProposalOutput)
            solution = _solution(
                agent.id,
                out,
                regeneration=regeneration,
                round=0,
                n_options=len(context.options),
            )
            if not is_repeat(solution.view()):
                return solution, refused
            refused.append(f"{solution.id}#attempt{attempt}")
            told.append(RefusedProposal(title=out.title, reason=_repeat_reason(solution, excluded)))
        return None, refused

    results = await asyncio.gather(*(one(a) for a in agents))
    solutions = {a.id: s for a, (s, _) in zip(agents, results, strict=True) if s is not None}
    return ProposalRound(
        solutions=solutions,
        refused=tuple(r for _, refused in results for r in refused),
        abstained=tuple(a.id for a, (s, _) in zip(agents, results, strict=True) if s is None),
    )


async def critique(
    caller: AgentCaller,
    agents: Sequence[TheoryAgent],
    solutions: Mapping[str, Solution],
    context: DecisionContext,
    *,
    mode: str = "pairwise",
) -> list[Critique]:
    """Each agent critiques every other agent's current solution with its own evidence.

    ``pairwise`` makes N(N-1) calls; ``batched`` makes N calls carrying the same information.
    """
    active = [a for a in agents if a.id in solutions]

    def make(critic: TheoryAgent, target: TheoryAgent, points: Sequence, summary: str) -> Critique:
        sol = solutions[target.id]
        return Critique(
            critic_id=critic.id,
            target_id=target.id,
            target_solution_id=sol.id,
            regeneration=sol.regeneration,
            round=sol.round,
            points=binding_points(sol.view(), context, points),
            summary=summary,
        )

    if mode == "batched":

        async def batch(critic: TheoryAgent, peers: Sequence[TheoryAgent]) -> list[Critique]:
            task = BatchCritiqueTask(
                **dict(context),
                critic_id=critic.id,
                critic_position=solutions[critic.id].view(),
                targets=tuple(
                    CritiqueTarget(target_id=t.id, target=solutions[t.id].view()) for t in peers
                ),
                evidence=critic.option_evidence(context.problem, context.options),
            )
            out = await caller.ask(critic.id, task, BatchCritiqueOutput)
            by_target = {c.target_id: c for c in out.critiques}
            return [
                make(critic, t, by_target[t.id].points, by_target[t.id].summary)
                for t in peers
                if t.id in by_target
            ]

        # A reply holds at most MAX_TARGETS critiques: a critic of more peers asks in batches.
        calls = [
            (critic, peers[i : i + MAX_TARGETS])
            for critic in active
            for peers in [[t for t in active if t.id != critic.id]]
            for i in range(0, len(peers), MAX_TARGETS)
        ]
        nested = await asyncio.gather(*(batch(c, peers) for c, peers in calls))
        return [c for group in nested for c in group]

    async def pair(critic: TheoryAgent, target: TheoryAgent) -> Critique:
        task = CritiqueTask(
            **dict(context),
            critic_id=critic.id,
            critic_position=solutions[critic.id].view(),
            target_id=target.id,
            target=solutions[target.id].view(),
            evidence=critic.option_evidence(context.problem, context.options),
        )
        out = await caller.ask(critic.id, task, CritiqueOutput)
        return make(critic, target, out.points, out.summary)

    pairs = [(c, t) for c in active for t in active if c.id != t.id]
    return list(await asyncio.gather(*(pair(c, t) for c, t in pairs)))


@dataclass(frozen=True)
class RevisionRound:
    solutions: dict[str, Solution]
    refused: tuple[str, ...]
    """Revisions refused as repeats of vetoed solutions (the agent keeps its solution)."""
    held: dict[str, tuple[int, ...]] = field(default_factory=dict)
    """Agent id → options whose stance change the engine did not take as written (no cleared
    point addressed them, or a crossing first move was kept: `Solution.held`)."""
    movement: dict[str, float] = field(default_factory=dict)
    """Agent id → how far its solution moved (`revision_movement`, after the hold)."""
    weighings: dict[str, Weighing] = field(default_factory=dict)
    """Agent id → the engine's weighing of the critiques it received."""

    def magnitude(self) -> float:
        """The round's mean revision magnitude over its agents."""
        return sum(self.movement.values()) / len(self.movement) if self.movement else 0.0


def critics_cited(
    received: Sequence[ReceivedCritique],
    passages: Mapping[str, Evidence],
    *,
    own: frozenset[str],
) -> tuple[Evidence, ...]:
    """The passages the critiques cite that the reviser was not shown, each once in citing
    order: a point rests on them, and a reviser told to rebut "from your evidence" could not
    read what it was asked to rebut. Citations of facts or of unknown ids add nothing."""
    cited = dict.fromkeys(
        p.citation
        for c in received
        for p in c.points
        if p.citation in passages and p.citation not in own
    )
    return tuple(passages[pid] for pid in cited if pid is not None)


async def revise(
    caller: AgentCaller,
    agents: Sequence[TheoryAgent],
    solutions: Mapping[str, Solution],
    critiques: Sequence[Critique],
    context: DecisionContext,
    *,
    stubbornness: float,
    round: int,
    is_repeat: RepeatCheck,
) -> RevisionRound:
    """Each agent reads every critique of its solution and revises.

    The engine weighs the points first (`weigh_points`) and tells the reviser which it must
    answer and which it may weigh; a stance change no cleared point licenses is not taken
    (`hold_unanswered`): a revision the engine cannot take whole is sent back once with the
    reason (`ReviseTask.not_taken`, at most `REASKS` times), and when the answer still cannot be
    taken the agent keeps its previous solution whole. Of first-move changes that cross in the
    round only the minority's are taken; the majority's agents keep their previous solutions
    (`hold_crossings`). The engine never edits a stance under a model's words. All act the
    same whatever model revises.
    """
    fact_ids = frozenset(f.id for f in context.facts)
    shown = {
        a.id: frozenset(e.id for e in a.option_evidence(context.problem, context.options))
        | fact_ids
        for a in agents
    }
    passages = {
        e.id: e for a in agents for e in a.option_evidence(context.problem, context.options)
    }
    weighings: dict[str, Weighing] = {}
    held: dict[str, tuple[int, ...]] = {}

    async def one(agent: TheoryAgent) -> tuple[Solution, str | None]:
        current = solutions[agent.id]
        received = tuple(
            ReceivedCritique(critic_id=c.critic_id, points=c.points)
            for c in sorted(critiques, key=lambda c: c.critic_id)
            if c.target_id == agent.id
        )
        weighing = weigh_points(received, shown, stubbornness)
        weighings[agent.id] = weighing
        task = ReviseTask(
            **dict(context),
            agent_id=agent.id,
            current=ProposalOutput(
                title=current.title,
                stances=list(current.stances),
                recommendations=list(current.recommendations),
                rationale=current.rationale,
                citations=list(current.citations),
                facts_used=list(current.facts_used),
                constraints_used=list(current.constraints_used),
                course=current.course,
            ),
            critiques=received,
            stubbornness=stubbornness,
            must_answer=weighing.must_answer,
            may_weigh=weighing.may_weigh,
            evidence=agent.option_evidence(context.problem, context.options),
            cited=critics_cited(received, passages, own=shown[agent.id]),
        )
        licensed: Licence | None = None
        for attempt in range(REASKS + 1):
            out = await caller.ask(agent.id, task, RevisionOutput)
            written = _solution(
                agent.id,
                out,
                regeneration=current.regeneration,
                round=round,
                n_options=len(context.options),
            )
            licensed = licence(current, written, weighing, solutions, received)
            hold = hold_unanswered(current, written, licensed, exclusive=context.exclusive)
            if not hold.reason or attempt == REASKS:
                break
            task = task.model_copy(
                update={"not_taken": NotTaken(revision=written.view(), reason=hold.reason)}
            )
        revised = hold.solution
        if hold.held:
            held[agent.id] = hold.held
            revised = revised.model_copy(update={"held": hold.held})
        if is_repeat(revised.view()):
            return _kept(current, revised), revised.id
        return revised, None

    active = [a for a in agents if a.id in solutions]
    results = await asyncio.gather(*(one(a) for a in active))
    revised = {a.id: s for a, (s, _) in zip(active, results, strict=True)}
    crossed = hold_crossings(
        {a.id: solutions[a.id] for a in active},
        revised,
        {a: w.reach for a, w in weighings.items()},
        first_moves_barred(context),
    )
    for agent_id in crossed:  # the side that stays keeps its previous solution whole
        before, after = solutions[agent_id], revised[agent_id]
        options = tuple(sorted(changed_options(before.stances, after.stances)))
        held[agent_id] = tuple(sorted({*held.get(agent_id, ()), *options}))
        revised[agent_id] = _kept(before, after).model_copy(update={"held": held[agent_id]})
    return RevisionRound(
        solutions=revised,
        refused=tuple(r for _, r in results if r is not None),
        held={a.id: held[a.id] for a in active if a.id in held},
        movement={a.id: revision_movement(solutions[a.id], revised[a.id]) for a in active},
        weighings={a.id: weighings[a.id] for a in active},
    )
