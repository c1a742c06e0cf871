"""The deliberation runner: the one place that wires the stages together.

knowledge → theory network → monitor → practicality network → results and audit.

This module resolves a run's knowledge, writes its manifest and drives the engine
(`hivemind_lab.deliberation.engine`, the phase state machine) for one run directory.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from hivemind_lab.agents import prompts
from hivemind_lab.asyncrun import run_sync
from hivemind_lab.deliberation import practicality, theory
from hivemind_lab.deliberation.embedders import Embedder, make_embedder
from hivemind_lab.deliberation.engine import Deliberation
from hivemind_lab.deliberation.state import Knowledge, ProgressCallback
from hivemind_lab.errors import InputError
from hivemind_lab.inputs import Calibrations, DeliberationRequest, Limits
from hivemind_lab.knowledge import fingerprint
from hivemind_lab.knowledge.documents import Document, load_documents
from hivemind_lab.knowledge.slicing import plan_slices
from hivemind_lab.llm.base import ChatModel
from hivemind_lab.runs.manifest import (
    Budget,
    EmbedderInfo,
    ExperimentInfo,
    KnowledgeHashes,
    RunManifest,
    SlicingInfo,
    Strategy,
    environment,
    utc_now,
)
from hivemind_lab.runs.results import DeliberationResult
from hivemind_lab.runs.rundir import RunDir
from hivemind_lab.runs.rundir import load_result as load_result
from hivemind_lab.samples import KNOWLEDGE, PRACTICALITY, sample_path
from hivemind_lab.tokens import default_counter


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
        prompt_version=prompts.PROMPT_VERSION,
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


def knowledge_for(manifest: RunManifest) -> Knowledge:
    """The knowledge and agents of the run a manifest describes (any strategy)."""
    return prepare_knowledge(
        manifest.request,
        knowledge_base=manifest.knowledge_base,
        practicality_kb=manifest.practicality_kb,
        seed=manifest.seed,
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
    if resume and manifest.rescore_of is not None and not run.checkpoint_path.exists():
        # A rescore continues a deliberation only from the checkpoint its regeneration wrote;
        # without one, "resuming" would start a whole new deliberation in its directory.
        raise InputError(
            "resume",
            f"{str(run.path)!r} is a rescore of {manifest.rescore_of.run_dir!r} with no "
            "deliberation to continue",
            allowed="a deliberation's run directory (a killed rescore is run again into a new "
            "directory with `hivemind-lab rescore`)",
        )
    knowledge = knowledge or knowledge_for(manifest)
    run.path.mkdir(parents=True, exist_ok=True)
    if not resume:
        run.write_manifest(manifest, new=True)
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
    knowledge_base: str | Path = KNOWLEDGE,
    practicality_kb: str | Path = PRACTICALITY,
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
    knowledge_base = sample_path(knowledge_base, KNOWLEDGE)
    practicality_kb = sample_path(practicality_kb, PRACTICALITY)
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
    `hivemind_lab.runs.rundir.read_manifest`, which returns the typed `RunManifest`)."""
    return RunDir(run_dir).read_manifest().model_dump(mode="json")
