"""What ``rescore.json`` holds: a finished run's solution sets judged again against updated
constraint knowledge, with the verdicts before and after and the reasons (pure data)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from hivemind_lab.agents.usage import UsageSummary
from hivemind_lab.knowledge import fingerprint
from hivemind_lab.models import FrozenRecord as Frozen
from hivemind_lab.runs.manifest import RescoreOrigin
from hivemind_lab.runs.results import ConstraintScore, PracticalityVerdict, Status

RESCORE_VERSION: Literal[1] = 1
Outcome = Literal["still_passes", "now_vetoed", "now_passes", "still_vetoed"]


class SolutionRescore(Frozen):
    """One solution (or one conclusion's solutions) before and after, with the reasons."""

    label: str
    """A conclusion's rank and title, or a solution's id and title."""
    solution_ids: tuple[str, ...]
    before: dict[str, float]
    """Mean score per constraint in the original run."""
    after: dict[str, float]
    """Mean score per constraint against the updated knowledge."""
    before_mean: float
    after_mean: float
    flags: tuple[str, ...]
    """Risk signals the constraint agents found now."""
    reasons: dict[str, tuple[str, ...]]
    """The constraint agents' reasons now, by constraint."""


class SetRescore(Frozen):
    """One solution set the run judged, judged again."""

    regeneration: int
    final: bool
    """The run's last judged set (its conclusions come from it)."""
    before: PracticalityVerdict
    after: PracticalityVerdict
    outcome: Outcome
    solutions: tuple[SolutionRescore, ...]


class RescoreReport(Frozen):
    """What ``rescore.json`` holds: which conclusions would now pass or be vetoed, and why."""

    schema_version: Literal[1] = RESCORE_VERSION
    original: RescoreOrigin
    practicality_kb: str
    constraints: tuple[str, ...]
    severity: float
    feasibility: int
    knowledge: dict[str, fingerprint.KnowledgeChange]
    """Each constraint's knowledge against the original run's (by content hash)."""
    sets: tuple[SetRescore, ...]
    conclusions: tuple[SolutionRescore, ...]
    """The original conclusions, rescored (empty when the run concluded nothing)."""
    regenerated: bool = False
    regeneration_note: str = ""
    """Why the run was or was not continued after a new veto."""
    status: Status | None = None
    """The continued deliberation's status (``--regenerate`` only)."""
    usage: UsageSummary
    audit_head: str = ""

    @property
    def flipped(self) -> tuple[SetRescore, ...]:
        return tuple(s for s in self.sets if s.before.vetoed != s.after.vetoed)


def outcome(before: bool, after: bool) -> Outcome:
    if before:
        return "still_vetoed" if after else "now_passes"
    return "now_vetoed" if after else "still_passes"


def _means(scores: Sequence[ConstraintScore]) -> dict[str, float]:
    per: dict[str, list[int]] = {}
    for s in scores:
        per.setdefault(s.constraint, []).append(s.score)
    return {c: round(sum(v) / len(v), 4) for c, v in sorted(per.items())}


def _mean(scores: Sequence[ConstraintScore]) -> float:
    return round(sum(s.score for s in scores) / len(scores), 4) if scores else 0.0


def compare(
    label: str,
    ids: Sequence[str],
    before: Sequence[ConstraintScore],
    after: Sequence[ConstraintScore],
) -> SolutionRescore:
    """Scores of the solutions ``ids`` before and after (pure)."""
    wanted = set(ids)
    old = [s for s in before if s.solution_id in wanted]
    new = [s for s in after if s.solution_id in wanted]
    reasons: dict[str, list[str]] = {}
    for s in new:
        reasons.setdefault(s.constraint, [])
        if s.reason not in reasons[s.constraint]:
            reasons[s.constraint].append(s.reason)
    return SolutionRescore(
        label=label,
        solution_ids=tuple(ids),
        before=_means(old),
        after=_means(new),
        before_mean=_mean(old),
        after_mean=_mean(new),
        flags=tuple(dict.fromkeys(f for s in new for f in s.flags)),
        reasons={c: tuple(r) for c, r in sorted(reasons.items())},
    )
