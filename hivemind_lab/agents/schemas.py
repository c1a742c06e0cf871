"""Task and output models for every agent utterance.

A task carries everything an agent needs for one call; it is rendered into the prompt as a JSON
block, so an LLM and the offline model read exactly the same information. Output models are the
JSON schemas replies must follow.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

MAX_TEXT = 1200


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True)


class Evidence(Frozen):
    """A retrieved passage shown to an agent, citable by ``id``."""

    id: str
    document_id: str
    text: str
    score: float = 0.0
    topics: tuple[str, ...] = ()


class SolutionView(Frozen):
    """What a solution recommends, without its justification (what practicality agents see)."""

    title: str
    recommendations: tuple[str, ...]

    def text(self) -> str:
        """The solution as one text, for similarity measures."""
        return " ".join(self.recommendations)


class ProposeTask(Frozen):
    """Propose an initial solution from the agent's own evidence."""

    task: Literal["propose"] = "propose"
    agent_id: str
    problem: str
    evidence: tuple[Evidence, ...]
    excluded: tuple[SolutionView, ...] = ()
    """Vetoed solutions: neither they nor anything close to them may be proposed again."""
    attempt: int = 0
    """How many proposals of this agent were already refused as repeats in this regeneration."""
    max_recommendations: int = 4


class ProposalOutput(Frozen):
    """A solution with its justification."""

    title: Annotated[str, Field(min_length=1, max_length=300)]
    recommendations: Annotated[
        list[Annotated[str, Field(min_length=1, max_length=MAX_TEXT)]],
        Field(min_length=1, max_length=8),
    ]
    rationale: Annotated[str, Field(max_length=4 * MAX_TEXT)]
    citations: list[str] = []

    def view(self) -> SolutionView:
        """The solution without its justification."""
        return SolutionView(title=self.title, recommendations=tuple(self.recommendations))


class CritiquePoint(Frozen):
    """One point of a critique."""

    kind: Literal["support", "contradiction", "gap"]
    """support: evidence backs a recommendation; contradiction: evidence goes against one;
    gap: something the critic's evidence recommends that the solution lacks."""
    recommendation: int | None = None
    """0-based index of the recommendation addressed (None for gaps)."""
    claim: Annotated[str, Field(min_length=1, max_length=MAX_TEXT)]
    """The critic's point, as a self-contained sentence."""
    strength: Annotated[float, Field(ge=0.0, le=1.0)]
    """How well the critic's evidence supports the point."""
    citation: str | None = None


class CritiqueTask(Frozen):
    """Critique one peer's solution with the critic's own evidence."""

    task: Literal["critique"] = "critique"
    critic_id: str
    problem: str
    critic_position: SolutionView
    target_id: str
    target: SolutionView
    evidence: tuple[Evidence, ...]


class CritiqueOutput(Frozen):
    points: list[CritiquePoint]
    summary: Annotated[str, Field(max_length=MAX_TEXT)] = ""


class CritiqueTarget(Frozen):
    target_id: str
    target: SolutionView
    evidence: tuple[Evidence, ...]


class BatchCritiqueTask(Frozen):
    """Critique every peer in one call (same information as one call per peer)."""

    task: Literal["critique_batch"] = "critique_batch"
    critic_id: str
    problem: str
    critic_position: SolutionView
    targets: tuple[CritiqueTarget, ...]


class TargetCritique(Frozen):
    target_id: str
    points: list[CritiquePoint]
    summary: Annotated[str, Field(max_length=MAX_TEXT)] = ""


class BatchCritiqueOutput(Frozen):
    critiques: list[TargetCritique]


class ReceivedCritique(Frozen):
    critic_id: str
    points: tuple[CritiquePoint, ...]


class ReviseTask(Frozen):
    """Revise the agent's solution after reading every critique of it."""

    task: Literal["revise"] = "revise"
    agent_id: str
    problem: str
    current: ProposalOutput
    critiques: tuple[ReceivedCritique, ...]
    stubbornness: float
    """0 adopts every well-supported point, 1 never changes."""
    evidence: tuple[Evidence, ...] = ()
    max_recommendations: int = 4


class RevisionOutput(ProposalOutput):
    adopted: list[str] = []
    """Critique claims taken into the solution."""
    rejected: list[str] = []
    """Critique claims considered and not taken."""


class ScoreTask(Frozen):
    """Score one solution's feasibility under one constraint."""

    task: Literal["score"] = "score"
    constraint: str
    severity: float
    """0 lenient, 1 strict."""
    solution_id: str
    solution: SolutionView
    evidence: tuple[Evidence, ...]
    red_flags: tuple[str, ...] = ()
    mitigations: tuple[str, ...] = ()


class ScoreOutput(Frozen):
    score: Annotated[int, Field(ge=0, le=100)]
    reason: Annotated[str, Field(max_length=MAX_TEXT)]
    flags: list[str] = []
    """Risk signals found in the solution."""


AgentTask = Annotated[
    ProposeTask | CritiqueTask | BatchCritiqueTask | ReviseTask | ScoreTask,
    Field(discriminator="task"),
]
