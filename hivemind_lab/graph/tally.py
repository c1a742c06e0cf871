"""The consensus rule as pure functions: a contest's standing, the decision and the verdicts it
implies (see docs/design/consensus.md; the weights come from `hivemind_lab.graph.reliability`).

A *contest* is every unresolved conflict about one subject in one domain that shares an
assertion with another (so ``is A``/``is B``/``is C`` form one contest of three values). The
pairwise conflicts stay the record of who disagreed with whom; the contest is decided as one:
one ballot per voter, one winner, and verdicts derived from it, so states are consistent.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from hivemind_lab.graph.models import Resolution

FORK, SYNTHESIZE = "fork", "synthesize"


def confidence_factor(confidence: float | None) -> float:
    """How a voter's confidence in the claim it votes for scales its record weight (between
    0.5 and 1; 0.75 when it does not hold that claim). It scales, it never replaces."""
    return 0.5 + 0.5 * (0.5 if confidence is None else confidence)


@dataclass(frozen=True)
class Side:
    """An assertion competing in a contest and who holds it (asserter and corroborators)."""

    id: str
    holders: Mapping[str, float]
    """Model → its confidence in this claim."""
    created_at: str = ""


@dataclass(frozen=True)
class Pair:
    """One pairwise conflict of the contest."""

    id: str
    a_id: str
    b_id: str
    created_at: str = ""


@dataclass(frozen=True)
class Ballot:
    """One model's vote on one conflict of the contest."""

    conflict_id: str
    model: str
    resolution: Resolution
    claim: str = ""


@dataclass(frozen=True)
class Contest:
    sides: Mapping[str, Side]
    pairs: tuple[Pair, ...]
    ballots: tuple[Ballot, ...]

    @property
    def electorate(self) -> frozenset[str]:
        """Every model that holds a side."""
        return frozenset(m for s in self.sides.values() for m in s.holders)

    @property
    def voters(self) -> frozenset[str]:
        return frozenset(b.model for b in self.ballots)

    @property
    def opened_at(self) -> str:
        return min((p.created_at for p in self.pairs), default="")


def choices(contest: Contest) -> dict[str, set[str]]:
    """Each voter's ballot over the contest: the sides it accepted, ``fork`` or ``synthesize``."""
    pairs = {p.id: p for p in contest.pairs}
    out: dict[str, set[str]] = defaultdict(set)
    for b in contest.ballots:
        pair = pairs.get(b.conflict_id)
        if pair is None:
            continue
        if b.resolution == "accept_a":
            out[b.model].add(pair.a_id)
        elif b.resolution == "accept_b":
            out[b.model].add(pair.b_id)
        else:
            out[b.model].add(b.resolution)
    return out


@dataclass(frozen=True)
class Standing:
    shares: dict[str, float]
    """Choice (a side's assertion id, ``fork`` or ``synthesize``) → share: ``fork`` and
    ``synthesize`` get their share of the weight; the sides share the rest in proportion to
    their posterior."""
    weights: dict[str, float]
    """Voter → the weight its ballot carried."""
    top: str | None
    claim: str | None = None
    """The synthesized claim, when ``synthesize`` leads."""
    posterior: dict[str, float] = field(default_factory=dict)
    """Side → posterior probability that it is the true value, from the side ballots."""
    heads: dict[str, float] = field(default_factory=dict)
    """Choice → voters behind it (a voter split over several choices counts in parts)."""


def standing(
    contest: Contest,
    record_weights: Mapping[str, float],
    *,
    evidence: Mapping[str, float] | None = None,
) -> Standing:
    """Where a contest stands. A voter's weight is its record weight (log odds of its
    estimated reliability) × its confidence factor, split evenly over the distinct choices on
    its ballot. The sides' posterior is the softmax of their weight totals (independent voters,
    uniform prior over the sides), or of ``evidence`` (side → log score) when the estimate
    reads the contest with per-label confusion rows; ``fork`` and ``synthesize`` are
    procedural choices that take their share of the weight."""
    ballots = choices(contest)
    totals: dict[str, float] = defaultdict(float)
    heads: dict[str, float] = defaultdict(float)
    weights: dict[str, float] = {}
    for model, picked in sorted(ballots.items()):
        held = [contest.sides[c].holders.get(model) for c in picked if c in contest.sides]
        known = [c for c in held if c is not None]
        factor = confidence_factor(max(known) if known else None)
        weight = record_weights.get(model, 0.0) * factor
        weights[model] = round(weight, 6)
        for choice in picked:
            totals[choice] += weight / len(picked)
            heads[choice] += 1 / len(picked)
    if not ballots:
        return Standing({}, weights, None, heads=dict(heads))
    side_score = {s: totals.get(s, 0.0) for s in sorted(contest.sides)}
    if evidence is not None:
        side_score = {s: evidence.get(s, 0.0) for s in sorted(contest.sides)}
    top_score = max(side_score.values(), default=0.0)
    odds = {s: math.exp(v - top_score) for s, v in side_score.items()}
    total_odds = sum(odds.values())
    posterior = {s: round(o / total_odds, 6) for s, o in odds.items()}
    procedural = {c: totals.get(c, 0.0) for c in (FORK, SYNTHESIZE) if c in totals}
    grand = sum(totals.values())
    on_sides = sum(totals.get(s, 0.0) for s in contest.sides)
    if grand <= 0:  # only weightless voters: count heads
        grand = sum(heads.values())
        on_sides = sum(heads.get(s, 0.0) for s in contest.sides)
        procedural = {c: heads.get(c, 0.0) for c in (FORK, SYNTHESIZE) if c in heads}
    side_part = on_sides / grand if grand else 0.0
    shares = {s: round(side_part * p, 6) for s, p in posterior.items() if side_part > 0}
    shares.update({c: round(v / grand, 6) for c, v in procedural.items()})
    shares = dict(sorted(shares.items()))
    top = min(shares, key=lambda c: (-shares[c], c)) if shares else None
    claim = None
    if top == SYNTHESIZE:
        proposals = [b for b in contest.ballots if b.resolution == SYNTHESIZE and b.claim.strip()]
        best = max(proposals, key=lambda b: (weights.get(b.model, 0.0), b.claim))
        claim = best.claim
    return Standing(shares, weights, top, claim, posterior, dict(heads))


