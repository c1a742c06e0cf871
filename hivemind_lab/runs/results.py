"""The data that flows between stages and ends up in ``result.json``: frozen, I/O-free models."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from hivemind_lab.agents.schemas import (
    Concern,
    CritiquePoint,
    OptionStance,
    OwnCourse,
    SolutionView,
)
from hivemind_lab.agents.usage import UsageSummary
from hivemind_lab.models import Frozen
from hivemind_lab.problems.exclusivity import ExclusiveSource
from hivemind_lab.runs.status import Status

SCHEMA_VERSION = 1


class Solution(Frozen):
    """A theory agent's solution at one point of the deliberation."""

    id: str
    """``g<regeneration>.r<round>.<agent>``."""
    agent_id: str
    regeneration: int
    round: int
    title: str
    recommendations: tuple[str, ...]
    rationale: str
    """The theoretical justification (never shown to practicality agents)."""
    citations: tuple[str, ...] = ()
    adopted: tuple[str, ...] = ()
    """Critique claims adopted in this revision."""
    stances: tuple[OptionStance, ...] = ()
    """The solution's stance on each of the problem's options it addresses."""
    facts_used: tuple[str, ...] = ()
    """Ids of the client facts the solution relies on."""
    constraints_used: tuple[str, ...] = ()
    """Ids of the binding constraints the solution relies on."""
    course: OwnCourse | None = None
    """On an open question: the course of action proposed."""
    held: tuple[int, ...] = ()
    """Options whose stance change in this revision the engine did not take: the revision was
    held whole (no cleared point licensed it, even when asked again with the reason, or its
    first move crossed others' in the round), and this solution is the previous one."""

    def view(self) -> SolutionView:
        """The solution without its justification."""
        return SolutionView(
            title=self.title,
            recommendations=self.recommendations,
            stances=self.stances,
            course=self.course,
        )

    def text(self) -> str:
        """What the solution recommends, as one text (what the monitor compares)."""
        return " ".join(self.recommendations)


class Critique(Frozen):
    """One critic's critique of one peer's solution."""

    critic_id: str
    target_id: str
    target_solution_id: str
    regeneration: int
    round: int
    points: tuple[CritiquePoint, ...]
    summary: str = ""


class Cluster(Frozen):
    """Solutions the monitor lumps into one aggregate conclusion."""

    index: int
    solution_ids: tuple[str, ...]
    agent_ids: tuple[str, ...]
    representative_id: str
    """The member most similar to the others (medoid)."""
    cohesion: float
    """Mean pairwise similarity of members (1.0 for a singleton)."""


class MonitorReport(Frozen):
    """The monitor's view after a phase of the theory loop."""

    regeneration: int
    round: int
    clusters: tuple[Cluster, ...]
    distinct_conclusions: int
    halted: bool
    similarity_threshold: float
    embedder: str


class BindingVeto(Frozen):
    """A binding constraint that set a constraint agent's score to 0: the solution pursues now
    an option the constraint forbids."""

    constraint: str
    """The constraint's id in the recorded decision (``constraint.<n>``)."""
    option: int
    """The forbidden option the solution pursues (0-based index)."""
    by: Literal["decision", "model"]
    """decision: the recorded decision says the constraint forbids the option; model: the
    constraint agent itself marked the violation."""


class ConstraintScore(Frozen):
    """One constraint agent's score of one solution."""

    constraint: str
    solution_id: str
    score: int = Field(ge=0, le=100)
    reason: str
    flags: tuple[str, ...] = ()
    vetoes: tuple[BindingVeto, ...] = ()
    """The binding constraints that set ``score`` to 0 (empty: the score is the agent's)."""
    model_score: int | None = None
    """The score the agent gave before a binding veto set it to 0 (None: no veto)."""
    concerns: tuple[Concern, ...] = ()
    """The concerns the agent raised (empty in results written before they were kept)."""


class PracticalityVerdict(Frozen):
    """The practicality network's judgement of a whole solution set."""

    regeneration: int
    scores: tuple[ConstraintScore, ...]
    mean_score: float
    per_constraint: dict[str, float]
    feasibility: int
    severity: float
    vetoed: bool
    """True when mean_score <= feasibility: the whole set is rejected."""


class Justification(Frozen):
    """One member's reasons, shown side by side with the others of its cluster."""

    agent_id: str
    solution_id: str
    rationale: str
    citations: tuple[str, ...]


class Conclusion(Frozen):
    """One aggregate conclusion of a finished deliberation."""

    rank: int
    title: str
    recommendations: tuple[str, ...]
    """The representative solution's recommendations."""
    agents: tuple[str, ...]
    solution_ids: tuple[str, ...]
    justifications: tuple[Justification, ...]
    combined_rationale: str
    scores: dict[str, float]
    """Mean score per constraint over the cluster's solutions."""
    mean_score: float


class RoundMetrics(Frozen):
    """Figures for one theory-loop round (round 0 = initial proposals)."""

    regeneration: int
    round: int
    agents: int
    distinct_conclusions: int
    revision_magnitude: float
    """Mean movement of the agents' decisions in this round: the decision distance between
    each agent's stances before and after its revision (`deliberation.theory.revision_movement`,
    0 none, 1 every option reversed)."""
    diversity: float
    """Mean pairwise dissimilarity (1 - similarity) of the solutions."""
    adopted_points: int
    refused_repeats: int
    calls: int
    tokens: int


class ModelShare(Frozen):
    """One model of a run with a roster: the agents it answered for and what its calls
    consumed."""

    model: str
    """``backend:model`` (`hivemind_lab.llm.base.model_name`)."""
    agents: tuple[str, ...] = ()
    """The agent ids it answered for (``theory-03``, ``constraint-legal``, ``monitor``)."""
    usage: UsageSummary = UsageSummary()


class DeliberationResult(Frozen):
    """Everything a deliberation concluded; written as ``result.json``."""

    schema_version: int = SCHEMA_VERSION
    status: Status
    problem_id: str
    rounds: int
    """Critique-and-revise rounds in the final generation."""
    total_rounds: int
    """Rounds over all generations."""
    regenerations: int
    n_agents: int
    conclusions: tuple[Conclusion, ...]
    vetoes: tuple[PracticalityVerdict, ...]
    """Every practicality verdict, vetoes and the final pass alike, in order."""
    monitor: tuple[MonitorReport, ...]
    metrics: tuple[RoundMetrics, ...]
    usage: UsageSummary
    wall_time_s: float
    audit_head: str = ""
    audit_records: int = 0
    tie: bool = False
    """Baseline votes only: the winning clusters tied in size at the cut (all tied ones kept)."""
    options: tuple[str, ...] = ()
    """The options the agents chose among."""
    options_source: Literal["given", "extracted", "agents"] = "given"
    """given by the problem, extracted from its question, or none found (agents proposed
    their own courses of action)."""
    exclusive: bool = False
    """One of the options: every solution pursued exactly one and rejected the others."""
    exclusive_source: ExclusiveSource = "default"
    """Where ``exclusive`` came from (see `hivemind_lab.problems.exclusivity`)."""
    models: tuple[ModelShare, ...] = ()
    """A run with a roster: each model, the agents it answered for and its calls, tokens and
    cost (empty: the manifest's one model answered for every agent)."""

    def model_of(self, agent_id: str) -> str | None:
        """The model that answered ``agent_id`` (None: the manifest's one model)."""
        return next((m.model for m in self.models if agent_id in m.agents), None)
