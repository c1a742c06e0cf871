"""Frozen records the knowledge-graph operations return (JSON shapes of the spec's tools)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from hivemind_lab.graph.predicates import ConflictType
from hivemind_lab.models import Frozen

Resolution = Literal["accept_a", "accept_b", "synthesize", "fork"]
ConflictStatus = Literal["unresolved", "resolved", "forked", "withdrawn"]
AssertionStatus = Literal["active", "disproven", "withdrawn"]
RESOLUTIONS: tuple[Resolution, ...] = ("accept_a", "accept_b", "synthesize", "fork")
CONSENSUS_MODEL = "hivemind-consensus"
"""The model identity that owns synthesized assertions."""


class Assertion(Frozen):
    """A claim with provenance."""

    id: str
    subject: str
    predicate: str
    object: str
    confidence: float
    source_model: str
    domain: str
    evidence: str = ""
    created_at: str
    survived_consensus: bool | None = None
    status: AssertionStatus = "active"
    support: int = 1
    """How many models hold the claim (asserter plus corroborators)."""
    subject_key: str = ""
    object_key: str = ""
    predicate_key: str = ""
    corroborated_by: tuple[str, ...] = ()


class ConflictHit(Frozen):
    conflict_id: str
    with_assertion: str
    type: Literal["contradicts", "negates"]
    """``contradicts`` (different object for a single-valued predicate) or ``negates``."""
    other_model: str


class AssertResult(Frozen):
    """What `HivemindGraph.assert_claim` returns (the spec's hivemind_assert JSON)."""

    assertion_id: str
    stored: bool = True
    outcome: Literal["created", "updated", "corroborated"] = "created"
    """created: a new assertion; updated: the same model restated its claim; corroborated:
    another model's identical claim gained this model's support."""
    conflicts_detected: tuple[ConflictHit, ...] = ()


class AssertionSide(Frozen):
    id: str
    subject: str
    predicate: str
    object: str
    source_model: str
    confidence: float
    status: AssertionStatus


class ConflictView(Frozen):
    """One conflict with both sides (the spec's hivemind_conflicts items)."""

    conflict_id: str
    assertion_a: AssertionSide
    assertion_b: AssertionSide
    domain: str
    type: ConflictType
    """``different_object`` or ``negation`` (see `PredicateRegistry.conflict`)."""
    status: ConflictStatus
    resolution: str | None = None
    created_at: str
    resolved_at: str | None = None
    vote_count: int = 0


class VoteResult(Frozen):
    """The spec's hivemind_resolve JSON, plus where the contest stands and whether it is final.

    A conflict is decided together with every unresolved conflict about the same subject that
    shares a side with it (its *contest*); ``standing`` gives the weighted share of each
    competing assertion (by id), ``fork`` and ``synthesize``.
    """

    vote_recorded: bool = True
    voter: str
    resolution: Resolution
    weight: float
    current_votes: dict[str, float]
    vote_count: int
    votes_needed: int
    consensus_reached: bool
    consensus_resolution: Resolution | None = None
    threshold: float
    status: ConflictStatus
    synthesized_assertion_id: str | None = None
    final: bool = False
    """The decision is final: no more votes are taken on this conflict."""
    standing: dict[str, float] = Field(default_factory=dict)
    """Share per competing assertion id, ``fork`` and ``synthesize``: the procedural choices'
    share of the weight, the sides sharing the rest by their posterior."""
    posterior: dict[str, float] = Field(default_factory=dict)
    """Competing assertion id → posterior probability that it is the true value (a side wins
    when its posterior reaches ``threshold``)."""
    winner: str | None = None
    """The winning assertion id, ``fork`` or ``synthesize`` once final."""
    electorate: int = 0
    """Models holding a side of the contest (asserters and corroborators)."""
    electorate_voted: int = 0
    """How many of them have voted."""
    weights: dict[str, float] = Field(default_factory=dict)
    """Each voter's current weight (estimated reliability's log odds × confidence factor)."""


class TrackRecord(Frozen):
    """A model's record in one domain and why its vote weighs what it does (see
    docs/design/consensus.md): the hard outcomes of decided contests, and the reliability the
    joint estimate over every vote of the domain gives it."""

    model: str
    domain: str
    decided: int
    """Claims the model held (asserted or corroborated) that a decided contest ruled on."""
    won: int
    """Of those, the claims that survived (revisions included)."""
    ballots: int
    """Contests of the domain with at least two voters that the model voted in on a side."""
    agreed: int
    """Of those, how many its ballot named the side the estimate finds likeliest."""
    expected_correct: float = 0.0
    """The estimate's expected number of its ballots that named the true value."""
    prior_mean: float = 0.7
    """Reliability of a model without votes (the Beta prior's mean)."""
    prior_strength: float = 4.0
    """How many votes the prior is worth."""
    reliability: float
    """(expected_correct + prior_mean × prior_strength) / (ballots + prior_strength)."""
    independence: float = 1.0
    """Discount for copying: 1 / (1 + the number of sources in ``copies``)."""
    copies: tuple[str, ...] = ()
    """Sources it names the same false values with far more often than chance."""
    weight: float
    """Vote weight in a two-sided conflict before the confidence factor:
    ln(reliability / (1 - reliability)) × independence, between 0 and 5."""
    label_hits: dict[str, float] = Field(default_factory=dict)
    """Label ("predicate object", a value that recurs across contests) → the chance it names
    that label when it is true; contests among labels weigh its vote with these rows (its
    reliability shrunk toward them) instead of ``weight``."""


class Settlement(Frozen):
    """A contest decided, a decided contest's verdict revised, or a verdict reopened because
    the current estimate would no longer decide it (what a client subscribed to a contest
    wants to hear about)."""

    kind: Literal["decided", "revised", "reopened"]
    verdict_id: str
    """The contest's verdict (stable across revisions)."""
    domain: str
    subject: str
    conflict_ids: tuple[str, ...]
    winner: str
    """The surviving assertion's id, ``fork`` or ``synthesize``; empty when reopened."""
    previous_winner: str | None = None
    """The winner before a revision or a reopening."""
    posterior: float
    """The winner's posterior (or share, for fork and synthesize)."""
    at: str


class Revision(Frozen):
    """One change of a verdict, kept as history."""

    verdict_id: str
    from_winner: str
    """The winner before; empty when a reopened contest is decided again."""
    to_winner: str
    """The new winner; empty when the contest was reopened (no side reaches φ any more)."""
    posterior: float
    at: str


class ClaimRef(Frozen):
    subject: str
    predicate: str
    object: str
    confidence: float


class DivergenceReport(Frozen):
    """The spec's hivemind_divergence JSON."""

    model_a: str
    model_b: str
    domain: str
    unique_to_a: tuple[ClaimRef, ...]
    unique_to_b: tuple[ClaimRef, ...]
    direct_conflicts: tuple[dict[str, str], ...]
    agreements: tuple[dict[str, str], ...]
    divergence_score: float = Field(ge=0.0, le=1.0)
    blind_spots_a: tuple[str, ...]
    blind_spots_b: tuple[str, ...]
    record_a: TrackRecord | None = None
    """Model A's consensus track record and vote weight in the domain."""
    record_b: TrackRecord | None = None


class PatternReport(Frozen):
    """The spec's hivemind_patterns JSON."""

    domain: str
    motifs: tuple[dict, ...]
    clusters: tuple[dict, ...]
    islands: tuple[dict, ...]
    cross_model_patterns: tuple[dict, ...]


class RetractResult(Frozen):
    """What `HivemindGraph.retract` returns (hivemind_retract's JSON)."""

    assertion_id: str
    outcome: Literal["withdrawn", "handed_over", "support_withdrawn"]
    """withdrawn: the claim no longer counts; handed_over: the asserter withdrew but a
    corroborator still holds it (and now owns it); support_withdrawn: a corroborator withdrew."""
    model: str
    """The model that withdrew."""
    reason: str
    withdrawn_at: str
    conflicts_closed: tuple[str, ...] = ()
    """Open conflicts closed as ``withdrawn`` because nobody holds the claim any more."""
    held_by: str | None = None
    """Who holds the claim afterwards (None once withdrawn)."""
