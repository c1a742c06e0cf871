"""The deliberation runner: the one place that wires the stages together.

knowledge → theory network → monitor → practicality network → results and audit.

The run is a small state machine (generate → monitor → critique → revise → monitor … → score);
after every phase its state is checkpointed atomically in the run directory. Every model reply
lands in the run's response cache before it is used, so `resume` after a crash (even ``kill -9``
mid-phase) redoes only the interrupted phase, and every call that phase had completed is served
from the cache: no completed call is repeated, and the result is the same as an uninterrupted run.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from hivemind_lab import monitor, practicality, theory
from hivemind_lab.agents.caller import AgentCaller, BudgetExhausted
from hivemind_lab.agents.prompts import PROMPT_VERSION
from hivemind_lab.agents.schemas import RationaleOutput, SolutionView
from hivemind_lab.asyncrun import run_sync
from hivemind_lab.audit.log import AuditLog
from hivemind_lab.errors import InputError
from hivemind_lab.inputs import Calibrations, DeliberationRequest, Limits
from hivemind_lab.knowledge import fingerprint
from hivemind_lab.knowledge.documents import Document, load_documents
from hivemind_lab.knowledge.slicing import SlicingResult, plan_slices
from hivemind_lab.llm.base import ChatModel
from hivemind_lab.llm.cache import CachingChatModel, ResponseCache
from hivemind_lab.monitor import Embedder, make_embedder
from hivemind_lab.results import (
    Critique,
    DeliberationResult,
    MonitorReport,
    PracticalityVerdict,
    RoundMetrics,
    Solution,
    Status,
    UsageSummary,
)
from hivemind_lab.runs import (
    Budget,
    EmbedderInfo,
    ExperimentInfo,
    KnowledgeHashes,
    RunDir,
    RunManifest,
    SlicingInfo,
    Strategy,
    environment,
    utc_now,
    write_json_atomic,
)
from hivemind_lab.runs import load_result as load_result
from hivemind_lab.text import normalise
from hivemind_lab.tokens import default_counter

Phase = Literal["generate", "monitor", "critique", "revise", "score", "synthesize", "done"]
STATE_VERSION = 1


class RunState(BaseModel):
    """Everything needed to continue a run after its last completed phase."""

    model_config = ConfigDict(frozen=True)

    schema_version: int = STATE_VERSION
    phase: Phase = "generate"
    regeneration: int = 0
    round: int = 0
    total_rounds: int = 0
    solutions: dict[str, Solution] = {}
    critiques: tuple[Critique, ...] = ()
    excluded: tuple[SolutionView, ...] = ()
    last_critiques: tuple[Critique, ...] = ()
    """The last round's critiques (the objections the final solutions answer to)."""
    rationales: dict[int, str] = {}
    """Combined rationale per final cluster index, written by the model."""
    monitor: tuple[MonitorReport, ...] = ()
    verdicts: tuple[PracticalityVerdict, ...] = ()
    metrics: tuple[RoundMetrics, ...] = ()
    usage: UsageSummary = UsageSummary()
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


def prepare_knowledge(
    request: DeliberationRequest,
    *,
    knowledge_base: str | Path,
    practicality_kb: str | Path,
    seed: int,
) -> Knowledge:
    """Load and slice the knowledge base and build both networks' agents.

    Parsed documents and constraint agents are kept per process while their files are unchanged
    (a sweep's points share them: parsing is a third of an offline run's CPU).
    """
    docs = _documents(str(Path(knowledge_base).resolve()), _stamp(knowledge_base))
    slicing = plan_slices(list(docs), request.density, seed=seed)
    by_id = {d.id: d for d in docs}
    agents = theory.build_agents(
        slicing.slices, by_id, (*request.client_data, *request.market_data)
    )
    constraints = practicality.resolve_constraints(practicality_kb, request.profile)
    constraint_agents = _constraint_agents(
        str(Path(practicality_kb).resolve()), constraints, _stamp(practicality_kb)
    )
    return Knowledge(by_id, slicing, list(agents), list(constraint_agents))


