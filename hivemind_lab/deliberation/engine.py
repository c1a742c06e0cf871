"""The engine: the one wiring of a run directory, and the one way to run a manifest.

Every strategy (the deliberation, the vote and single-agent baselines, the compliance rescore)
runs through an `Engine` bound to its run directory: the response cache every model reply lands
in before it is used, the hash-chained audit log, the agent caller (concurrency, budgets, usage),
the practicality network's scoring and the checkpoint of the last completed phase. A strategy is
a phase plan (`hivemind_lab.deliberation.strategies`): which phases run and how a set is judged.

`Engine.drive` is the one phase loop: every strategy's phases (the deliberation's, a baseline's,
a rescore's continued deliberation) run through it, checkpointed after each, and end in the one
result (`Engine.finish`). `runner.run_manifest` starts or continues the run a manifest describes;
the synchronous entries (`deliberate`, `compliance.rescore`) wrap one event loop each at the
edge with `asyncrun.run_sync`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Protocol, TypeVar

from hivemind_lab.agents.caller import AgentCaller, BudgetExhausted
from hivemind_lab.agents.schemas import DecisionContext, SolutionView
from hivemind_lab.agents.usage import UsageSummary
from hivemind_lab.deliberation import practicality
from hivemind_lab.deliberation.state import Progress, ProgressCallback, RunState
from hivemind_lab.errors import InputError
from hivemind_lab.inputs import Limits, ScoreMode
from hivemind_lab.llm.base import ChatModel, model_name
from hivemind_lab.llm.cache import CachingChatModel, ResponseCache
from hivemind_lab.llm.limits import ModelLimits
from hivemind_lab.runs import events
from hivemind_lab.runs.audit import AuditLog
from hivemind_lab.runs.results import DeliberationResult, ModelShare
from hivemind_lab.runs.rundir import RunDir, write_json_atomic

R = TypeVar("R", covariant=True)


class Strategy(Protocol[R]):
    """What `Engine.run` runs: a phase plan (through `Engine.drive`), or the rescore, which
    judges recorded sets before it may drive one."""

    async def run(self, engine: Engine) -> R: ...


class PhasePlan(Protocol):
    """The phases of a run: `Engine.drive` calls ``step`` until the phase is ``done``,
    checkpointing after each, then seals ``result``. A plan asks through ``engine.caller`` and
    records through ``engine.record``."""

    async def step(self, engine: Engine, state: RunState) -> RunState: ...

    def result(self, engine: Engine, state: RunState) -> DeliberationResult: ...


class Engine:
    """One run directory's wiring: cache, audit log, caller, scoring and checkpoints.

    Opening an engine on a directory with a checkpoint continues from it (``state``), and the
    caller's usage continues from the checkpoint's.

    Args:
        run_dir: the run directory (created if missing).
        model: the chat model agents speak through (wrapped in the run's own response cache).
        models: with a roster, every agent's model by agent id (each wrapped in the same cache,
            whose keys name the model); None: ``model`` for every agent.
        limits_for: the token limits an agent's prompts are packed to, by agent id
            (`runner.limits_for`); None: no packing.
        seed: the run's seed.
        limits: concurrency, and the token and cost budgets when ``spend_limits``.
        spend_limits: whether `Limits.max_tokens` and `Limits.max_cost_usd` bind the caller
            (a baseline's budget is its sibling's spend, counted by the baseline itself).
        on_progress: called after every checkpoint.
    """

    def __init__(
        self,
        run_dir: str | Path,
        *,
        model: ChatModel,
        models: Mapping[str, ChatModel] | None = None,
        limits_for: Callable[[str], ModelLimits | None] | None = None,
        seed: int,
        limits: Limits,
        spend_limits: bool = True,
        on_progress: ProgressCallback | None = None,
    ) -> None:
        self.files = RunDir(run_dir)
        self.files.path.mkdir(parents=True, exist_ok=True)
        self.on_progress = on_progress
        # The anchor (truncation guard) is refreshed at every checkpoint and on close.
        self.audit = AuditLog(self.files.audit_path, anchor_every=0)
        self.cache = ResponseCache(self.files.cache_path, commit_interval=0.5)  # run-private
        self.state = self._load_state()
        cached = {id(m): CachingChatModel(m, self.cache) for m in (model, *(models or {}).values())}
        self.caller = AgentCaller(
            cached[id(model)],
            models={agent: cached[id(m)] for agent, m in (models or {}).items()},
            usage_by_model=self.state.usage_by_model,
            limits_for=limits_for,
            audit=self.audit,
            seed=seed,
            concurrency=limits.concurrency,
            max_tokens=limits.max_tokens if spend_limits else None,
            max_cost_usd=limits.max_cost_usd if spend_limits else None,
            usage=self.state.usage,
            batch_audit=True,
        )

    # -- records -----------------------------------------------------------------------------
    def record(self, *entries: events.Entry) -> None:
        """Write events to the audit log after the call records that led to them."""
        self.caller.flush()
        self.audit.extend(entries)

    async def score(
        self,
        agents: Sequence[practicality.ConstraintAgent],
        solutions: Sequence[tuple[str, SolutionView]],
        *,
        severity: float,
        context: DecisionContext,
        mode: ScoreMode = "per_solution",
    ) -> practicality.ScoredSet:
        """The practicality network scores a set; every score is audited."""
        scored = await practicality.score_set(
            self.caller, agents, solutions, severity=severity, context=context, mode=mode
        )
        self.record(*((f"constraint-{x.constraint}", events.Score.of(x)) for x in scored.scored))
        return scored

    # -- checkpoints -------------------------------------------------------------------------
    def _load_state(self) -> RunState:
        path = self.files.checkpoint_path
        if path.exists():
            state = RunState.model_validate_json(path.read_text("utf-8"))
            self.audit.append("engine", events.Resume.at(state))
            return state
        return RunState()

    def commit(self, state: RunState, started: float) -> None:
        """Checkpoint a completed phase: its call records and replies are made durable first."""
        self.caller.flush()
        self.cache.flush()
        state = state.model_copy(
            update={
                "usage": self.caller.usage,
                "usage_by_model": self.caller.usage_by_model,
                "elapsed_s": round(self.state.elapsed_s + time.perf_counter() - started, 6),
            }
        )
        write_json_atomic(self.files.checkpoint_path, state.model_dump(mode="json"), indent=None)
        self.audit.append("engine", events.Checkpoint.at(state))
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

    def spend_within(self, limits: Limits) -> None:
        """From now on the run's token and cost budgets bind the caller (a rescore's re-judging
        is not bound; the deliberation it continues is)."""
        self.caller.max_tokens = limits.max_tokens
        self.caller.max_cost_usd = limits.max_cost_usd

    # -- driver ------------------------------------------------------------------------------
    async def run(self, strategy: Strategy[R]) -> R:
        """Run a strategy to its end; the log, cache and caller are closed whatever happens."""
        try:
            return await strategy.run(self)
        finally:
            self.close()

    async def drive(self, plan: PhasePlan) -> DeliberationResult:
        """Run (or continue) a plan's phases from ``state`` until done, checkpointing after
        each; a spent budget ends the run as ``budget_exhausted``. Seals the result."""
        started = time.perf_counter()
        while self.state.phase != "done":
            s = self.state
            try:
                nxt = await plan.step(self, s)
            except BudgetExhausted as exc:
                self.record(("engine", events.BudgetExhausted(reason=str(exc))))
                nxt = s.model_copy(update={"phase": "done", "status": "budget_exhausted"})
            self.commit(nxt, started)
            started = time.perf_counter()
        return self.finish(plan.result(self, self.state))

    def finish(self, result: DeliberationResult) -> DeliberationResult:
        """Seal a run: the result event, the audit head in the result, result.json written."""
        self.record(
            ("engine", events.Result(status=result.status, conclusions=len(result.conclusions)))
        )
        result = result.model_copy(
            update={
                "audit_head": self.audit.head,
                "audit_records": self.audit.count,
                "models": self.model_shares(),
            }
        )
        self.files.write_result(result)
        return result

    def model_shares(self) -> tuple[ModelShare, ...]:
        """With a roster, each model: the agents it answered for and what its calls consumed
        (empty without one: the manifest's one model answered for all)."""
        agents: dict[str, list[str]] = {}
        for agent, m in sorted(self.caller.models.items()):
            agents.setdefault(model_name(m), []).append(agent)
        used = self.caller.usage_by_model
        return tuple(
            ModelShare(
                model=name,
                agents=tuple(agents.get(name, ())),
                usage=used.get(name, UsageSummary()),
            )
            for name in sorted({*agents, *used})
        )

    def close(self) -> None:
        self.caller.flush()
        self.audit.close()
        self.cache.close()


def check_run_dir(run_dir: Path, *, resume: bool) -> None:
    """A new run needs a new or empty directory; a resumed one needs a manifest."""
    if resume and not RunDir(run_dir).started:
        raise InputError(
            "resume",
            f"{str(run_dir)!r} holds no run to resume",
            allowed="a run directory with manifest.json",
        )
    if not resume and run_dir.exists() and any(run_dir.iterdir()):
        raise InputError(
            "out",
            f"{str(run_dir)!r} already holds files",
            allowed="a new or empty directory (or --resume to continue a run)",
        )
