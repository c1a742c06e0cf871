"""Whether a sweep point's existing run can stand for the point today, and setting it aside if not.

A run id (`RunPoint.run_id`) names a point of a spec: what was asked for. What a run *got* also
depends on things the id does not see — the problem file's text and the request read from it, the
prompt version, the engine's rules, the model's code (``hivemind-offline-v2`` is a name, not a version of its code),
the knowledge bases' content. A finished run is reused only when its manifest records the same of
each as the point would record now; otherwise it is stale.

Design (2026-12-01): stale runs keep their id and are *moved aside* to
``<root>/stale/<run-id>-<created>/`` (whole, resumable and replayable, never deleted) before the
point runs again (`SweepDir.move_aside`), rather than folding the fingerprints into the id. With moved runs the
experiment folder holds exactly one run per point, made by the current code, so every reader of
it — `load()`, `compare()`, the reports, figures, notebooks and anything that globs
``<root>/*/`` — sees only current runs without knowing about staleness. New ids would leave old
and new runs side by side in that folder, and each reader would have to filter them out.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Literal

from hivemind_lab.agents import prompts
from hivemind_lab.agents.policy import identity
from hivemind_lab.deliberation import rules
from hivemind_lab.deliberation.practicality import resolve_constraints
from hivemind_lab.experiments.points import RunPoint
from hivemind_lab.experiments.spec import ExperimentSpec, FixedInputs
from hivemind_lab.inputs import DeliberationRequest, request_for
from hivemind_lab.knowledge import fingerprint
from hivemind_lab.models import Frozen
from hivemind_lab.problems import resolve_problem
from hivemind_lab.problems.decision import decide
from hivemind_lab.runs.manifest import Budget, KnowledgeHashes, RunManifest

StaleReason = Literal["problem", "prompt", "engine", "model", "knowledge", "budget"]
"""Why a run no longer stands for its point: the request read from the problem file, the prompt
version, the engine's rules, the model's code, the knowledge's content, or (baselines) the
compute allowed."""


class Current(Frozen):
    """What a point's run would record now (for the fields that decide its outcome)."""

    request: DeliberationRequest
    prompt_version: str
    engine_code: str
    """Content fingerprint of the engine's rules (`hivemind_lab.deliberation.rules`)."""
    model_code: str | None
    """Content fingerprint of the offline model's code (None for other backends)."""
    knowledge: KnowledgeHashes


def current(spec: ExperimentSpec, point: RunPoint, project: Path) -> Current:
    """What ``point`` would record if it ran now (files are read only when they changed)."""
    request = point_request(spec, point, project)
    kb, pkb = project / spec.knowledge_base, project / spec.practicality_kb
    constraints = resolve_constraints(pkb, request.profile)
    return Current(
        request=request,
        prompt_version=prompts.PROMPT_VERSION,
        engine_code=rules.engine_fingerprint(),
        model_code=identity.code_fingerprint() if uses_offline(spec, point.roster) else None,
        knowledge=KnowledgeHashes(
            theory=fingerprint.folder_hash(kb),
            constraints=fingerprint.constraint_hashes(pkb, constraints),
        ),
    )


def uses_offline(spec: ExperimentSpec, roster: str | None = None) -> bool:
    """Whether a run of the spec under ``roster`` speaks through the offline stand-in (the
    spec's backend, or an entry of the roster)."""
    entries = spec.rosters[roster].entries() if roster is not None else ()
    return spec.backend == "offline" or any(e.backend == "offline" for e in entries)


def offline_codes(manifest: RunManifest) -> set[object]:
    """The offline stand-in's code fingerprints a run recorded: the run's model's, and each
    roster agent's on the stand-in."""
    codes = {
        m.model_info.get("code") for m in manifest.agent_models.values() if m.backend == "offline"
    }
    if manifest.backend == "offline":
        codes.add(manifest.model_info.get("code"))
    return codes


def _stamp(path: Path) -> tuple[int, int]:
    try:
        stat = path.stat()
    except OSError:  # resolve_problem names the missing file
        return 0, 0
    return stat.st_mtime_ns, stat.st_size


def point_request(spec: ExperimentSpec, point: RunPoint, project: Path) -> DeliberationRequest:
    """The request a point runs: its problem file read as `deliberate` reads it (.toml, .txt
    or .md), with the spec's inputs as its flags (read again only when the file changed)."""
    path = project / point.problem
    return _request(str(path), _stamp(path), spec.inputs.model_dump_json())


@functools.lru_cache(maxsize=64)
def _request(path: str, stamp: tuple[int, int], inputs: str) -> DeliberationRequest:
    given = FixedInputs.model_validate_json(inputs)
    problem = resolve_problem(path)
    decision = None
    if given.options or given.constraints or given.exclusive is not None:
        decision = decide(
            problem,
            options=given.options,
            constraints=given.constraints,
            exclusive=given.exclusive,
            exclusive_source="flag",
        )
    return request_for(
        problem,
        decision=decision,
        sufficiency=given.sufficiency,
        feasibility=given.feasibility,
        density=given.density,
        critique_mode=given.critique_mode,
        score_mode=given.score_mode,
        profile=given.profile,
    )


def stale_reasons(
    manifest: RunManifest, now: Current, budget: Budget | None = None
) -> tuple[StaleReason, ...]:
    """Why the run ``manifest`` describes differs from what its point would run now (empty:
    it can be reused). Anything a manifest did not record counts as changed."""
    reasons: list[StaleReason] = []
    recorded = manifest.request.model_dump(mode="json")
    if recorded != now.request.model_dump(mode="json"):
        reasons.append("problem")
    if manifest.prompt_version != now.prompt_version:
        reasons.append("prompt")
    if manifest.engine_code != now.engine_code:
        reasons.append("engine")
    if now.model_code is not None and offline_codes(manifest) != {now.model_code}:
        reasons.append("model")
    if manifest.knowledge_hashes != now.knowledge:
        reasons.append("knowledge")
    if budget is not None and manifest.budget != budget:
        reasons.append("budget")
    return tuple(reasons)
