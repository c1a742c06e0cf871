"""Exact replay of a run from its own response cache: zero network calls, same result."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from hivemind_lab.asyncrun import run_sync
from hivemind_lab.canonical import canonical_json
from hivemind_lab.deliberation.runner import run_manifest
from hivemind_lab.errors import InputError
from hivemind_lab.llm.cache import CachingChatModel, ResponseCache
from hivemind_lab.models import Frozen
from hivemind_lab.runs.results import DeliberationResult
from hivemind_lab.runs.rundir import RunDir

VOLATILE = ("wall_time_s", "audit_head", "audit_records", "usage.cache_hits", "usage.model_calls")
"""Fields that record how a run went rather than what it concluded: wall time, the audit head
(audit records carry timestamps) and cache accounting (a replay is all cache hits)."""


class ReplayReport(Frozen):
    run_dir: str
    identical: bool
    first_difference: str | None = None
    network_calls: int = 0
    compared_bytes: int = 0


def comparable(result: DeliberationResult) -> dict[str, Any]:
    """The result as JSON without its volatile fields."""
    data = result.model_dump(mode="json")
    for path in VOLATILE:
        node = data
        *parents, leaf = path.split(".")
        for key in parents:
            node = node.get(key, {})
        node.pop(leaf, None)
    for share in data.get("models", ()):  # each model's line counts its cache hits too
        for field in ("cache_hits", "model_calls"):
            share.get("usage", {}).pop(field, None)
    return data


def first_difference(a: Any, b: Any, path: str = "") -> str | None:
    """Dotted path of the first place two JSON values differ."""
    if type(a) is not type(b):
        return path or "(root)"
    if isinstance(a, dict):
        for key in sorted(set(a) | set(b)):
            if key not in a or key not in b:
                return f"{path}.{key}".lstrip(".")
            found = first_difference(a[key], b[key], f"{path}.{key}")
            if found:
                return found.lstrip(".")
        return None
    if isinstance(a, list):
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            found = first_difference(x, y, f"{path}[{i}]")
            if found:
                return found
        return f"{path}[{min(len(a), len(b))}]" if len(a) != len(b) else None
    return None if a == b else (path.lstrip(".") or "(root)")


def replay(run_dir: str | Path) -> ReplayReport:
    """Rebuild a run (deliberation or baseline) from its manifest with its own cache in replay
    mode, and compare the results."""
    run = RunDir(run_dir)
    if not run.started or not run.finished:
        raise InputError(
            "run_dir",
            f"{str(run.path)!r} is not a finished run",
            allowed="a directory with manifest.json and result.json",
        )
    manifest = run.read_manifest()
    with tempfile.TemporaryDirectory() as tmp:
        recorded = ResponseCache(run.snapshot_cache(Path(tmp) / "recorded.sqlite"))
        model = CachingChatModel(
            None, recorded, mode="replay", backend=manifest.backend, model=manifest.model
        )
        # A roster's agents replay from the entries their own models wrote (one per model).
        per_model = {
            (m.backend, m.model): CachingChatModel(
                None, recorded, mode="replay", backend=m.backend, model=m.model
            )
            for m in manifest.agent_models.values()
        }
        models = {a: per_model[m.backend, m.model] for a, m in manifest.agent_models.items()}
        try:
            run_sync(run_manifest(manifest, Path(tmp) / "replay", model=model, models=models))
        finally:
            recorded.close()
        original = comparable(run.read_result())
        again = comparable(RunDir(Path(tmp) / "replay").read_result())
    a, b = canonical_json(original).encode(), canonical_json(again).encode()
    return ReplayReport(
        run_dir=str(run.path),
        identical=a == b,
        first_difference=None if a == b else first_difference(original, again),
        network_calls=model.misses + sum(m.misses for m in per_model.values()),
        compared_bytes=len(a),
    )
