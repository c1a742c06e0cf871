"""The compliance loop: re-judge a finished run against updated constraint knowledge.

The compliance team keeps the practicality agents' knowledge current. When it changes, the
question is which conclusions already given would now pass or be vetoed, and why. `rescore`
re-runs only the practicality network (the same `score_set` and `judge` the engine uses, with
the run's own decision context) on every solution set the run judged — its vetoed sets and its
final one — and writes a new run directory beside the original: its manifest links to the
original (``rescore_of``), its audit opens with the original's head hash, and ``rescore.json``
holds the verdicts before and after. The original run is only read.

A new veto of the final set regenerates only when asked: the engine then continues the
deliberation in the new run directory from that veto (the next generation, with every vetoed set
excluded), within the run's regeneration limit.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from hivemind_lab import deliberation
from hivemind_lab.agents.caller import AgentCaller
from hivemind_lab.agents.usage import UsageSummary
from hivemind_lab.asyncrun import run_sync
from hivemind_lab.deliberation import practicality
from hivemind_lab.deliberation.state import RunState
from hivemind_lab.errors import AuditIntegrityError, InputError
from hivemind_lab.knowledge import fingerprint
from hivemind_lab.knowledge.documents import load_documents
from hivemind_lab.llm.base import ChatModel
from hivemind_lab.llm.cache import CachingChatModel, ResponseCache
from hivemind_lab.runs.audit import AuditLog, read_records, verify_log
from hivemind_lab.runs.manifest import (
    KnowledgeHashes,
    RescoreOrigin,
    RunManifest,
    environment,
    utc_now,
)
from hivemind_lab.runs.results import (
    ConstraintScore,
    DeliberationResult,
    PracticalityVerdict,
    Solution,
    Status,
)
from hivemind_lab.runs.rundir import RunDir, write_json_atomic

RESCORE_VERSION: Literal[1] = 1
Outcome = Literal["still_passes", "now_vetoed", "now_passes", "still_vetoed"]


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class SolutionRescore(Frozen):
    """One solution (or one conclusion's solutions) before and after, with the reasons."""

    label: str
    """A conclusion's rank and title, or a solution's id and title."""
    solution_ids: tuple[str, ...]
    before: dict[str, float]
    """Mean score per constraint in the original run."""
    after: dict[str, float]
    """Mean score per constraint against the updated knowledge."""
    before_mean: float
    after_mean: float
    flags: tuple[str, ...]
    """Risk signals the constraint agents found now."""
    reasons: dict[str, tuple[str, ...]]
    """The constraint agents' reasons now, by constraint."""


class SetRescore(Frozen):
    """One solution set the run judged, judged again."""

    regeneration: int
    final: bool
    """The run's last judged set (its conclusions come from it)."""
    before: PracticalityVerdict
    after: PracticalityVerdict
    outcome: Outcome
    solutions: tuple[SolutionRescore, ...]


class RescoreReport(Frozen):
    """What ``rescore.json`` holds: which conclusions would now pass or be vetoed, and why."""

    schema_version: Literal[1] = RESCORE_VERSION
    original: RescoreOrigin
    practicality_kb: str
    constraints: tuple[str, ...]
    severity: float
    feasibility: int
    knowledge: dict[str, fingerprint.KnowledgeChange]
    """Each constraint's knowledge against the original run's (by content hash)."""
    sets: tuple[SetRescore, ...]
    conclusions: tuple[SolutionRescore, ...]
    """The original conclusions, rescored (empty when the run concluded nothing)."""
    regenerated: bool = False
    regeneration_note: str = ""
    """Why the run was or was not continued after a new veto."""
    status: Status | None = None
    """The continued deliberation's status (``--regenerate`` only)."""
    usage: UsageSummary
    audit_head: str = ""

    @property
    def flipped(self) -> tuple[SetRescore, ...]:
        return tuple(s for s in self.sets if s.before.vetoed != s.after.vetoed)


def _outcome(before: bool, after: bool) -> Outcome:
    if before:
        return "still_vetoed" if after else "now_passes"
    return "now_vetoed" if after else "still_passes"


def _means(scores: Sequence[ConstraintScore]) -> dict[str, float]:
    per: dict[str, list[int]] = {}
    for s in scores:
        per.setdefault(s.constraint, []).append(s.score)
    return {c: round(sum(v) / len(v), 4) for c, v in sorted(per.items())}


def _mean(scores: Sequence[ConstraintScore]) -> float:
    return round(sum(s.score for s in scores) / len(scores), 4) if scores else 0.0


def compare(
    label: str,
    ids: Sequence[str],
    before: Sequence[ConstraintScore],
    after: Sequence[ConstraintScore],
) -> SolutionRescore:
    """Scores of the solutions ``ids`` before and after (pure)."""
    wanted = set(ids)
    old = [s for s in before if s.solution_id in wanted]
    new = [s for s in after if s.solution_id in wanted]
    reasons: dict[str, list[str]] = {}
    for s in new:
        reasons.setdefault(s.constraint, [])
        if s.reason not in reasons[s.constraint]:
            reasons[s.constraint].append(s.reason)
    return SolutionRescore(
        label=label,
        solution_ids=tuple(ids),
        before=_means(old),
        after=_means(new),
        before_mean=_mean(old),
        after_mean=_mean(new),
        flags=tuple(dict.fromkeys(f for s in new for f in s.flags)),
        reasons={c: tuple(r) for c, r in sorted(reasons.items())},
    )


def recorded_solutions(audit_path: Path) -> dict[str, Solution]:
    """Every solution a run's theory agents proposed or revised, by id (from its audit)."""
    return {
        r.payload["id"]: Solution.model_validate(r.payload)
        for r in read_records(audit_path)
        if r.kind in ("theory.proposal", "theory.revision")
    }


def _set_ids(verdict: PracticalityVerdict) -> tuple[str, ...]:
    return tuple(dict.fromkeys(s.solution_id for s in verdict.scores))


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
) -> RunManifest:
    hashes = manifest.knowledge_hashes
    theory = (
        hashes.theory
        if hashes is not None
        else fingerprint.knowledge_hash(load_documents(manifest.knowledge_base))
    )
    data = manifest.model_dump(mode="json")
    data["request"]["profile"] = list(profile) if isinstance(profile, tuple) else profile
    data["calibrations"]["severity"] = severity
    data.update(
        created_at=utc_now(),
        practicality_kb=str(practicality_kb),
        constraints=list(constraints),
        knowledge_hashes=KnowledgeHashes(
            theory=theory,
            constraints=fingerprint.constraint_hashes(practicality_kb, constraints),
        ).model_dump(),
        rescore_of=origin.model_dump(),
        **environment(),
    )
    return RunManifest.model_validate(data)


