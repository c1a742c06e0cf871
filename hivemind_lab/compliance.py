"""The compliance loop: re-judge a finished run against updated constraint knowledge.

The compliance team keeps the practicality agents' knowledge current. When it changes, the
question is which conclusions already given would now pass or be vetoed, and why. `rescore`
re-runs only the practicality network (the same `score_set` and `judge` the engine uses, with
the run's own decision context) on every solution set the run judged — its vetoed sets and its
final one — and writes a new run directory beside the original: its manifest links to the
original (``rescore_of``), its audit opens with the original's head hash, and ``rescore.json``
holds the verdicts before and after. The original run is only read.

A new veto of the final set regenerates only when asked: the same engine then continues the
deliberation in the new run directory from that veto (the next generation, with every vetoed set
excluded), within the run's regeneration limit, on the one event loop of the rescore.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import cast, get_args

from hivemind_lab.asyncrun import run_sync
from hivemind_lab.deliberation import practicality
from hivemind_lab.deliberation.engine import Engine, check_run_dir
from hivemind_lab.deliberation.runner import limits_for, plan_for
from hivemind_lab.deliberation.strategies.rescore import RescoreStrategy, set_ids
from hivemind_lab.errors import AuditIntegrityError, InputError
from hivemind_lab.inputs import ScoreMode
from hivemind_lab.knowledge import fingerprint
from hivemind_lab.knowledge.documents import load_documents
from hivemind_lab.llm.base import ChatModel
from hivemind_lab.runs import events
from hivemind_lab.runs.audit import read_records, verify_log
from hivemind_lab.runs.manifest import (
    KnowledgeHashes,
    RescoreOrigin,
    RunManifest,
    environment,
    utc_now,
)
from hivemind_lab.runs.rescore import (
    RESCORE_VERSION,
    Outcome,
    RescoreReport,
    SetRescore,
    SolutionRescore,
    compare,
)
from hivemind_lab.runs.results import DeliberationResult, Solution
from hivemind_lab.runs.rundir import RunDir, write_json_atomic

__all__ = [
    "RESCORE_VERSION",
    "Outcome",
    "RescoreReport",
    "SetRescore",
    "SolutionRescore",
    "compare",
    "read_rescore",
    "recorded_solutions",
    "rescore",
]


def recorded_solutions(audit_path: Path) -> dict[str, Solution]:
    """Every solution a run's theory agents proposed or revised, by id (from its audit)."""
    found: dict[str, Solution] = {}
    for record in read_records(audit_path):
        event = record.event
        if isinstance(event, events.Proposal):  # a revision is a proposal too
            found[event.id] = event.solution
    return found


def _read_original(run: RunDir) -> tuple[RunManifest, DeliberationResult, RescoreOrigin]:
    if not run.finished:
        raise InputError(
            "run_dir",
            f"{str(run.path)!r} is not a finished run",
            allowed="a directory with manifest.json and result.json",
        )
    manifest, result = run.read_manifest(), run.read_result()
    check = verify_log(run.audit_path, require_anchor=False)
    if not check.ok:
        raise AuditIntegrityError(check.first_bad or 0, check.reason or "verification failed")
    origin = RescoreOrigin(
        run_dir=str(run.path.resolve()),
        audit_head=check.head,
        audit_records=check.records,
        created_at=manifest.created_at,
        knowledge_hashes=manifest.knowledge_hashes,
    )
    return manifest, result, origin


def _rescore_manifest(
    manifest: RunManifest,
    origin: RescoreOrigin,
    *,
    practicality_kb: Path,
    constraints: tuple[str, ...],
    profile: str | tuple[str, ...],
    severity: float,
    score_mode: ScoreMode,
) -> RunManifest:
    hashes = manifest.knowledge_hashes
    theory = (
        hashes.theory
        if hashes is not None
        else fingerprint.knowledge_hash(load_documents(manifest.knowledge_base))
    )
    # The original's typed fields, with what the rescore changes; validated as a manifest
    # again (the request and the recorded decision must still agree).
    return RunManifest.model_validate(
        {
            **dict(manifest),
            "request": manifest.request.model_copy(
                update={"profile": profile, "score_mode": score_mode}
            ),
            "calibrations": manifest.calibrations.model_copy(update={"severity": severity}),
            "created_at": utc_now(),
            "practicality_kb": str(practicality_kb),
            "constraints": constraints,
            "knowledge_hashes": KnowledgeHashes(
                theory=theory,
                constraints=fingerprint.constraint_hashes(practicality_kb, constraints),
            ),
            "rescore_of": origin,
            **environment(),
        }
    )


