"""The data a run carries: its resolved knowledge, its checkpointed phase state and the
progress it reports.

Kept apart from the engine's phase steps so that everything a checkpoint holds is one frozen,
versioned model that resume, replay and the compliance loop can read without the engine.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from hivemind_lab.agents.schemas import SolutionView
from hivemind_lab.agents.usage import UsageSummary
from hivemind_lab.deliberation import practicality, theory
from hivemind_lab.knowledge.documents import Document
from hivemind_lab.knowledge.slicing import SlicingResult
from hivemind_lab.models import Frozen
from hivemind_lab.runs.results import (
    Critique,
    MonitorReport,
    PracticalityVerdict,
    RoundMetrics,
    Solution,
    Status,
)

Phase = Literal["generate", "monitor", "critique", "revise", "score", "synthesize", "done"]
STATE_VERSION = 1


class RunState(Frozen):
    """Everything needed to continue a run after its last completed phase."""

    schema_version: int = STATE_VERSION
    phase: Phase = "generate"
    regeneration: int = 0
    round: int = 0
    total_rounds: int = 0
    solutions: dict[str, Solution] = {}
    critiques: tuple[Critique, ...] = ()
    excluded: tuple[SolutionView, ...] = ()
    last_critiques: tuple[Critique, ...] = ()
    criticised: dict[str, Solution] = {}
    """The solutions the last round's critiques were about (by id), to tell which objections
    a revision answered."""
    """The last round's critiques (the objections the final solutions answer to)."""
    rationales: dict[int, str] = {}
    """Combined rationale per final cluster index, written by the model."""
    monitor: tuple[MonitorReport, ...] = ()
    verdicts: tuple[PracticalityVerdict, ...] = ()
    metrics: tuple[RoundMetrics, ...] = ()
    usage: UsageSummary = UsageSummary()
    usage_by_model: dict[str, UsageSummary] = {}
    """With a roster: what each model's calls consumed so far (by `llm.base.model_name`)."""
    status: Status | None = None
    pending_refused: int = 0
    elapsed_s: float = 0.0


@dataclass
class Progress:
    """What a progress display shows; `on_progress` receives it after every phase."""

    phase: str
    regeneration: int
    round: int
    calls: int
    tokens: int
    distinct: int | None = None


ProgressCallback = Callable[[Progress], None]


@dataclass(frozen=True)
class Knowledge:
    """Resolved knowledge inputs of a run."""

    documents: dict[str, Document]
    slicing: SlicingResult
    theory_agents: list[theory.TheoryAgent]
    constraint_agents: list[practicality.ConstraintAgent]
