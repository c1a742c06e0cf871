"""Run one sweep point as a self-describing run directory; skipped when finished and still
current, resumed when interrupted, set aside and run again when stale (`experiments.freshness`).
The sweep (`experiments.sweep`) decides where each point runs.

Layout: ``experiments/runs/<experiment>/<run-id>/`` with manifest.json (spec and its hash, the
point, inputs, calibrations, seed, backend/model, token counter, package versions, platform,
git commit), result.json, audit.jsonl, metrics.parquet and cache.sqlite (every reply the run
used, so the run replays alone). Work that does not depend on a calibration — for the same
problem, seed and model the round-0 proposals are identical prompts — is shared through
``shared-cache.sqlite`` of the experiment, so it is computed once per sweep (for the offline
backend one cache per version of the model's code: its replies are keyed by the model's name).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from hivemind_lab.agents import backends as factory
from hivemind_lab.agents.backends import BackendChoice
from hivemind_lab.agents.policy import identity
from hivemind_lab.asyncrun import run_sync
from hivemind_lab.deliberation import build_manifest, prepare_knowledge, run_manifest
from hivemind_lab.deliberation.embedders import make_embedder
from hivemind_lab.deliberation.runner import knowledge_for
from hivemind_lab.deliberation.state import Knowledge
from hivemind_lab.experiments.freshness import (
    Current,
    StaleReason,
    current,
    point_request,
    stale_reasons,
    uses_offline,
)
from hivemind_lab.experiments.points import RunPoint
from hivemind_lab.experiments.spec import ExperimentSpec
from hivemind_lab.inputs import DeliberationRequest
from hivemind_lab.llm.base import ChatModel, close_model
from hivemind_lab.llm.cache import CachingChatModel, ResponseCache
from hivemind_lab.llm.endpoint import EndpointSettings
from hivemind_lab.llm.local import LocalEndpoint
from hivemind_lab.llm.ratelimit import RateGate
from hivemind_lab.models import Frozen
from hivemind_lab.runs.manifest import Budget, ExperimentInfo, RunManifest
from hivemind_lab.runs.results import DeliberationResult
from hivemind_lab.runs.rundir import RunDir
from hivemind_lab.runs.sweepdir import SweepDir


class RunSummary(Frozen):
    """One finished run, as a sweep reports it."""

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
    theory_tokens: int
    tokens: int
    reused_calls: int
    """Calls answered by the experiment's shared cache (work reused across sweep points)."""
    skipped: bool = False
    """True when the run was already finished and still current (reused as is)."""
    stale: tuple[StaleReason, ...] = ()
    """Why the point's earlier run was set aside and the point run again (empty: it was not)."""


def make_model(
    spec: ExperimentSpec,
    endpoint: LocalEndpoint | None = None,
    *,
    settings: EndpointSettings | None = None,
    gate: RateGate | None = None,
) -> ChatModel:
    """The spec's backend (local: the sweep's server at ``endpoint``), with its artificial
    latency for benchmarks; ``settings`` and the rate ``gate`` are the sweep's, the same in
    every worker."""
    choice = BackendChoice(backend=spec.backend, model=spec.model, latency_s=spec.latency_s)
    return factory.make_model(choice, endpoint=endpoint, settings=settings, gate=gate)


def _request(spec: ExperimentSpec, point: RunPoint, project: Path) -> DeliberationRequest:
    return point_request(spec, point, project)  # as the freshness check reads it


def summarise(
    run_dir: Path,
    point: RunPoint,
    *,
    reused: int,
    skipped: bool,
    stale: tuple[StaleReason, ...] = (),
) -> RunSummary:
    result = RunDir(run_dir).read_result()
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
        theory_tokens=sum(m.tokens for m in result.metrics),
        tokens=result.usage.tokens,
        reused_calls=reused,
        skipped=skipped,
        stale=stale,
    )


def finished(
    spec: ExperimentSpec,
    point: RunPoint,
    root: Path,
    project: Path,
    *,
    budget: Budget | None = None,
    now: Current | None = None,
) -> RunSummary | None:
    """The summary of a point whose run is complete (result and metrics written) and not stale
    (``now``: what the point would record now, if already known), else None."""
    run = SweepDir(root).run(point.run_id(spec))
    if not (run.finished and run.metrics_path.exists()):
        return None
    now = now or current(spec, point, project)
    if stale_reasons(run.read_manifest(), now, budget):
        return None
    return summarise(run.path, point, reused=0, skipped=True)