async def rescore_async(
    run_dir: str | Path,
    *,
    practicality_kb: str | Path,
    out: str | Path,
    model: ChatModel,
    profile: str | Sequence[str] | None = None,
    severity: float | None = None,
    regenerate: bool = False,
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
    """
    original = RunDir(run_dir)
    manifest, result, origin = _read_original(original)
    target = RunDir(out)
    if target.path.resolve() == original.path.resolve():
        raise InputError("out", "the rescore run needs its own directory", allowed="a new path")
    deliberation.check_run_dir(target.path, resume=False)
    pkb = Path(practicality_kb)
    chosen = manifest.request.profile if profile is None else profile
    chosen = chosen if isinstance(chosen, str) else tuple(chosen)
    constraints = practicality.resolve_constraints(pkb, chosen)
    agents = practicality.build_constraint_agents(pkb, constraints)
    sev = manifest.calibrations.severity if severity is None else severity
    if not 0.0 <= sev <= 1.0:
        raise InputError("severity", f"{sev!r} is out of range", allowed="0 to 1")
    feasibility = manifest.request.feasibility
    solutions = recorded_solutions(original.audit_path)
    sets = [(v, _set_ids(v)) for v in result.vetoes]
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
    )
    assert new_manifest.knowledge_hashes is not None
    before_hashes = manifest.knowledge_hashes
    changes = fingerprint.knowledge_changes(
        before_hashes.constraints if before_hashes else None,
        new_manifest.knowledge_hashes.constraints,
    )

    target.path.mkdir(parents=True, exist_ok=True)
    target.write_manifest(new_manifest)
    audit = AuditLog(target.audit_path, anchor_every=0)
    cache = ResponseCache(target.cache_path)
    caller = AgentCaller(
        CachingChatModel(model, cache),
        audit=audit,
        seed=manifest.seed,
        concurrency=manifest.limits.concurrency,
        batch_audit=True,
    )
    context = manifest.request.context()
    rescored: list[SetRescore] = []
    try:
        audit.append(
            "compliance",
            "rescore.start",
            {
                "original": origin.model_dump(mode="json"),
                "practicality_kb": str(pkb),
                "constraints": list(constraints),
                "severity": sev,
                "feasibility": feasibility,
                "knowledge": changes,
            },
        )
        for index, (before, ids) in enumerate(sets):
            audit.append(
                "compliance",
                "rescore.set",
                {"regeneration": before.regeneration, "solution_ids": list(ids)},
            )
            scored = await practicality.score_set(
                caller,
                agents,
                [(i, solutions[i].view()) for i in ids],
                severity=sev,
                context=context,
            )
            caller.flush()
            audit.extend(
                [
                    (f"constraint-{x.constraint}", "practicality.score", x.model_dump(mode="json"))
                    for x in scored.scored
                ]
            )
            after = practicality.judge(
                scored.per_solution,
                feasibility=feasibility,
                severity=sev,
                regeneration=before.regeneration,
            )
            outcome = _outcome(before.vetoed, after.vetoed)
            audit.append(
                "practicality",
                "rescore.verdict",
                {
                    "regeneration": before.regeneration,
                    "outcome": outcome,
                    "before": {"mean_score": before.mean_score, "vetoed": before.vetoed},
                    "after": after.model_dump(
                        mode="json", include={"mean_score", "per_constraint", "vetoed"}
                    ),
                },
            )
            rescored.append(
                SetRescore(
                    regeneration=before.regeneration,
                    final=index == len(sets) - 1,
                    before=before,
                    after=after,
                    outcome=outcome,
                    solutions=tuple(
                        compare(f"{i}: {solutions[i].title}", [i], before.scores, after.scores)
                        for i in ids
                    ),
                )
            )
        final = rescored[-1] if rescored else None
        conclusions = tuple(
            compare(f"#{c.rank} {c.title}", c.solution_ids, final.before.scores, final.after.scores)
            for c in result.conclusions
            if final is not None
        )
    finally:
        caller.flush()
        audit.close()
        cache.close()

    report = RescoreReport(
        original=origin,
        practicality_kb=str(pkb),
        constraints=constraints,
        severity=sev,
        feasibility=feasibility,
        knowledge=changes,
        sets=tuple(rescored),
        conclusions=conclusions,
        usage=caller.usage,
    )
    report = await _maybe_regenerate(
        report,
        new_manifest,
        target,
        model=model,
        result=result,
        solutions=solutions,
        regenerate=regenerate,
    )
    with AuditLog(target.audit_path) as log:
        log.append(
            "compliance",
            "rescore.result",
            {
                "outcomes": {str(s.regeneration): s.outcome for s in report.sets},
                "regenerated": report.regenerated,
                "note": report.regeneration_note,
            },
        )
        report = report.model_copy(update={"audit_head": log.head})
    write_json_atomic(target.rescore_path, report.model_dump(mode="json"), sort_keys=False)
    return report


async def _maybe_regenerate(
    report: RescoreReport,
    manifest: RunManifest,
    target: RunDir,
    *,
    model: ChatModel,
    result: DeliberationResult,
    solutions: dict[str, Solution],
    regenerate: bool,
) -> RescoreReport:
    """Continue the deliberation from a new veto of the final set, when asked and allowed."""
    final = report.sets[-1] if report.sets else None
    if final is None or final.outcome != "now_vetoed":
        return report.model_copy(update={"regeneration_note": "no new veto of the final set"})
    if not regenerate:
        note = "the final set is now vetoed; not regenerated (ask with --regenerate)"
        return report.model_copy(update={"regeneration_note": note})
    if manifest.strategy != "deliberation":
        note = f"a {manifest.strategy} baseline has no theory loop to continue; not regenerated"
        return report.model_copy(update={"regeneration_note": note})
    limit = manifest.limits.max_regenerations
    if final.regeneration >= limit:
        note = (
            f"the run already used its {limit} regeneration(s) (limits.max_regenerations); "
            "not regenerated"
        )
        return report.model_copy(update={"regeneration_note": note, "status": "vetoed_out"})
    vetoed_views = tuple(
        solutions[i].view()
        for s in report.sets
        if s.before.vetoed or s.after.vetoed
        for i in _set_ids(s.before)
    )
    state = RunState(
        phase="generate",
        regeneration=final.regeneration + 1,
        total_rounds=result.total_rounds,
        excluded=vetoed_views,
        monitor=result.monitor,
        verdicts=tuple(s.after for s in report.sets),
        metrics=result.metrics,
        usage=report.usage,
    )
    write_json_atomic(target.checkpoint_path, state.model_dump(mode="json"), indent=None)
    continued = await deliberation.run_manifest(manifest, target.path, model=model, resume=True)
    return report.model_copy(
        update={
            "regenerated": True,
            "regeneration_note": f"continued from the new veto as generation "
            f"{final.regeneration + 1}: {continued.status}, "
            f"{len(continued.conclusions)} conclusion(s) in result.json",
            "status": continued.status,
            "usage": continued.usage,
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
) -> RescoreReport:
    """Re-judge a finished run against updated constraint knowledge (see `rescore_async`)."""
    return run_sync(
        rescore_async(
            run_dir,
            practicality_kb=practicality_kb,
            out=out,
            model=model,
            profile=profile,
            severity=severity,
            regenerate=regenerate,
        )
    )


def read_rescore(run_dir: str | Path) -> RescoreReport:
    """A rescore run's ``rescore.json``."""
    path = RunDir(run_dir).rescore_path
    if not path.exists():
        raise InputError("run_dir", f"{str(path)!r} does not exist", allowed="a rescore run")
    return RescoreReport.model_validate_json(path.read_text("utf-8"))
