"""Run a sweep: every point as a self-describing run directory, locally or on Ray; resumable.

Layout: ``experiments/runs/<experiment>/<run-id>/`` with manifest.json (spec and its hash, the
point, inputs, calibrations, seed, backend/model, token counter, package versions, platform,
git commit), result.json, audit.jsonl, metrics.parquet and cache.sqlite (every reply the run
used, so the run replays alone). Work that does not depend on a calibration — for the same
problem, seed and model the round-0 proposals are identical prompts — is shared through
``shared-cache.sqlite`` of the experiment, so it is computed once per sweep.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import polars as pl
from pydantic import BaseModel, ConfigDict

from hivemind_lab.agents.caller import AgentCaller
from hivemind_lab.asyncrun import run_sync
from hivemind_lab.audit.log import AuditLog
from hivemind_lab.deliberation import (
    deliberate_async,
    load_result,
    prepare_knowledge,
    write_manifest,
)
from hivemind_lab.experiments.baselines import run_baseline
from hivemind_lab.experiments.points import RunPoint, expand
from hivemind_lab.experiments.spec import ExperimentSpec
from hivemind_lab.inputs import Calibrations, DeliberationRequest
from hivemind_lab.llm.base import ChatModel
from hivemind_lab.llm.cache import CachingChatModel, ResponseCache
from hivemind_lab.monitor import TfidfEmbedder
from hivemind_lab.problems import load_problem
from hivemind_lab.results import DeliberationResult
from hivemind_lab.runs import write_json_atomic


class RunSummary(BaseModel):
    """One finished run, as a sweep reports it."""

    model_config = ConfigDict(frozen=True)

    run_id: str
    point: RunPoint
    status: str
    rounds: int
    regenerations: int
    distinct_conclusions: int
    mean_feasibility: float
    vetoes: int
    calls: int
    theory_calls: int
    tokens: int
    reused_calls: int
    """Calls answered by the experiment's shared cache (work reused across sweep points)."""
    skipped: bool = False
    """True when the run was already finished (a resumed sweep)."""


class SweepReport(BaseModel):
    model_config = ConfigDict(frozen=True)

    experiment: str
    root: str
    runs: tuple[RunSummary, ...]
    wall_time_s: float

    @property
    def model_calls(self) -> int:
        """Calls that reached the backend in this invocation."""
        return sum(r.calls - r.reused_calls for r in self.runs if not r.skipped)

    @property
    def reused_calls(self) -> int:
        return sum(r.reused_calls for r in self.runs if not r.skipped)


def make_model(spec: ExperimentSpec) -> ChatModel:
    if spec.backend == "offline":
        from hivemind_lab.llm.offline import OfflineAgentModel

        return OfflineAgentModel()
    from hivemind_lab.llm.openai_backend import OpenAIChatModel, OpenAIConfig

    return OpenAIChatModel(OpenAIConfig.from_env(model=spec.model))


def _request(spec: ExperimentSpec, point: RunPoint, project: Path) -> DeliberationRequest:
    problem = load_problem(project / point.problem)
    return DeliberationRequest.model_validate(
        {
            "problem": problem.question,
            "sufficiency": spec.inputs.sufficiency,
            "feasibility": spec.inputs.feasibility,
            "density": spec.inputs.density,
            "client_data": problem.client_data,
            "market_data": problem.market_data,
            "profile": problem.profile,
            "critique_mode": spec.inputs.critique_mode,
            "problem_id": problem.id,
        }
    )


def summarise(run_dir: Path, point: RunPoint, *, reused: int, skipped: bool) -> RunSummary:
    result = load_result(run_dir)
    theory_calls = sum(m.calls for m in result.metrics)
    last = result.vetoes[-1] if result.vetoes else None
    return RunSummary(
        run_id=run_dir.name,
        point=point,
        status=result.status,
        rounds=result.total_rounds,
        regenerations=result.regenerations,
        distinct_conclusions=result.monitor[-1].distinct_conclusions if result.monitor else 0,
        mean_feasibility=last.mean_score if last else 0.0,
        vetoes=sum(v.vetoed for v in result.vetoes),
        calls=result.usage.calls,
        theory_calls=theory_calls,
        tokens=result.usage.tokens,
        reused_calls=reused,
        skipped=skipped,
    )