def run_point(
    spec: ExperimentSpec,
    point: RunPoint,
    root: Path,
    project: Path,
    budget: Budget | None = None,
    endpoint: LocalEndpoint | None = None,
    *,
    settings: EndpointSettings | None = None,
    gate: RateGate | None = None,
) -> RunSummary:
    """Run one point into ``root/<run-id>``: skip it if finished and current, resume it if
    interrupted and current, else move its stale run aside and run it anew (``settings`` and
    ``gate``: the sweep's, see `make_model`)."""
    sweep = SweepDir(root)
    run = sweep.run(point.run_id(spec))
    stale: tuple[StaleReason, ...] = ()
    if run.started:
        before = run.read_manifest()
        stale = stale_reasons(before, current(spec, point, project), budget)
        if stale:
            sweep.move_aside(run, created_at=before.created_at, reasons=stale)
        elif run.finished and run.metrics_path.exists():
            return summarise(run.path, point, reused=0, skipped=True)
    if run.path.exists() and not run.started:  # killed before its manifest: nothing to keep
        shutil.rmtree(run.path)
    shared = ResponseCache(sweep.shared_cache_path(_shared_cache(spec)))
    model = CachingChatModel(make_model(spec, endpoint, settings=settings, gate=gate), shared)
    roster = spec.rosters[point.roster] if point.roster is not None else None
    models: dict[str, CachingChatModel] = {}
    try:
        manifest = run.read_manifest() if run.started else None
        if manifest is None or roster is not None:  # a roster names agents: they are needed
            kb, pkb = project / spec.knowledge_base, project / spec.practicality_kb
            request = manifest.request if manifest else _request(spec, point, project)
            seed = manifest.seed if manifest else point.seed
            knowledge = (
                knowledge_for(manifest)
                if manifest
                else prepare_knowledge(request, knowledge_base=kb, practicality_kb=pkb, seed=seed)
            )
        else:
            knowledge = None
        assignment = (
            roster.assign(
                (a.id for a in knowledge.theory_agents), (a.id for a in knowledge.constraint_agents)
            )
            if roster is not None and knowledge is not None
            else {}
        )
        choice = BackendChoice(backend=spec.backend, model=spec.model, latency_s=spec.latency_s)
        with factory.open_models(
            assignment, choice, concurrency=spec.limits.concurrency, settings=settings
        ) as opened:
            own = {id(m): CachingChatModel(m, shared) for m in opened.values()}
            models = {agent: own[id(m)] for agent, m in opened.items()}
            if manifest is None:
                assert knowledge is not None
                manifest = build_manifest(
                    request,
                    point.calibrations,
                    spec.limits,
                    model=model,
                    models=models,
                    roster=roster,
                    seed=point.seed,
                    knowledge=knowledge,
                    knowledge_base=kb,
                    practicality_kb=pkb,
                    embedder=make_embedder(spec.embedder),
                    strategy=point.strategy,
                    experiment=ExperimentInfo(
                        name=spec.name,
                        spec_hash=spec.digest,
                        spec=spec.model_dump(mode="json"),
                        point=point.model_dump(mode="json"),
                        run_id=run.path.name,
                    ),
                    budget=budget if point.strategy != "deliberation" else None,
                )
            result = run_sync(_run_and_close(manifest, run, model, knowledge, models))
        run.write_metrics(manifest, result)
    finally:
        shared.close()
    hits = model.hits + sum(m.hits for m in {id(m): m for m in models.values()}.values())
    return summarise(run.path, point, reused=hits, skipped=False, stale=stale)


async def _run_and_close(
    manifest: RunManifest,
    run: RunDir,
    model: ChatModel,
    knowledge: Knowledge | None,
    models: dict[str, CachingChatModel],
) -> DeliberationResult:
    """The point's run, then its models' HTTP clients closed on the same event loop (the
    models are this point's own)."""
    try:
        return await run_manifest(
            manifest,
            run.path,
            model=model,
            models=models,
            resume=run.started,
            knowledge=knowledge,
        )
    finally:
        for each in {id(m): m for m in (model, *models.values())}.values():
            await close_model(each)


def _shared_cache(spec: ExperimentSpec) -> str:
    """The experiment's shared reply cache: the offline model's replies are keyed by its name,
    which its code changes do not change, so each version of that code gets its own cache (when
    the spec's backend or any roster entry is offline)."""
    if not any(uses_offline(spec, roster) for roster in (None, *spec.rosters)):
        return "shared-cache.sqlite"
    return f"shared-cache-offline-{identity.code_fingerprint().removeprefix('sha256:')[:12]}.sqlite"
