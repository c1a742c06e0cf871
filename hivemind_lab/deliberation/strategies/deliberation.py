"""The deliberation: generate → monitor → critique → revise → monitor … → score → synthesize.

The engine (`Engine.drive`) checkpoints the state after every phase. Every model reply lands in
the run's response cache before it is used, so resuming after a crash (even ``kill -9``
mid-phase) redoes only the interrupted phase, and every call that phase had completed is served
from the cache: no completed call is repeated, and the result is the same as an uninterrupted
run.

The baselines (`strategies.baseline`) are this plan with another generation step and no
critique rounds: the scoring, the veto and regeneration rule and the result are this module's.
"""

from __future__ import annotations

import asyncio
import functools
from dataclasses import dataclass

from hivemind_lab.agents.schemas import DecisionContext, RationaleOutput, SolutionView
from hivemind_lab.deliberation import monitor, practicality, theory
from hivemind_lab.deliberation.embedders import Embedder
from hivemind_lab.deliberation.engine import Engine
from hivemind_lab.deliberation.evidence import recommends_without_evidence, without_evidence
from hivemind_lab.deliberation.state import Knowledge, Phase, RunState
from hivemind_lab.inputs import Calibrations, DeliberationRequest, Limits
from hivemind_lab.runs import events
from hivemind_lab.runs.results import DeliberationResult, RoundMetrics, Solution