Stamp = tuple[tuple[str, int, int], ...]


def _stamp(folder: str | Path) -> Stamp:
    """Every file under ``folder`` with its modification time and size."""
    root = Path(folder)
    files = [root] if root.is_file() else [p for p in root.rglob("*") if p.is_file()]
    return tuple(sorted((str(p), p.stat().st_mtime_ns, p.stat().st_size) for p in files))


@functools.lru_cache(maxsize=8)
def _documents(folder: str, stamp: Stamp) -> tuple[Document, ...]:
    return tuple(load_documents(folder, counter=default_counter()))


@functools.lru_cache(maxsize=8)
def _constraint_agents(
    folder: str, constraints: tuple[str, ...], stamp: Stamp
) -> tuple[practicality.ConstraintAgent, ...]:
    return tuple(
        practicality.build_constraint_agents(folder, constraints, counter=default_counter())
    )


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
        self.cache = ResponseCache(self.files.cache_path)
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
            monitor.synthesis_task(self.context, cluster, s.solutions, s.last_critiques)
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


def model_info(model: ChatModel) -> dict[str, Any]:
    """The backend's own description (``model_info``), looked up through wrappers."""
    seen: Any = model
    while seen is not None:
        info = getattr(seen, "model_info", None)
        if isinstance(info, dict):
            return dict(info)
        seen = getattr(seen, "inner", None)
    return {}


def build_manifest(
    request: DeliberationRequest,
    calibrations: Calibrations,
    limits: Limits,
    *,
    model: ChatModel,
    seed: int,
    knowledge: Knowledge,
    knowledge_base: str | Path,
    practicality_kb: str | Path,
    embedder: Embedder,
    strategy: Strategy = "deliberation",
    experiment: ExperimentInfo | None = None,
    budget: Budget | None = None,
) -> RunManifest:
    """Everything needed to understand and rebuild the run."""
    return RunManifest(
        created_at=utc_now(),
        strategy=strategy,
        request=request,
        calibrations=calibrations,
        limits=limits,
        seed=seed,
        backend=model.backend,
        model=model.model,
        model_info=model_info(model),
        token_counter=default_counter().name,
        prompt_version=PROMPT_VERSION,
        embedder=EmbedderInfo(name=embedder.name, version=embedder.version),
        knowledge_base=str(knowledge_base),
        practicality_kb=str(practicality_kb),
        slicing=SlicingInfo(
            n_agents=knowledge.slicing.n_agents,
            objective=knowledge.slicing.objective,
            first_fit_objective=knowledge.slicing.first_fit_objective,
            method=knowledge.slicing.method,
            coherence=round(knowledge.slicing.coherence, 4),
            slices=knowledge.slicing.slices,
        ),
        constraints=tuple(a.constraint for a in knowledge.constraint_agents),
        knowledge_hashes=KnowledgeHashes(
            theory=fingerprint.knowledge_hash(knowledge.documents.values()),
            constraints=fingerprint.constraint_hashes(
                practicality_kb, [a.constraint for a in knowledge.constraint_agents]
            ),
        ),
        experiment=experiment,
        budget=budget,
        **environment(),
    )


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


