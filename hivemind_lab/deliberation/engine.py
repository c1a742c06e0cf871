"""The deliberation engine: the state machine of one run, bound to its run directory.

generate → monitor → critique → revise → monitor … → score → synthesize → done. After every
phase the state is checkpointed atomically in the run directory. Every model reply lands in the
run's response cache before it is used, so `resume` after a crash (even ``kill -9`` mid-phase)
redoes only the interrupted phase, and every call that phase had completed is served from the
cache: no completed call is repeated, and the result is the same as an uninterrupted run.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from hivemind_lab.agents.caller import AgentCaller, BudgetExhausted
from hivemind_lab.agents.schemas import RationaleOutput, SolutionView
from hivemind_lab.deliberation import monitor, practicality, theory
from hivemind_lab.deliberation.embedders import Embedder, make_embedder
from hivemind_lab.deliberation.state import (
    Knowledge,
    Phase,
    Progress,
    ProgressCallback,
    RunState,
)
from hivemind_lab.inputs import Calibrations, DeliberationRequest, Limits
from hivemind_lab.llm.base import ChatModel
from hivemind_lab.llm.cache import CachingChatModel, ResponseCache
from hivemind_lab.runs.audit import AuditLog
from hivemind_lab.runs.results import DeliberationResult, RoundMetrics, Solution
from hivemind_lab.runs.rundir import RunDir, write_json_atomic
from hivemind_lab.text import normalise


def _magnitude(old: Solution, new: Solution) -> float:
    a = {normalise(r) for r in old.recommendations}
    b = {normalise(r) for r in new.recommendations}
    return 1.0 - len(a & b) / len(a | b) if a | b else 0.0


class Deliberation:
    """One deliberation run bound to a run directory."""

    def __init__(
        self,
        request: DeliberationRequest,
        calibrations: Calibrations,
        limits: Limits,
        *,
        model: ChatModel,
        knowledge: Knowledge,
        run_dir: Path,
        seed: int,
        embedder: Embedder | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> None:
        self.request = request
        self.context = request.context()
        self.calibrations = calibrations
        self.limits = limits
        self.knowledge = knowledge
        self.run_dir = run_dir
        self.seed = seed
        self.embedder = embedder or make_embedder()
        self.on_progress = on_progress
        # The anchor (truncation guard) is refreshed at every checkpoint and on close.
        self.files = RunDir(run_dir)
        self.audit = AuditLog(self.files.audit_path, anchor_every=0)
        self.cache = ResponseCache(self.files.cache_path, commit_interval=0.5)  # run-private
        self.model = CachingChatModel(model, self.cache)
        self.state = self._load_state()
        self.caller = AgentCaller(
            self.model,
            audit=self.audit,
            seed=seed,
            concurrency=limits.concurrency,
            max_tokens=limits.max_tokens,
            max_cost_usd=limits.max_cost_usd,
            usage=self.state.usage,
            batch_audit=True,
        )

    # -- state -------------------------------------------------------------------------------
    @property
    def _state_path(self) -> Path:
        return self.files.checkpoint_path

    def _load_state(self) -> RunState:
        if self._state_path.exists():
            state = RunState.model_validate_json(self._state_path.read_text("utf-8"))
            self.audit.append(
                "engine",
                "engine.resume",
                {"phase": state.phase, "regeneration": state.regeneration, "round": state.round},
            )
            return state
        return RunState()

    def _commit(self, state: RunState, started: float) -> None:
        # A phase's call records and replies are made durable together, before its checkpoint.
        self.caller.flush()
        self.cache.flush()
        state = state.model_copy(
            update={
                "usage": self.caller.usage,
                "elapsed_s": round(self.state.elapsed_s + time.perf_counter() - started, 6),
            }
        )
        write_json_atomic(self._state_path, state.model_dump(mode="json"), indent=None)
        self.audit.append(
            "engine",
            "engine.checkpoint",
            {"phase": state.phase, "regeneration": state.regeneration, "round": state.round},
        )
        self.audit.anchor()
        self.state = state
        if self.on_progress:
            last = state.monitor[-1].distinct_conclusions if state.monitor else None
            self.on_progress(
                Progress(
                    state.phase,
                    state.regeneration,
                    state.round,
                    self.caller.usage.calls,
                    self.caller.usage.tokens,
                    last,
                )
            )

    def _repeat_check(self, excluded: tuple[SolutionView, ...]) -> theory.RepeatCheck:
        threshold = self.calibrations.similarity_threshold

        def check(view: SolutionView) -> bool:
            return monitor.is_repeat(view, excluded, threshold, self.embedder)

        return check

    # -- phases ------------------------------------------------------------------------------
    async def _generate(self, s: RunState) -> RunState:
        out = await theory.propose(
            self.caller,
            self.knowledge.theory_agents,
            self.context,
            regeneration=s.regeneration,
            excluded=s.excluded,
            is_repeat=self._repeat_check(s.excluded),
        )
        self.caller.flush()
        self.audit.extend(
            [
                (sol.agent_id, "theory.proposal", sol.model_dump(mode="json"))
                for sol in out.solutions.values()
            ]
            + [("monitor", "theory.repeat_refused", {"solution": r}) for r in out.refused]
        )
        if out.abstained:
            self.audit.append("monitor", "theory.abstained", {"agents": list(out.abstained)})
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

    def _observe(self, s: RunState, before: dict[str, Solution] | None, adopted: int) -> RunState:
        solutions = [s.solutions[k] for k in sorted(s.solutions)]
        report = monitor.observe(
            solutions,
            threshold=self.calibrations.similarity_threshold,
            sufficiency=self.request.sufficiency,
            embedder=self.embedder,
            regeneration=s.regeneration,
            round=s.round,
        )
        self.audit.append("monitor", "monitor.clusters", report.model_dump(mode="json"))
        previous_calls = sum(m.calls for m in s.metrics)
        previous_tokens = sum(m.tokens for m in s.metrics)
        magnitude = (
            sum(_magnitude(before[k], s.solutions[k]) for k in s.solutions if k in before)
            / max(1, len(s.solutions))
            if before
            else 0.0
        )
        metrics = RoundMetrics(
            regeneration=s.regeneration,
            round=s.round,
            agents=len(solutions),
            distinct_conclusions=report.distinct_conclusions,
            revision_magnitude=round(magnitude, 6),
            diversity=monitor.diversity(solutions, self.embedder),
            adopted_points=adopted,
            refused_repeats=s.pending_refused,
            calls=self.caller.usage.calls - previous_calls,
            tokens=self.caller.usage.tokens - previous_tokens,
        )
        if report.halted:
            phase: Phase = "score"
        elif s.round >= self.limits.max_rounds:
            self.audit.append(
                "monitor",
                "monitor.non_converged",
                {
                    "rounds": s.round,
                    "distinct": report.distinct_conclusions,
                    "sufficiency": self.request.sufficiency,
                },
            )
            phase = "score"
        else:
            phase = "critique"
        status = None if report.halted or phase == "critique" else "non_converged"
        return s.model_copy(
            update={
                "phase": phase,
                "monitor": (*s.monitor, report),
                "metrics": (*s.metrics, metrics),
                "status": status,
                "pending_refused": 0,
            }
        )

    async def _critique(self, s: RunState) -> RunState:
        crits = await theory.critique(
            self.caller,
            self.knowledge.theory_agents,
            s.solutions,
            self.context,
            mode=self.request.critique_mode,
        )
        self.caller.flush()
        self.audit.extend(
            [(c.critic_id, "theory.critique", c.model_dump(mode="json")) for c in crits]
        )
        return s.model_copy(update={"phase": "revise", "critiques": tuple(crits)})

    async def _revise(self, s: RunState) -> RunState:
        out = await theory.revise(
            self.caller,
            self.knowledge.theory_agents,
            s.solutions,
            s.critiques,
            self.context,
            stubbornness=self.calibrations.stubbornness,
            round=s.round + 1,
            is_repeat=self._repeat_check(s.excluded),
        )
        self.caller.flush()
        self.audit.extend(
            [
                (sol.agent_id, "theory.revision", sol.model_dump(mode="json"))
                for sol in out.solutions.values()
            ]
            + [("monitor", "theory.repeat_refused", {"solution": r}) for r in out.refused]
        )
        before = s.solutions
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
        return self._observe(s, before, adopted)

    async def _score(self, s: RunState) -> RunState:
        solutions = [s.solutions[k] for k in sorted(s.solutions)]
        scores, expanded = await practicality.score_set(
            self.caller,
            self.knowledge.constraint_agents,
            [(sol.id, sol.view()) for sol in solutions],
            severity=self.calibrations.severity,
            context=self.context,
        )
        self.caller.flush()
        self.audit.extend(
            [
                (f"constraint-{x.constraint}", "practicality.score", x.model_dump(mode="json"))
                for x in scores
            ]
        )
        verdict = practicality.judge(
            expanded,
            feasibility=self.request.feasibility,
            severity=self.calibrations.severity,
            regeneration=s.regeneration,
        )
        verdicts = (*s.verdicts, verdict)
        if s.status == "non_converged" and not verdict.vetoed:
            # The set did not converge but clears practicality: reported as it stands.
            self.audit.append(
                "practicality",
                "practicality.verdict",
                verdict.model_dump(
                    mode="json", include={"mean_score", "per_constraint", "feasibility", "vetoed"}
                ),
            )
            return s.model_copy(update={"phase": "synthesize", "verdicts": verdicts})
        if not verdict.vetoed:
            self.audit.append(
                "practicality",
                "practicality.pass",
                {"mean_score": verdict.mean_score, "feasibility": verdict.feasibility},
            )
            return s.model_copy(
                update={"phase": "synthesize", "verdicts": verdicts, "status": "converged"}
            )
        excluded = (*s.excluded, *(sol.view() for sol in solutions))
        self.audit.append(
            "practicality",
            "practicality.veto",
            {
                "mean_score": verdict.mean_score,
                "feasibility": verdict.feasibility,
                "regeneration": s.regeneration,
                "vetoed_solutions": [sol.id for sol in solutions],
            },
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

    async def _synthesize(self, s: RunState) -> RunState:
        """The monitor asks the model for each final cluster's combined rationale (clustering,
        counting and halting stay deterministic; this call is audited and cached like any)."""
        report = s.monitor[-1]
        tasks = [
            monitor.synthesis_task(
                self.context, cluster, s.solutions, s.last_critiques, criticised=s.criticised
            )
            for cluster in report.clusters
        ]
        outs = await asyncio.gather(
            *(self.caller.ask("monitor", t, RationaleOutput) for t in tasks)
        )
        self.caller.flush()
        rationales = {t.cluster_index: o.text() for t, o in zip(tasks, outs, strict=True)}
        self.audit.append(
            "monitor", "monitor.rationales", {str(k): v for k, v in rationales.items()}
        )
        return s.model_copy(update={"phase": "done", "rationales": rationales})

    # -- driver ------------------------------------------------------------------------------
    async def run(self) -> DeliberationResult:
        """Run (or continue) phases until done; returns the result and writes result.json."""
        started = time.perf_counter()
        try:
            while self.state.phase != "done":
                s = self.state
                try:
                    if s.phase == "generate":
                        nxt = await self._generate(s)
                    elif s.phase == "monitor":
                        nxt = self._observe(s, None, 0)
                    elif s.phase == "critique":
                        nxt = await self._critique(s)
                    elif s.phase == "revise":
                        nxt = await self._revise(s)
                    elif s.phase == "synthesize":
                        nxt = await self._synthesize(s)
                    else:
                        nxt = await self._score(s)
                except BudgetExhausted as exc:
                    self.audit.append("engine", "engine.budget_exhausted", {"reason": str(exc)})
                    nxt = s.model_copy(update={"phase": "done", "status": "budget_exhausted"})
                self._commit(nxt, started)
                started = time.perf_counter()
            result = self._result()
            self.audit.append(
                "engine",
                "engine.result",
                {"status": result.status, "conclusions": len(result.conclusions)},
            )
            result = result.model_copy(
                update={"audit_head": self.audit.head, "audit_records": self.audit.count}
            )
            self.files.write_result(result)
            return result
        finally:
            self.caller.flush()
            self.audit.close()
            self.cache.close()

    def _result(self) -> DeliberationResult:
        s = self.state
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
        return DeliberationResult(
            status=s.status or "non_converged",
            problem_id=self.request.problem_id,
            options=self.request.options,
            options_source=self.request.options_source,
            exclusive=self.request.exclusive,
            exclusive_source=self.request.exclusive_source,
            rounds=s.round,
            total_rounds=s.total_rounds,
            regenerations=s.regeneration,
            n_agents=len(self.knowledge.theory_agents),
            conclusions=conclusions,
            vetoes=s.verdicts,
            monitor=s.monitor,
            metrics=s.metrics,
            usage=self.caller.usage,
            wall_time_s=s.elapsed_s,
        )