def write_metrics(run_dir: Path, point: RunPoint, result: DeliberationResult) -> None:
    """metrics.parquet: one row per round, with the run's calibrations and outcome beside it."""
    last = result.vetoes[-1] if result.vetoes else None
    run_cols = {
        "run_id": run_dir.name,
        "strategy": point.strategy,
        "problem": result.problem_id,
        "seed": point.seed,
        **point.calibrations.model_dump(),
        "status": result.status,
        "halted": result.status == "converged",
        "total_rounds": result.total_rounds,
        "regenerations": result.regenerations,
        "vetoes": sum(v.vetoed for v in result.vetoes),
        "mean_feasibility": last.mean_score if last else None,
        "feasibility_by_constraint": json.dumps(last.per_constraint if last else {}),
        "run_calls": result.usage.calls,
        "run_tokens": result.usage.tokens,
        "cost_usd": result.usage.cost_usd,
        "cache_hits": result.usage.cache_hits,
        "wall_time_s": result.wall_time_s,
    }
    rows = [{**run_cols, **m.model_dump()} for m in result.metrics] or [run_cols]
    tmp = run_dir / "metrics.parquet.tmp"
    pl.DataFrame(rows).write_parquet(tmp)
    tmp.replace(run_dir / "metrics.parquet")


def run_point(
    spec: ExperimentSpec, point: RunPoint, root: Path, project: Path, budget: int | None = None
) -> RunSummary:
    """Run one point into ``root/<run-id>`` (skip it if finished, resume it if interrupted)."""
    run_dir = root / point.run_id(spec)
    if (run_dir / "result.json").exists() and (run_dir / "metrics.parquet").exists():
        return summarise(run_dir, point, reused=0, skipped=True)
    request = _request(spec, point, project)
    shared = ResponseCache(root / "shared-cache.sqlite")
    model = CachingChatModel(make_model(spec), shared)
    extra = {
        "experiment": {
            "name": spec.name,
            "spec_hash": spec.digest,
            "spec": spec.model_dump(mode="json"),
            "point": point.model_dump(mode="json"),
            "run_id": run_dir.name,
        }
    }
    kb, pkb = project / spec.knowledge_base, project / spec.practicality_kb
    try:
        if point.strategy == "deliberation":
            resume = (run_dir / "manifest.json").exists()
            result = run_sync(
                deliberate_async(
                    request,
                    point.calibrations,
                    spec.limits,
                    model=model,
                    run_dir=run_dir,
                    seed=point.seed,
                    knowledge_base=kb,
                    practicality_kb=pkb,
                    resume=resume,
                    manifest_extra=extra,
                )
            )
        else:
            if run_dir.exists():  # a baseline is one short phase: restart it whole
                shutil.rmtree(run_dir)
            result = _run_baseline(
                spec, point, request, model, run_dir, kb, pkb, budget or 1, extra
            )
        write_metrics(run_dir, point, result)
    finally:
        shared.close()
    return summarise(run_dir, point, reused=model.hits, skipped=False)