async def run_manifest(
    manifest: RunManifest,
    run_dir: str | Path,
    *,
    model: ChatModel,
    resume: bool = False,
    on_progress: ProgressCallback | None = None,
    knowledge: Knowledge | None = None,
) -> DeliberationResult:
    """Run (or continue) the deliberation a manifest describes in ``run_dir``.

    A new run writes the manifest first, so a crash at any later point leaves a resumable run.
    """
    if manifest.strategy != "deliberation":
        raise InputError("strategy", f"{manifest.strategy!r} is a baseline", allowed="deliberation")
    run = RunDir(run_dir)
    check_run_dir(run.path, resume=resume)
    if resume and run.finished:
        return run.read_result()
    knowledge = knowledge or prepare_knowledge(
        manifest.request,
        knowledge_base=manifest.knowledge_base,
        practicality_kb=manifest.practicality_kb,
        seed=manifest.seed,
    )
    run.path.mkdir(parents=True, exist_ok=True)
    if not resume:
        run.write_manifest(manifest)
    runner = Deliberation(
        manifest.request,
        manifest.calibrations,
        manifest.limits,
        model=model,
        knowledge=knowledge,
        run_dir=run.path,
        seed=manifest.seed,
        embedder=make_embedder(manifest.embedder.name),
        on_progress=on_progress,
    )
    if not resume:
        runner.audit.append(
            "client",
            "deliberation.request",
            {
                "request": manifest.request.model_dump(mode="json"),
                "calibrations": manifest.calibrations.model_dump(),
                "limits": manifest.limits.model_dump(),
                "seed": manifest.seed,
                "slices": [s.model_dump() for s in knowledge.slicing.slices],
            },
        )
    return await runner.run()


async def deliberate_async(
    request: DeliberationRequest,
    calibrations: Calibrations | None = None,
    limits: Limits | None = None,
    *,
    model: ChatModel,
    run_dir: str | Path,
    seed: int = 0,
    knowledge_base: str | Path = "data/knowledge",
    practicality_kb: str | Path = "data/practicality",
    embedder: Embedder | None = None,
    on_progress: ProgressCallback | None = None,
    resume: bool = False,
    experiment: ExperimentInfo | None = None,
) -> DeliberationResult:
    """Run a deliberation into ``run_dir`` (see `deliberate`)."""
    run_dir = Path(run_dir)
    if resume:  # the run is rebuilt from its own manifest, whatever the arguments say
        check_run_dir(run_dir, resume=True)
        return await run_manifest(
            RunDir(run_dir).read_manifest(),
            run_dir,
            model=model,
            resume=True,
            on_progress=on_progress,
        )
    check_run_dir(run_dir, resume=False)
    calibrations = calibrations or Calibrations()
    limits = limits or Limits()
    embedder = embedder or make_embedder()
    knowledge = prepare_knowledge(
        request, knowledge_base=knowledge_base, practicality_kb=practicality_kb, seed=seed
    )
    manifest = build_manifest(
        request,
        calibrations,
        limits,
        model=model,
        seed=seed,
        knowledge=knowledge,
        knowledge_base=knowledge_base,
        practicality_kb=practicality_kb,
        embedder=embedder,
        experiment=experiment,
    )
    return await run_manifest(
        manifest, run_dir, model=model, on_progress=on_progress, knowledge=knowledge
    )


def deliberate(
    request: DeliberationRequest,
    calibrations: Calibrations | None = None,
    limits: Limits | None = None,
    *,
    model: ChatModel,
    run_dir: str | Path,
    **options: Any,
) -> DeliberationResult:
    """Run a whole deliberation and write result.json, audit.jsonl and manifest.json.

    Args:
        request: the problem and the sliders (sufficiency, feasibility, density).
        calibrations: stubbornness, similarity threshold and severity.
        limits: rounds, regenerations, budgets and concurrency.
        model: the ChatModel agents speak through (e.g. `OfflineAgentModel()`).
        run_dir: where the run's artifacts go (new or empty, unless ``resume=True``).
        **options: seed, knowledge_base, practicality_kb, embedder, on_progress, resume.
    """
    return run_sync(
        deliberate_async(request, calibrations, limits, model=model, run_dir=run_dir, **options)
    )


def read_manifest(run_dir: str | Path) -> dict[str, Any]:
    """A run's manifest as JSON data (validated and upgraded to the current version by
    `hivemind_lab.runs.read_manifest`, which returns the typed `RunManifest`)."""
    return RunDir(run_dir).read_manifest().model_dump(mode="json")