@dataclass(frozen=True)
class DeliberationStrategy:
    """The theory loop, the monitor's halting and the practicality veto, phase by phase."""

    request: DeliberationRequest
    calibrations: Calibrations
    limits: Limits
    knowledge: Knowledge
    embedder: Embedder

    @functools.cached_property
    def context(self) -> DecisionContext:
        return self.request.context()

    def _repeat_check(self, excluded: tuple[SolutionView, ...]) -> theory.RepeatCheck:
        threshold = self.calibrations.similarity_threshold

        def check(view: SolutionView) -> bool:
            return monitor.is_repeat(view, excluded, threshold, self.embedder)

        return check

    # -- phases ------------------------------------------------------------------------------
    async def _generate(self, e: Engine, s: RunState) -> RunState:
        out = await theory.propose(
            e.caller,
            self.knowledge.theory_agents,
            self.context,
            regeneration=s.regeneration,
            excluded=s.excluded,
            is_repeat=self._repeat_check(s.excluded),
        )
        e.record(
            *((sol.agent_id, events.Proposal.of(sol)) for sol in out.solutions.values()),
            *(("monitor", events.RepeatRefused(solution=r)) for r in out.refused),
        )
        if out.abstained:
            e.record(("monitor", events.Abstained(agents=list(out.abstained))))
        if not out.solutions:  # nothing left to monitor or score: its own outcome, not a veto
            return s.model_copy(
                update={
                    "phase": "done",
                    "round": 0,
                    "solutions": {},
                    "status": "abstained",
                    "pending_refused": len(out.refused),
                }
            )
        return s.model_copy(
            update={
                "phase": "monitor",
                "round": 0,
                "solutions": out.solutions,
                "pending_refused": len(out.refused),
            }
        )

    def _observe(self, e: Engine, s: RunState, magnitude: float, adopted: int) -> RunState:
        solutions = [s.solutions[k] for k in sorted(s.solutions)]
        report = monitor.observe(
            solutions,
            threshold=self.calibrations.similarity_threshold,
            sufficiency=self.request.sufficiency,
            embedder=self.embedder,
            regeneration=s.regeneration,
            round=s.round,
        )
        e.record(("monitor", events.Clusters.of(report)))
        previous_calls = sum(m.calls for m in s.metrics)
        previous_tokens = sum(m.tokens for m in s.metrics)
        metrics = RoundMetrics(
            regeneration=s.regeneration,
            round=s.round,
            agents=len(solutions),
            distinct_conclusions=report.distinct_conclusions,
            revision_magnitude=round(magnitude, 6),
            diversity=monitor.diversity(solutions, self.embedder),
            adopted_points=adopted,
            refused_repeats=s.pending_refused,
            calls=e.caller.usage.calls - previous_calls,
            tokens=e.caller.usage.tokens - previous_tokens,
        )
        # The spec's loop: every agent critiques every other and revises at least
        # ``min_rounds`` times before the monitor may halt (with a peer to critique).
        debated = s.round >= self.limits.min_rounds or len(solutions) < 2
        halted = report.halted and debated
        if halted:
            phase: Phase = "score"
        elif s.round >= self.limits.max_rounds:
            e.record(
                (
                    "monitor",
                    events.NonConverged(
                        rounds=s.round,
                        distinct=report.distinct_conclusions,
                        sufficiency=self.request.sufficiency,
                    ),
                )
            )
            phase = "score"
        else:
            phase = "critique"
        status = None if halted or phase == "critique" else "non_converged"
        return s.model_copy(
            update={
                "phase": phase,
                "monitor": (*s.monitor, report),
                "metrics": (*s.metrics, metrics),
                "status": status,
                "pending_refused": 0,
            }
        )

    async def _critique(self, e: Engine, s: RunState) -> RunState:
        crits = await theory.critique(
            e.caller,
            self.knowledge.theory_agents,
            s.solutions,
            self.context,
            mode=self.request.critique_mode,
        )
        e.record(*((c.critic_id, events.CritiqueGiven.of(c)) for c in crits))
        return s.model_copy(update={"phase": "revise", "critiques": tuple(crits)})

    async def _revise(self, e: Engine, s: RunState) -> RunState:
        out = await theory.revise(
            e.caller,
            self.knowledge.theory_agents,
            s.solutions,
            s.critiques,
            self.context,
            stubbornness=self.calibrations.stubbornness,
            round=s.round + 1,
            is_repeat=self._repeat_check(s.excluded),
        )
        e.record(
            *((sol.agent_id, events.Revision.of(sol)) for sol in out.solutions.values()),
            *(("monitor", events.RepeatRefused(solution=r)) for r in out.refused),
        )
        s = s.model_copy(
            update={
                "solutions": out.solutions,
                "critiques": (),
                "last_critiques": s.critiques,
                "criticised": {sol.id: sol for sol in s.solutions.values()},
                "round": s.round + 1,
                "total_rounds": s.total_rounds + 1,
                "pending_refused": len(out.refused),
            }
        )
        adopted = sum(len(x.adopted) for x in out.solutions.values())
        return self._observe(e, s, out.magnitude(), adopted)

    # -- what a baseline changes -------------------------------------------------------------
    @functools.cached_property
    def agents(self) -> list[theory.TheoryAgent]:
        """The theory agents that propose (the result's ``n_agents``)."""
        return self.knowledge.theory_agents

    def _finalists(self, s: RunState) -> list[Solution]:
        """The solutions the practicality network scores: the whole set."""
        return [s.solutions[k] for k in sorted(s.solutions)]

    def _vetoed(self, s: RunState, finalists: list[Solution]) -> list[SolutionView]:
        """What a veto excludes from the next generation: the set it vetoed."""
        return [sol.view() for sol in finalists]

    def _after_pass(self) -> Phase:
        return "synthesize"

    def _tie(self, s: RunState) -> bool:
        return False

    async def _score(self, e: Engine, s: RunState) -> RunState:
        solutions = self._finalists(s)
        scored = await e.score(
            self.knowledge.constraint_agents,
            [(sol.id, sol.view()) for sol in solutions],
            severity=self.calibrations.severity,
            context=self.context,
            mode=self.request.score_mode,
        )
        verdict = practicality.judge(
            scored.per_solution,
            feasibility=self.request.feasibility,
            severity=self.calibrations.severity,
            regeneration=s.regeneration,
        )
        verdicts = (*s.verdicts, verdict)
        if s.status == "non_converged" and not verdict.vetoed:
            # The set did not converge but clears practicality: reported as it stands.
            e.record(("practicality", events.Verdict.of(verdict)))
            return s.model_copy(update={"phase": self._after_pass(), "verdicts": verdicts})
        if not verdict.vetoed:
            e.record(
                (
                    "practicality",
                    events.Pass(mean_score=verdict.mean_score, feasibility=verdict.feasibility),
                )
            )
            return s.model_copy(
                update={"phase": self._after_pass(), "verdicts": verdicts, "status": "converged"}
            )
        excluded = (*s.excluded, *self._vetoed(s, solutions))
        e.record(
            (
                "practicality",
                events.Veto(
                    mean_score=verdict.mean_score,
                    feasibility=verdict.feasibility,
                    regeneration=s.regeneration,
                    vetoed_solutions=[sol.id for sol in solutions],
                ),
            )
        )
        if s.regeneration >= self.limits.max_regenerations:
            return s.model_copy(
                update={
                    "phase": "done",
                    "verdicts": verdicts,
                    "status": "vetoed_out",
                    "excluded": excluded,
                }
            )
        return s.model_copy(
            update={
                "phase": "generate",
                "verdicts": verdicts,
                "excluded": excluded,
                "regeneration": s.regeneration + 1,
                "round": 0,
                "solutions": {},
                "status": None,
            }
        )

    async def _synthesize(self, e: Engine, s: RunState) -> RunState:
        """The monitor asks the model for each final cluster's combined rationale (clustering,
        counting and halting stay deterministic; this call is audited and cached like any)."""
        report = s.monitor[-1]
        scores = s.verdicts[-1].scores if s.verdicts else ()
        tasks = [
            monitor.synthesis_task(
                self.context,
                cluster,
                s.solutions,
                s.last_critiques,
                criticised=s.criticised,
                scores=scores,
            )
            for cluster in report.clusters
        ]
        outs = await asyncio.gather(*(e.caller.ask("monitor", t, RationaleOutput) for t in tasks))
        rationales = {t.cluster_index: o.text() for t, o in zip(tasks, outs, strict=True)}
        e.record(("monitor", events.Rationales.of(rationales)))
        return s.model_copy(update={"phase": "done", "rationales": rationales})

    async def step(self, e: Engine, s: RunState) -> RunState:
        """The state after the phase ``s`` is at (`Engine.drive` checkpoints it)."""
        if s.phase == "generate":
            return await self._generate(e, s)
        if s.phase == "monitor":
            return self._observe(e, s, 0.0, 0)
        if s.phase == "critique":
            return await self._critique(e, s)
        if s.phase == "revise":
            return await self._revise(e, s)
        if s.phase == "synthesize":
            return await self._synthesize(e, s)
        return await self._score(e, s)

    # -- driver ------------------------------------------------------------------------------
    async def run(self, engine: Engine) -> DeliberationResult:
        """Run (or continue) phases until done; returns the result and writes result.json."""
        return await engine.drive(self)

    def result(self, engine: Engine, s: RunState) -> DeliberationResult:
        """The one result every strategy's run ends in (built from its final state)."""
        solutions = [s.solutions[k] for k in sorted(s.solutions)]
        last_report = s.monitor[-1] if s.monitor else None
        verdict = (
            s.verdicts[-1] if s.verdicts and s.verdicts[-1].regeneration == s.regeneration else None
        )
        conclusions = (
            monitor.aggregate(last_report, solutions, verdict, rationales=s.rationales)
            if last_report is not None and s.status in ("converged", "non_converged")
            else ()
        )
        status = s.status or "non_converged"
        if status in ("converged", "non_converged") and (
            without_evidence(solutions) or recommends_without_evidence(conclusions, solutions)
        ):
            status = "no_evidence"  # the plan rests on nothing: no conclusion from the knowledge
        return DeliberationResult(
            status=status,
            problem_id=self.request.problem_id,
            options=self.request.options,
            options_source=self.request.options_source,
            exclusive=self.request.exclusive,
            exclusive_source=self.request.exclusive_source,
            rounds=s.round,
            total_rounds=s.total_rounds,
            regenerations=s.regeneration,
            n_agents=len(self.agents),
            conclusions=conclusions,
            vetoes=s.verdicts,
            monitor=s.monitor,
            metrics=s.metrics,
            usage=engine.caller.usage,
            wall_time_s=s.elapsed_s,
            tie=self._tie(s),
        )