@dataclass(frozen=True)
class Rule:
    """When a contest is decided (documented in docs/design/consensus.md)."""

    phi: float
    min_votes: int
    quorum: float
    window_s: float


@dataclass(frozen=True)
class Decision:
    final: bool
    """The contest is decided; no more votes are taken."""
    ready: bool
    """Enough voters, and the electorate complete or the window closed with a quorum."""
    complete: bool
    """Every holder of a side has voted."""
    standing: Standing


def decide(contest: Contest, standing_now: Standing, rule: Rule, *, elapsed_s: float) -> Decision:
    """Decide once the electorate has spoken: at least ``min_votes`` voters and either every
    holder of a side has voted, or the voting window has passed with a quorum of holders.
    Then a side wins when its posterior reaches ``phi`` (posterior odds of at least φ against
    all other sides together) and the side ballots carry most of the weight; ``fork`` or
    ``synthesize`` win when their share of the weight reaches ``phi``. Reliability decides:
    three heads can lose to two reliable voters (docs/design/consensus.md). Until then votes
    and changes of vote are taken."""
    voters, electorate = contest.voters, contest.electorate
    complete = electorate <= voters
    turnout = len(voters & electorate) / len(electorate) if electorate else 1.0
    window_closed = elapsed_s >= rule.window_s and turnout >= rule.quorum
    ready = len(voters) >= rule.min_votes and (complete or window_closed)
    top = standing_now.top
    final = False
    if ready and top is not None:
        share = standing_now.shares[top]
        if top in (FORK, SYNTHESIZE):
            final = share >= rule.phi
        else:
            procedural = sum(standing_now.shares.get(c, 0.0) for c in (FORK, SYNTHESIZE))
            final = standing_now.posterior.get(top, 0.0) >= rule.phi and procedural < 0.5
    return Decision(final, ready, complete, standing_now)


@dataclass(frozen=True)
class Verdicts:
    survivors: frozenset[str]
    disproven: frozenset[str]
    resolutions: dict[str, str] = field(default_factory=dict)
    """Conflict id → accept_a, accept_b, superseded (a third value won), fork or synthesize."""


def verdicts(contest: Contest, winner: str, scores: Mapping[str, float]) -> Verdicts:
    """What a decided contest does to its sides and conflicts.

    The winner survives; then, by falling score, each side survives unless it conflicts with a
    survivor. A single-valued subject thus keeps exactly one value, no side is both disproven
    and surviving, and pairwise outcomes cannot form a cycle.
    """
    if winner in (FORK, SYNTHESIZE):
        return Verdicts(frozenset(), frozenset(), {p.id: winner for p in contest.pairs})
    rivals: dict[str, set[str]] = defaultdict(set)
    for p in contest.pairs:
        rivals[p.a_id].add(p.b_id)
        rivals[p.b_id].add(p.a_id)
    order = sorted(
        contest.sides.values(),
        key=lambda s: (s.id != winner, -scores.get(s.id, 0.0), s.created_at, s.id),
    )
    alive: set[str] = set()
    for side in order:
        if not rivals[side.id] & alive:
            alive.add(side.id)
    dead = set(contest.sides) - alive
    resolutions = {}
    for p in contest.pairs:
        if p.a_id in alive:
            resolutions[p.id] = "accept_a"
        elif p.b_id in alive:
            resolutions[p.id] = "accept_b"
        else:
            resolutions[p.id] = "superseded"
    return Verdicts(frozenset(alive), frozenset(dead), resolutions)


def contest_of(conflict_id: str, pairs: Iterable[Pair]) -> list[Pair]:
    """The unresolved conflicts connected to ``conflict_id`` through shared sides."""
    pairs = list(pairs)
    by_side: dict[str, list[Pair]] = defaultdict(list)
    for p in pairs:
        by_side[p.a_id].append(p)
        by_side[p.b_id].append(p)
    start = next((p for p in pairs if p.id == conflict_id), None)
    if start is None:
        return []
    seen = {start.id: start}
    frontier = [start]
    while frontier:
        p = frontier.pop()
        for side in (p.a_id, p.b_id):
            for q in by_side[side]:
                if q.id not in seen:
                    seen[q.id] = q
                    frontier.append(q)
    return sorted(seen.values(), key=lambda p: (p.created_at, p.id))
