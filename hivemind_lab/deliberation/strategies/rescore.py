"""The compliance rescore: only the practicality network runs again, on every solution set a
finished run judged (its vetoed sets and its final one), with the run's own decision context.

Planning (which run, which knowledge, the new manifest) and the report live in
`hivemind_lab.compliance`; this is the phase plan the engine runs.
"""

from __future__ import annotations

from dataclasses import dataclass

from hivemind_lab.agents.schemas import DecisionContext
from hivemind_lab.deliberation import practicality
from hivemind_lab.deliberation.engine import Engine
from hivemind_lab.inputs import ScoreMode
from hivemind_lab.runs import events
from hivemind_lab.runs.rescore import SetRescore, SolutionRescore, compare, outcome
from hivemind_lab.runs.results import DeliberationResult, PracticalityVerdict, Solution


@dataclass(frozen=True)
class RescoredSets:
    """What a rescore judged: every set again, and the run's conclusions again."""

    sets: tuple[SetRescore, ...]
    conclusions: tuple[SolutionRescore, ...]


@dataclass(frozen=True)
class RescoreStrategy:
    """Judge each set again: score, judge, record the outcome against the original verdict."""

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

    async def run(self, engine: Engine) -> RescoredSets:
        engine.record(("compliance", self.start))
        rescored: list[SetRescore] = []
        for index, (before, ids) in enumerate(self.sets):
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
            rescored.append(
                SetRescore(
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
            )
        final = rescored[-1] if rescored else None
        conclusions = tuple(
            compare(f"#{c.rank} {c.title}", c.solution_ids, final.before.scores, final.after.scores)
            for c in self.original.conclusions
            if final is not None
        )
        return RescoredSets(tuple(rescored), conclusions)