def _run_baseline(
    spec: ExperimentSpec,
    point: RunPoint,
    request: DeliberationRequest,
    model: ChatModel,
    run_dir: Path,
    kb: Path,
    pkb: Path,
    budget: int,
    extra: dict[str, Any],
) -> DeliberationResult:
    knowledge = prepare_knowledge(request, knowledge_base=kb, practicality_kb=pkb, seed=point.seed)
    run_dir.mkdir(parents=True)
    embedder = TfidfEmbedder()
    write_manifest(
        run_dir,
        request,
        point.calibrations,
        spec.limits,
        model=model,
        seed=point.seed,
        knowledge=knowledge,
        knowledge_base=kb,
        practicality_kb=pkb,
        embedder=embedder,
        extra={**extra, "baseline": {"strategy": point.strategy, "budget": budget}},
    )
    cache = ResponseCache(run_dir / "cache.sqlite")
    audit = AuditLog(run_dir / "audit.jsonl")
    started = time.perf_counter()
    try:
        caller = AgentCaller(
            CachingChatModel(model, cache),
            audit=audit,
            seed=point.seed,
            concurrency=spec.limits.concurrency,
        )
        result = run_sync(
            run_baseline(
                point.strategy,
                request,
                point.calibrations,
                knowledge=knowledge,
                caller=caller,
                budget=budget,
                seed=point.seed,
                embedder=embedder,
            )
        )
        audit.append(
            "engine", "engine.result", {"status": result.status, "strategy": point.strategy}
        )
        result = result.model_copy(
            update={
                "wall_time_s": round(time.perf_counter() - started, 6),
                "audit_head": audit.head,
                "audit_records": audit.count,
            }
        )
    finally:
        audit.close()
        cache.close()
    write_json_atomic(run_dir / "result.json", result.model_dump(mode="json"))
    return result


def _execute(
    jobs: Sequence[tuple[RunPoint, int | None]],
    spec: ExperimentSpec,
    root: Path,
    project: Path,
    *,
    workers: int,
    ray_address: str | None,
    on_done: Callable[[RunSummary], None],
) -> list[RunSummary]:
    if ray_address:
        import ray

        if not ray.is_initialized():
            if ray_address == "local":
                ray.init(num_cpus=max(1, workers), include_dashboard=False, log_to_driver=False)
            else:
                ray.init(address=ray_address, log_to_driver=False)
        task = ray.remote(run_point)
        pending = [task.remote(spec, p, root, project, b) for p, b in jobs]  # type: ignore[call-arg]
        out = []
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            summary = ray.get(done[0])
            on_done(summary)
            out.append(summary)
        return out
    if workers <= 1:
        out = []
        for p, b in jobs:
            summary = run_point(spec, p, root, project, b)
            on_done(summary)
            out.append(summary)
        return out
    with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn")) as pool:
        futures = [pool.submit(run_point, spec, p, root, project, b) for p, b in jobs]
        out = []
        for future in as_completed(futures):
            summary = future.result()
            on_done(summary)
            out.append(summary)
        return out


def objective(summaries: Sequence[RunSummary], name: str) -> float:
    """Lower is better: what an Optuna search minimises."""
    if name == "fewest_conclusions":
        return sum(s.distinct_conclusions for s in summaries) / len(summaries)
    if name == "highest_feasibility":
        return -sum(s.mean_feasibility for s in summaries) / len(summaries)
    return sum(s.rounds + 5 * s.vetoes + 10 * (s.status != "converged") for s in summaries) / len(
        summaries
    )


