"""The compliance rescore: only the practicality network runs again, on every solution set a
finished run judged (its vetoed sets and its final one), with the run's own decision context.

A new veto of the final set continues the deliberation when asked and allowed: the next
generation's state (every vetoed set excluded, the new verdicts recorded) is checkpointed by the
engine like any completed phase, and the same engine drives the deliberation's phases from it,
on the same event loop, cache and audit chain. Planning (which run, which knowledge, the new
manifest) and the report live in `hivemind_lab.compliance`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from hivemind_lab.agents.schemas import DecisionContext
from hivemind_lab.agents.usage import UsageSummary
from hivemind_lab.deliberation import practicality
from hivemind_lab.deliberation.engine import Engine, PhasePlan
from hivemind_lab.deliberation.state import RunState
from hivemind_lab.inputs import ScoreMode
from hivemind_lab.runs import events
from hivemind_lab.runs.manifest import RunManifest
from hivemind_lab.runs.rescore import SetRescore, SolutionRescore, compare, outcome
from hivemind_lab.runs.results import DeliberationResult, PracticalityVerdict, Solution, Status


@dataclass(frozen=True)
class Rescored:
    """What a rescore judged (every set again, the run's conclusions again) and whether the
    deliberation was continued from a new veto."""

    sets: tuple[SetRescore, ...]
    conclusions: tuple[SolutionRescore, ...]
    usage: UsageSummary
    regenerated: bool
    note: str
    status: Status | None
    audit_head: str


def set_ids(verdict: PracticalityVerdict) -> tuple[str, ...]:
    """The solutions a verdict judged, in its order."""
    return tuple(dict.fromkeys(s.solution_id for s in verdict.scores))


def not_continued(
    final: SetRescore | None, manifest: RunManifest, *, regenerate: bool
) -> tuple[str, Status | None] | None:
    """Why the deliberation is not continued (the note and the status to report), or None
    when the final set is newly vetoed and the run may regenerate."""
    if final is None or final.outcome != "now_vetoed":
        return "no new veto of the final set", None
    if not regenerate:
        return "the final set is now vetoed; not regenerated (ask with --regenerate)", None
    if manifest.strategy != "deliberation":
        return (
            f"a {manifest.strategy} baseline has no theory loop to continue; not regenerated",
            None,
        )
    limit = manifest.limits.max_regenerations
    if final.regeneration >= limit:
        note = (
            f"the run already used its {limit} regeneration(s) (limits.max_regenerations); "
            "not regenerated"
        )
        return note, "vetoed_out"
    return None


@dataclass(frozen=True)
class RescoreStrategy:
    """Judge each set again (score, judge, record the outcome against the original verdict),
    then, when `not_continued` finds no reason not to, continue the deliberation."""

    sets: tuple[tuple[PracticalityVerdict, tuple[str, ...]], ...]
    """The original verdicts and the ids of the solutions each judged."""
    solutions: dict[str, Solution]
    agents: tuple[practicality.ConstraintAgent, ...]
    severity: float
    feasibility: int
    mode: ScoreMode
    context: DecisionContext
    original: DeliberationResult
    start: events.RescoreStart
    manifest: RunManifest
    """The rescore run's manifest (its limits bind a continued deliberation)."""
    regenerate: bool
    continuation: Callable[[], PhasePlan]
    """The deliberation's phase plan over the updated knowledge, built only when continued."""

    async def run(self, engine: Engine) -> Rescored:
        started = time.perf_counter()
        engine.record(("compliance", self.start))
        sets: tuple[SetRescore, ...] = ()
        for index, (before, ids) in enumerate(self.sets):  # one set after another, as recorded
            sets = (*sets, await self._rejudge(engine, index, before, ids))
        final = sets[-1] if sets else None
        conclusions = tuple(
            compare(f"#{c.rank} {c.title}", c.solution_ids, final.before.scores, final.after.scores)
            for c in self.original.conclusions
            if final is not None
        )
        usage = engine.caller.usage
        status: Status | None
        stop = not_continued(final, self.manifest, regenerate=self.regenerate)
        if stop is None:
            assert final is not None
            continued = await self._continue(engine, sets, started)
            note = (
                f"continued from the new veto as generation {final.regeneration + 1}: "
                f"{continued.status}, {len(continued.conclusions)} conclusion(s) in result.json"
            )
            status, usage = continued.status, continued.usage
        else:
            note, status = stop
        engine.record(
            (
                "compliance",
                events.RescoreResult(
                    outcomes={str(s.regeneration): s.outcome for s in sets},
                    regenerated=stop is None,
                    note=note,
                ),
            )
        )
        return Rescored(sets, conclusions, usage, stop is None, note, status, engine.audit.head)

    async def _rejudge(
        self, engine: Engine, index: int, before: PracticalityVerdict, ids: tuple[str, ...]
    ) -> SetRescore:
        engine.record(
            (
                "compliance",
                events.RescoreSet(regeneration=before.regeneration, solution_ids=list(ids)),
            )
        )
        scored = await engine.score(
            self.agents,
            [(i, self.solutions[i].view()) for i in ids],
            severity=self.severity,
            context=self.context,
            mode=self.mode,
        )
        after = practicality.judge(
            scored.per_solution,
            feasibility=self.feasibility,
            severity=self.severity,
            regeneration=before.regeneration,
        )
        result = outcome(before.vetoed, after.vetoed)
        engine.record(
            (
                "practicality",
                events.RescoreVerdict(
                    regeneration=before.regeneration,
                    outcome=result,
                    before={"mean_score": before.mean_score, "vetoed": before.vetoed},
                    after=after.model_dump(
                        mode="json", include={"mean_score", "per_constraint", "vetoed"}
                    ),
                ),
            )
        )
        return SetRescore(
            regeneration=before.regeneration,
            final=index == len(self.sets) - 1,
            before=before,
            after=after,
            outcome=result,
            solutions=tuple(
                compare(f"{i}: {self.solutions[i].title}", [i], before.scores, after.scores)
                for i in ids
            ),
        )

    async def _continue(
        self, engine: Engine, sets: tuple[SetRescore, ...], started: float
    ) -> DeliberationResult:
        """The next generation from the new veto: checkpointed (a killed continuation resumes
        with ``deliberate --resume``), then driven within the run's budgets."""
        final = sets[-1]
        state = RunState(
            phase="generate",
            regeneration=final.regeneration + 1,
            total_rounds=self.original.total_rounds,
            excluded=tuple(
                self.solutions[i].view()
                for s in sets
                if s.before.vetoed or s.after.vetoed
                for i in set_ids(s.before)
            ),
            monitor=self.original.monitor,
            verdicts=tuple(s.after for s in sets),
            metrics=self.original.metrics,
        )
        engine.commit(state, started)
        engine.spend_within(self.manifest.limits)
        return await engine.drive(self.continuation())
