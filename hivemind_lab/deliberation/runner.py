"""The runner: the one place that wires the stages together.

knowledge → theory network → monitor → practicality network → results and audit.

This module resolves a run's knowledge, builds its manifest and runs the strategy the manifest
names (`hivemind_lab.deliberation.strategies`) on the engine (`hivemind_lab.deliberation.engine`)
bound to its run directory: `run_manifest` is the one async core, `deliberate` its sync edge.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from hivemind_lab.agents import prompts
from hivemind_lab.agents.roster import Roster
from hivemind_lab.asyncrun import run_sync
from hivemind_lab.deliberation import practicality, rules, theory
from hivemind_lab.deliberation.embedders import Embedder, make_embedder
from hivemind_lab.deliberation.engine import Engine, check_run_dir
from hivemind_lab.deliberation.state import Knowledge, ProgressCallback
from hivemind_lab.deliberation.strategies.baseline import BaselineStrategy
from hivemind_lab.deliberation.strategies.deliberation import DeliberationStrategy
from hivemind_lab.errors import InputError
from hivemind_lab.inputs import Calibrations, DeliberationRequest, Limits
from hivemind_lab.knowledge import fingerprint
from hivemind_lab.knowledge.documents import Document, load_documents
from hivemind_lab.knowledge.slicing import plan_slices
from hivemind_lab.llm.base import ChatModel, layers
from hivemind_lab.llm.limits import ModelLimits, model_limits
from hivemind_lab.runs import events
from hivemind_lab.runs.manifest import (
    AgentModel,
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
    for layer in layers(model):
        info = getattr(layer, "model_info", None)
        if isinstance(info, dict):
            return dict(info)
    return {}


def agent_ids(knowledge: Knowledge) -> tuple[str, ...]:
    """Every agent of a run: the theory agents, the constraint agents and the monitor."""
    return (
        *(a.id for a in knowledge.theory_agents),
        *(a.id for a in knowledge.constraint_agents),
        "monitor",
    )


def every_agent(
    model: ChatModel, models: Mapping[str, ChatModel] | None, knowledge: Knowledge
) -> dict[str, ChatModel] | None:
    """With a roster's models, every agent's (the run's ``model`` for those it does not
    name); None without one."""
    if not models:
        return None
    return {agent: models.get(agent, model) for agent in agent_ids(knowledge)}


def limits_for(manifest: RunManifest) -> Callable[[str], ModelLimits | None]:
    """The token limits each agent's prompts are packed to, as the manifest recorded them (so
    a replay packs as its run did): a roster agent's model's, else the run's model's."""
    per_agent = {agent: m.limits for agent, m in manifest.agent_models.items()}

    def of(actor: str) -> ModelLimits | None:
        return per_agent.get(actor, manifest.model_limits)

    return of


def build_manifest(
    request: DeliberationRequest,
    calibrations: Calibrations,
    limits: Limits,
    *,
    model: ChatModel,
    models: Mapping[str, ChatModel] | None = None,
    roster: Roster | None = None,
    seed: int,
    knowledge: Knowledge,
    knowledge_base: str | Path,
    practicality_kb: str | Path,
    embedder: Embedder,
    strategy: Strategy = "deliberation",
    experiment: ExperimentInfo | None = None,
    budget: Budget | None = None,
) -> RunManifest:
    """Everything needed to understand and rebuild the run (with a roster: the roster as given
    and every agent's model as met)."""
    everyone = every_agent(model, models, knowledge) or {}
    return RunManifest(
        roster=roster if everyone else None,
        agent_models={
            agent: AgentModel(
                backend=m.backend, model=m.model, model_info=model_info(m), limits=model_limits(m)
            )
            for agent, m in everyone.items()
        },
        created_at=utc_now(),
        strategy=strategy,
        decision=request.decision,
        request=request,
        calibrations=calibrations,
        limits=limits,
        seed=seed,
        backend=model.backend,
        model=model.model,
        model_info=model_info(model),
        model_limits=model_limits(model),
        token_counter=default_counter().name,
        prompt_version=prompts.PROMPT_VERSION,
        engine_code=rules.engine_fingerprint(),
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


def knowledge_for(manifest: RunManifest) -> Knowledge:
    """The knowledge and agents of the run a manifest describes (any strategy). A run started
    on the sample knowledge records it as given ("data/knowledge"): resumed or replayed from
    another folder, it reads the project's copy, as a new run would."""
    return prepare_knowledge(
        manifest.request,
        knowledge_base=sample_path(manifest.knowledge_base, KNOWLEDGE),
        practicality_kb=sample_path(manifest.practicality_kb, PRACTICALITY),
        seed=manifest.seed,
    )


def plan_for(manifest: RunManifest, knowledge: Knowledge | None = None) -> DeliberationStrategy:
    """The phase plan of the strategy a manifest names, over its knowledge (prepared from the
    manifest unless given)."""
    knowledge = knowledge or knowledge_for(manifest)
    embedder = make_embedder(manifest.embedder.name)
    if manifest.strategy == "deliberation":
        return DeliberationStrategy(
            manifest.request, manifest.calibrations, manifest.limits, knowledge, embedder
        )
    return BaselineStrategy.of(manifest, knowledge, embedder)


async def run_manifest(
    manifest: RunManifest,
    run_dir: str | Path,
    *,
    model: ChatModel,
    models: Mapping[str, ChatModel] | None = None,
    resume: bool = False,
    on_progress: ProgressCallback | None = None,
    knowledge: Knowledge | None = None,
) -> DeliberationResult:
    """Run (or continue) the run a manifest describes in ``run_dir``, whatever its strategy.

    Starting a run, a sweep point, resuming a killed run (CLI ``--resume``) and replaying a
    finished one all come here. A new run writes the manifest first, so a crash at any later
    point leaves a resumable run: every strategy continues from its last checkpoint. ``models``
    are a roster's, by agent id (the agents it does not name speak through ``model``).
    """
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
    plan = plan_for(manifest, knowledge)
    run.path.mkdir(parents=True, exist_ok=True)
    if not resume:
        run.write_manifest(manifest, new=True)
    engine = Engine(
        run.path,
        model=model,
        models=every_agent(model, models, plan.knowledge),
        limits_for=limits_for(manifest),
        seed=manifest.seed,
        limits=manifest.limits,
        # a baseline's budget is its sibling's spend, counted by the baseline itself
        spend_limits=manifest.strategy == "deliberation",
        on_progress=on_progress,
    )
    if not resume:
        engine.record(("client", events.DecisionRecorded(decision=manifest.decision)))
        if manifest.decision.intake is not None:  # the call that read it, made once before
            engine.record(("intake", events.IntakeCalled.of(manifest.decision.intake)))
        engine.record(("client", opening(manifest, plan.knowledge)))
    return await engine.run(plan)


def opening(
    manifest: RunManifest, knowledge: Knowledge
) -> events.BaselineRequested | events.DeliberationRequested:
    """The event that opens a run's audit after the decision: a baseline's whole manifest, or
    what the client asked a deliberation and its slices."""
    if manifest.strategy != "deliberation":
        return events.BaselineRequested(manifest=manifest.model_dump(mode="json"))
    return deliberation_request(manifest, knowledge)


def deliberation_request(
    manifest: RunManifest, knowledge: Knowledge
) -> events.DeliberationRequested:
    """The event that opens a deliberation's audit: what the client asked, and the slices."""
    return events.DeliberationRequested(
        request=manifest.request.model_dump(mode="json"),
        calibrations=manifest.calibrations.model_dump(),
        limits=manifest.limits.model_dump(),
        seed=manifest.seed,
        slices=[s.model_dump() for s in knowledge.slicing.slices],
    )


class NewRun(NamedTuple):
    """A run ready to start: its manifest and the knowledge it was built from."""

    manifest: RunManifest
    knowledge: Knowledge


def new_run(
    request: DeliberationRequest,
    calibrations: Calibrations | None = None,
    limits: Limits | None = None,
    *,
    model: ChatModel,
    models: Mapping[str, ChatModel] | None = None,
    roster: Roster | None = None,
    seed: int = 0,
    knowledge_base: str | Path = KNOWLEDGE,
    practicality_kb: str | Path = PRACTICALITY,
    embedder: Embedder | None = None,
    experiment: ExperimentInfo | None = None,
    knowledge: Knowledge | None = None,
) -> NewRun:
    """Resolve a new deliberation's knowledge and manifest (``run_manifest`` then runs it);
    ``knowledge``, when the caller prepared it already from the same request, knowledge bases
    and seed, is used as it is."""
    knowledge_base = sample_path(knowledge_base, KNOWLEDGE)
    practicality_kb = sample_path(practicality_kb, PRACTICALITY)
    calibrations = calibrations or Calibrations()
    limits = limits or Limits()
    embedder = embedder or make_embedder()
    knowledge = knowledge or prepare_knowledge(
        request, knowledge_base=knowledge_base, practicality_kb=practicality_kb, seed=seed
    )
    manifest = build_manifest(
        request,
        calibrations,
        limits,
        model=model,
        models=models,
        roster=roster,
        seed=seed,
        knowledge=knowledge,
        knowledge_base=knowledge_base,
        practicality_kb=practicality_kb,
        embedder=embedder,
        experiment=experiment,
    )
    return NewRun(manifest, knowledge)


def deliberate(
    request: DeliberationRequest,
    calibrations: Calibrations | None = None,
    limits: Limits | None = None,
    *,
    model: ChatModel,
    models: Mapping[str, ChatModel] | None = None,
    roster: Roster | None = None,
    run_dir: str | Path,
    seed: int = 0,
    knowledge_base: str | Path = KNOWLEDGE,
    practicality_kb: str | Path = PRACTICALITY,
    embedder: Embedder | None = None,
    on_progress: ProgressCallback | None = None,
    resume: bool = False,
    experiment: ExperimentInfo | None = None,
) -> DeliberationResult:
    """Run a whole deliberation and write result.json, audit.jsonl and manifest.json.

    The synchronous edge of `run_manifest` (scripts, notebooks, the command line).

    Args:
        request: the problem and the sliders (sufficiency, feasibility, density).
        calibrations: stubbornness, similarity threshold and severity.
        limits: rounds, regenerations, budgets and concurrency.
        model: the ChatModel agents speak through (e.g. `OfflineAgentModel()`).
        models: a roster's models by agent id (`agents.backends.open_models`); the agents it
            does not name speak through ``model``.
        roster: the roster those models were opened from (recorded in the manifest).
        run_dir: where the run's artifacts go (new or empty, unless ``resume=True``).
        seed: the run's seed (slicing, sampling).
        knowledge_base: the theory knowledge folder (default: the sample).
        practicality_kb: the constraint knowledge folder (default: the sample).
        embedder: the monitor's embedder (default: the configured one).
        on_progress: called after every phase.
        resume: continue the run in ``run_dir`` from its own manifest (the other inputs are
            not used).
        experiment: the sweep point this run is (recorded in the manifest).
    """
    run_dir = Path(run_dir)
    check_run_dir(run_dir, resume=resume)
    if resume:  # the run is rebuilt from its own manifest, whatever the arguments say
        manifest, knowledge = RunDir(run_dir).read_manifest(), None
    else:
        manifest, knowledge = new_run(
            request,
            calibrations,
            limits,
            model=model,
            models=models,
            roster=roster,
            seed=seed,
            knowledge_base=knowledge_base,
            practicality_kb=practicality_kb,
            embedder=embedder,
            experiment=experiment,
        )
    return run_sync(
        run_manifest(
            manifest,
            run_dir,
            model=model,
            models=models,
            resume=resume,
            on_progress=on_progress,
            knowledge=knowledge,
        )
    )