def run(
    spec: ExperimentSpec,
    *,
    project: str | Path = ".",
    root: str | Path | None = None,
    workers: int = 1,
    ray_address: str | None = None,
    on_done: Callable[[RunSummary], None] | None = None,
    total: Callable[[int], None] | None = None,
) -> SweepReport:
    """Run (or resume) every point of ``spec``; baselines get the same number of theory calls
    as their deliberation sibling."""
    project = Path(project).resolve()
    root = Path(root) if root else project / "experiments" / "runs" / spec.name
    root.mkdir(parents=True, exist_ok=True)
    write_json_atomic(
        root / "spec.json", {"spec": spec.model_dump(mode="json"), "spec_hash": spec.digest}
    )
    done = on_done or (lambda s: None)
    started = time.perf_counter()
    summaries: list[RunSummary] = []
    if spec.space.kind == "optuna":
        summaries = _optuna(
            spec, root, project, workers=workers, ray_address=ray_address, on_done=done, total=total
        )
    else:
        points = expand(spec)
        if total:
            total(len(points))
        delib = [p for p in points if p.strategy == "deliberation"]
        summaries = _execute(
            [(p, None) for p in delib],
            spec,
            root,
            project,
            workers=workers,
            ray_address=ray_address,
            on_done=done,
        )
        by_key = {(s.point.problem, s.point.seed, s.point.calibrations): s for s in summaries}
        baseline_jobs = []
        for p in points:
            if p.strategy != "deliberation":
                sibling = by_key[(p.problem, p.seed, p.calibrations)]
                baseline_jobs.append((p, sibling.theory_calls))
        summaries += _execute(
            baseline_jobs,
            spec,
            root,
            project,
            workers=workers,
            ray_address=ray_address,
            on_done=done,
        )
    return SweepReport(
        experiment=spec.name,
        root=str(root),
        runs=tuple(summaries),
        wall_time_s=round(time.perf_counter() - started, 3),
    )


def _optuna(
    spec: ExperimentSpec,
    root: Path,
    project: Path,
    *,
    workers: int,
    ray_address: str | None,
    on_done: Callable[[RunSummary], None],
    total: Callable[[int], None] | None,
) -> list[RunSummary]:
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(
        direction="minimize", sampler=optuna.samplers.TPESampler(seed=spec.space.seed)
    )
    if total:
        total(spec.space.samples * len(spec.problems) * len(spec.seeds))
    out: list[RunSummary] = []
    for _ in range(spec.space.samples):
        trial = study.ask()
        cal = Calibrations(
            **{
                name: round(trial.suggest_float(name, *getattr(spec.space, name)), 4)
                for name in ("stubbornness", "similarity_threshold", "severity")
            }
        )
        points = expand(spec.model_copy(update={"baselines": ()}), [cal])
        batch = _execute(
            [(p, None) for p in points],
            spec,
            root,
            project,
            workers=workers,
            ray_address=ray_address,
            on_done=on_done,
        )
        study.tell(trial, objective(batch, spec.space.objective))
        out += batch
    write_json_atomic(
        root / "optuna.json", {"best_value": study.best_value, "best_params": study.best_params}
    )
    return out


def load(path: str | Path, *, per_round: bool = False, pandas: bool = False) -> Any:
    """Every run under ``path`` as a polars DataFrame (one row per run, or per round).

    Args:
        path: an experiment's run folder (experiments/runs/<name>) or a single run directory.
        per_round: one row per theory-loop round instead of per run.
        pandas: return a pandas DataFrame instead (needs pandas installed).
    """
    path = Path(path)
    files = (
        [path / "metrics.parquet"]
        if (path / "metrics.parquet").exists()
        else sorted(path.glob("*/metrics.parquet"))
    )
    if not files:
        return pl.DataFrame()
    rounds = pl.concat([pl.read_parquet(f) for f in files], how="diagonal_relaxed")
    if per_round:
        return rounds.to_pandas() if pandas else rounds
    # The final state is the last round of the last generation (a regenerated run restarts its
    # rounds at 0, so the round number alone does not order the rows).
    order = [c for c in ("regeneration", "round") if c in rounds.columns]
    frame = (
        rounds.sort(order, maintain_order=True)
        .group_by("run_id", maintain_order=True)
        .last()
        .drop(
            [
                "round",
                "agents",
                "revision_magnitude",
                "diversity",
                "adopted_points",
                "refused_repeats",
                "calls",
                "tokens",
            ],
            strict=False,
        )
    )
    extra = rounds.group_by("run_id").agg(
        pl.col("revision_magnitude").mean().alias("mean_revision_magnitude"),
        pl.col("distinct_conclusions").sort_by(order).first().alias("initial_conclusions"),
    )
    frame = frame.join(extra, on="run_id", how="left").sort("run_id")
    return frame.to_pandas() if pandas else frame