def rescore(
    run_dir: str | Path,
    *,
    practicality_kb: str | Path,
    out: str | Path,
    model: ChatModel,
    profile: str | Sequence[str] | None = None,
    severity: float | None = None,
    regenerate: bool = False,
    score_mode: str | None = None,
) -> RescoreReport:
    """Re-judge a finished run's solution sets against ``practicality_kb`` into ``out``.

    Args:
        run_dir: the finished run (only read).
        practicality_kb: the updated constraint knowledge folder.
        out: a new or empty directory for the rescore run.
        model: the chat model the constraint agents speak through.
        profile: constraint profile or list (default: the run's).
        severity: the constraint agents' severity (default: the run's).
        regenerate: continue the deliberation when the final set is newly vetoed.
        score_mode: per_solution or batched (default: the run's), to compare the two on the
            same solutions.
    """
    original = RunDir(run_dir)
    manifest, result, origin = _read_original(original)
    target = RunDir(out)
    if target.path.resolve() == original.path.resolve():
        raise InputError("out", "the rescore run needs its own directory", allowed="a new path")
    check_run_dir(target.path, resume=False)
    pkb = Path(practicality_kb)
    chosen = manifest.request.profile if profile is None else profile
    chosen = chosen if isinstance(chosen, str) else tuple(chosen)
    constraints = practicality.resolve_constraints(pkb, chosen)
    agents = practicality.build_constraint_agents(pkb, constraints)
    sev = manifest.calibrations.severity if severity is None else severity
    if not 0.0 <= sev <= 1.0:
        raise InputError("severity", f"{sev!r} is out of range", allowed="0 to 1")
    mode = manifest.request.score_mode if score_mode is None else score_mode
    if mode not in get_args(ScoreMode):
        raise InputError(
            "score_mode", f"unknown score mode {mode!r}", allowed=", ".join(get_args(ScoreMode))
        )
    feasibility = manifest.request.feasibility
    solutions = recorded_solutions(original.audit_path)
    sets = tuple((v, set_ids(v)) for v in result.vetoes)
    for verdict, ids in sets:
        missing = [i for i in ids if i not in solutions]
        if missing:
            raise InputError(
                "run_dir",
                f"solution {missing[0]!r} of generation {verdict.regeneration} is not in "
                f"{str(original.audit_path)!r}",
                allowed="a run whose audit holds its theory proposals and revisions",
            )
    new_manifest = _rescore_manifest(
        manifest,
        origin,
        practicality_kb=pkb,
        constraints=constraints,
        profile=chosen,
        severity=sev,
        score_mode=cast(ScoreMode, mode),
    )
    assert new_manifest.knowledge_hashes is not None
    before_hashes = manifest.knowledge_hashes
    changes = fingerprint.knowledge_changes(
        before_hashes.constraints if before_hashes else None,
        new_manifest.knowledge_hashes.constraints,
    )

    target.path.mkdir(parents=True, exist_ok=True)
    target.write_manifest(new_manifest)
    strategy = RescoreStrategy(
        sets=sets,
        solutions=solutions,
        agents=tuple(agents),
        severity=sev,
        feasibility=feasibility,
        mode=cast(ScoreMode, mode),
        context=manifest.request.context(),
        original=result,
        start=events.RescoreStart(
            original=origin.model_dump(mode="json"),
            practicality_kb=str(pkb),
            constraints=list(constraints),
            severity=sev,
            feasibility=feasibility,
            knowledge=dict(changes),
        ),
        manifest=new_manifest,
        regenerate=regenerate,
        continuation=lambda: plan_for(new_manifest),
    )
    engine = Engine(
        target.path,
        model=model,
        limits_for=limits_for(new_manifest),  # a local model's window, as the run's
        seed=manifest.seed,
        limits=manifest.limits,
        spend_limits=False,  # re-judging is not bound; a continued deliberation is
    )
    rescored = run_sync(engine.run(strategy))
    report = RescoreReport(
        original=origin,
        practicality_kb=str(pkb),
        constraints=constraints,
        severity=sev,
        feasibility=feasibility,
        knowledge=changes,
        sets=rescored.sets,
        conclusions=rescored.conclusions,
        regenerated=rescored.regenerated,
        regeneration_note=rescored.note,
        status=rescored.status,
        usage=rescored.usage,
        audit_head=rescored.audit_head,
    )
    write_json_atomic(target.rescore_path, report.model_dump(mode="json"), sort_keys=False)
    return report


def read_rescore(run_dir: str | Path) -> RescoreReport:
    """A rescore run's ``rescore.json``."""
    path = RunDir(run_dir).rescore_path
    if not path.exists():
        raise InputError("run_dir", f"{str(path)!r} does not exist", allowed="a rescore run")
    return RescoreReport.model_validate_json(path.read_text("utf-8"))
