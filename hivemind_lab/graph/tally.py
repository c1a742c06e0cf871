"""The consensus rule as pure functions: track-record weights, a contest's standing, the decision
and the verdicts it implies (see docs/design/consensus.md).

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


@dataclass(frozen=True)
class RecordPrior:
    """Beta prior of a model's track record: ``mean`` share of decided claims won, worth
    ``strength`` decided claims. A newcomer is trusted like a typical model, and one lucky or
    unlucky decision moves its weight only a little."""

    mean: float = 0.7
    strength: float = 4.0


def reliability(won: int, decided: int, prior: RecordPrior) -> float:
    """Smoothed share of a model's decided claims that won."""
    return (won + prior.mean * prior.strength) / (decided + prior.strength)


MIN_WEIGHT, MAX_WEIGHT = 0.05, 5.0


def record_weight(won: int, decided: int, prior: RecordPrior, *, values: int = 2) -> float:
    """Vote weight from a track record: the log-odds that the model is right against one of
    ``values - 1`` wrong alternatives, ``ln((k-1)·p/(1-p))``. This is the weight under which a
    weighted vote of independent voters picks the most probable value; it is clipped so a
    perfect record cannot dictate and a poor one still counts a little."""
    p = reliability(won, decided, prior)
    p = min(max(p, 1e-6), 1 - 1e-6)
    raw = math.log(max(1, values - 1) * p / (1 - p))
    return round(min(max(raw, MIN_WEIGHT), MAX_WEIGHT), 6)


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
    """Choice (a side's assertion id, ``fork`` or ``synthesize``) → weighted share."""
    weights: dict[str, float]
    """Voter → the weight its ballot carried."""
    top: str | None
    claim: str | None = None
    """The synthesized claim, when ``synthesize`` leads."""
    heads: dict[str, float] = field(default_factory=dict)
    """Choice → voters behind it (a voter split over several choices counts in parts)."""


def standing(contest: Contest, record_weights: Mapping[str, float]) -> Standing:
    """Weighted shares of the contest's choices. A voter's weight (track record × confidence
    factor) is split evenly over the distinct choices on its ballot."""
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
    grand = sum(totals.values())
    if grand <= 0:
        return Standing({}, weights, None, heads=dict(heads))
    shares = {c: round(t / grand, 6) for c, t in sorted(totals.items())}
    top = min(shares, key=lambda c: (-shares[c], c))
    claim = None
    if top == SYNTHESIZE:
        proposals = [b for b in contest.ballots if b.resolution == SYNTHESIZE and b.claim.strip()]
        best = max(proposals, key=lambda b: (weights.get(b.model, 0.0), b.claim))
        claim = best.claim
    return Standing(shares, weights, top, claim, dict(heads))


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
    holder of a side has voted, or the voting window has passed with a quorum of holders. Even
    then the leading choice needs a weighted share of at least ``phi`` and must have more
    voters behind it than any other choice: track records make the graph surer or more
    cautious, they never overrule a head count (measured: overruling helps where reliabilities
    differ a lot and hurts where they do not, see docs/design/consensus.md). Until then votes
    and changes of vote are taken."""
    voters, electorate = contest.voters, contest.electorate
    complete = electorate <= voters
    turnout = len(voters & electorate) / len(electorate) if electorate else 1.0
    window_closed = elapsed_s >= rule.window_s and turnout >= rule.quorum
    top = standing_now.top
    ready = len(voters) >= rule.min_votes and (complete or window_closed)
    heads = standing_now.heads
    outvoted = top is not None and any(
        n >= heads.get(top, 0.0) for c, n in heads.items() if c != top
    )
    final = ready and top is not None and standing_now.shares[top] >= rule.phi and not outvoted
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


def empirical_prior(
    counts: Mapping[str, tuple[int, int]], fallback: RecordPrior, *, max_strength: float = 1000.0
) -> RecordPrior:
    """The population's prior, estimated from the records themselves (empirical Bayes, method
    of moments): its mean is the pooled share agreed, its strength grows as the models look
    alike. When the spread between models is no more than chance would give, every record is
    pulled to the mean and the vote is a head count; only a real difference in reliability
    earns a real difference in weight. ``fallback`` serves until three models have a record."""
    rows = [(a, n) for a, n in counts.values() if n > 0]
    if len(rows) < 3:
        return fallback
    total = sum(n for _, n in rows)
    mean = sum(a for a, _ in rows) / total
    mean = min(max(mean, 0.01), 0.99)
    spread = sum(n * (a / n - mean) ** 2 for a, n in rows) / total
    chance = mean * (1 - mean) * len(rows) / total
    between = spread - chance
    if between <= 0:
        return RecordPrior(mean, max_strength)
    strength = mean * (1 - mean) / between - 1
    return RecordPrior(mean, min(max(strength, 2.0), max_strength))


def refine(
    ballots: Mapping[str, Mapping[str, frozenset[str]]],
    values: Mapping[str, int],
    records: Mapping[str, tuple[int, int]],
    prior: RecordPrior,
    *,
    exclude: str | None = None,
    rounds: int = 3,
) -> dict[str, tuple[int, int]]:
    """Truth-discovery refinement of track records over every contest of a domain.

    ``ballots`` maps a contest to each voter's choices; ``records`` gives each model's decided
    claims (won, decided) and seeds the first round's weights. Each round takes every contest's
    weighted leader, then re-estimates each model as (agreed, voted): how many of its ballots
    carried the leader. ``exclude`` (the contest being decided) is left out, so a model's
    weight is earned elsewhere. The estimate uses all votes cast so far, so decisions taken
    late in a stream see the same weights whatever order the votes came in.
    """
    counts: dict[str, tuple[int, int]] | None = None
    for _ in range(rounds):
        source = records if counts is None else counts
        prior = empirical_prior(source, prior)
        memo: dict[tuple[str, int], float] = {}
        agreed: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for contest, by_model in ballots.items():
            if contest == exclude or len(by_model) < 2:
                continue
            k = values.get(contest, 2)
            totals: dict[str, float] = defaultdict(float)
            for model, picked in by_model.items():
                weight = memo.get((model, k))
                if weight is None:
                    weight = record_weight(*source.get(model, (0, 0)), prior, values=k)
                    memo[(model, k)] = weight
                for choice in picked:
                    totals[choice] += weight / len(picked)
            top = min(totals, key=lambda c: (-totals[c], c))
            for model, picked in by_model.items():
                agreed[model][1] += 1
                agreed[model][0] += top in picked
        counts = {m: (a, n) for m, (a, n) in agreed.items()}
    return counts or {}
