"""Where a run lives: the files of a run directory, read and written atomically.

``manifest.json`` is what the run was (`RunManifest`), ``result.json`` what it concluded,
``audit.jsonl`` every utterance, ``cache.sqlite`` every model reply (so the run replays alone),
``checkpoint.json`` the engine's last completed phase, ``metrics.parquet`` the sweep figures.
"""

from __future__ import annotations

import io
import json
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from hivemind_lab.canonical import canonical_json
from hivemind_lab.errors import InputError
from hivemind_lab.runs.atomic import write_bytes_atomic, write_text_atomic
from hivemind_lab.runs.manifest import MANIFEST_VERSION, RunManifest, upgrade_manifest
from hivemind_lab.runs.results import DeliberationResult


class RunDir:
    """The files of one run directory."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    @property
    def manifest_path(self) -> Path:
        return self.path / "manifest.json"

    @property
    def result_path(self) -> Path:
        return self.path / "result.json"

    @property
    def audit_path(self) -> Path:
        return self.path / "audit.jsonl"

    @property
    def cache_path(self) -> Path:
        return self.path / "cache.sqlite"

    @property
    def checkpoint_path(self) -> Path:
        return self.path / "checkpoint.json"

    @property
    def rescore_path(self) -> Path:
        return self.path / "rescore.json"

    @property
    def metrics_path(self) -> Path:
        return self.path / "metrics.parquet"

    @property
    def started(self) -> bool:
        """A manifest was written: the run can be resumed or replayed."""
        return bool(self.manifest_path.exists())

    @property
    def finished(self) -> bool:
        return bool(self.result_path.exists())

    def read_manifest(self) -> RunManifest:
        """The manifest, whatever its version; errors name the file."""
        path = self.manifest_path
        try:
            raw = json.loads(path.read_text("utf-8"))
        except FileNotFoundError:
            raise InputError(
                "run_dir",
                f"{str(self.path)!r} holds no run",
                allowed="a directory with manifest.json",
            ) from None
        except (OSError, json.JSONDecodeError) as exc:
            raise InputError("manifest", f"{str(path)!r} is not valid JSON ({exc})") from None
        version = raw.get("schema_version") if isinstance(raw, dict) else None
        if version in (1, 2):
            raw = upgrade_manifest(raw)
        elif version != MANIFEST_VERSION:
            raise InputError(
                "manifest.schema_version",
                f"{str(path)!r} has version {version!r}",
                allowed=f"1 to {MANIFEST_VERSION}",
            )
        try:
            return RunManifest.model_validate(raw)
        except ValidationError as exc:
            err = exc.errors(include_url=False)[0]
            loc = ".".join(str(p) for p in err["loc"]) or "manifest"
            raise InputError(f"{path}: {loc}", err["msg"]) from None

    def write_manifest(self, manifest: RunManifest, *, new: bool = False) -> Path:
        """Write the manifest; ``new``: only if the directory holds none (atomically, so of two
        processes starting a run in one directory at once, one is refused)."""
        if not new:
            return write_json_atomic(
                self.manifest_path, manifest.model_dump(mode="json"), sort_keys=False
            )
        text = json.dumps(manifest.model_dump(mode="json"), indent=2, ensure_ascii=False)
        try:
            return write_bytes_atomic(
                self.manifest_path, (text + "\n").encode("utf-8"), replace=False
            )
        except FileExistsError:
            raise InputError(
                "out",
                f"{str(self.path)!r} already holds a run (another process started one there)",
                allowed="a new or empty directory (or --resume to continue a run)",
            ) from None

    def read_result(self) -> DeliberationResult:
        return DeliberationResult.model_validate_json(self.result_path.read_text("utf-8"))

    def write_result(self, result: DeliberationResult) -> Path:
        return write_json_atomic(self.result_path, result.model_dump(mode="json"), sort_keys=False)

    def snapshot_cache(self, destination: Path) -> Path:
        """A consistent copy of the response cache (SQLite backup: includes pages in the WAL)."""
        with (
            closing(sqlite3.connect(self.cache_path)) as src,
            closing(sqlite3.connect(destination)) as dst,
        ):
            src.backup(dst)
        return destination

    def write_metrics(self, manifest: RunManifest, result: DeliberationResult) -> Path:
        """metrics.parquet: one row per round, with the run's calibrations and outcome beside it."""
        import polars as pl  # only sweeps write metrics: the CLI starts without polars

        rows = metrics_rows(self.path.name, manifest, result)
        buffer = io.BytesIO()
        pl.DataFrame(rows).write_parquet(buffer)
        return write_bytes_atomic(self.metrics_path, buffer.getvalue())


def metrics_rows(
    run_id: str, manifest: RunManifest, result: DeliberationResult
) -> list[dict[str, Any]]:
    """The per-round metrics of a run with its per-run columns (what `experiments.load` reads)."""
    last = result.vetoes[-1] if result.vetoes else None
    run_cols = {
        "run_id": run_id,
        "strategy": manifest.strategy,
        "problem": result.problem_id,
        "seed": manifest.seed,
        **manifest.calibrations.model_dump(),
        "embedder": manifest.embedder.name,
        "status": result.status,
        "halted": result.status == "converged",
        "total_rounds": result.total_rounds,
        "regenerations": result.regenerations,
        "vetoes": sum(v.vetoed for v in result.vetoes),
        "final_conclusions": len(result.conclusions),
        "tie": result.tie,
        "mean_feasibility": last.mean_score if last else None,
        "first_feasibility": result.vetoes[0].mean_score if result.vetoes else None,
        "feasibility_by_constraint": json.dumps(last.per_constraint if last else {}),
        "run_calls": result.usage.calls,
        "run_tokens": result.usage.tokens,
        "budget_calls": manifest.budget.calls if manifest.budget else None,
        "budget_tokens": manifest.budget.tokens if manifest.budget else None,
        "cost_usd": result.usage.cost_usd,
        "cache_hits": result.usage.cache_hits,
        "wall_time_s": result.wall_time_s,
    }
    roster = manifest.experiment.point.get("roster") if manifest.experiment else None
    if roster is not None:  # a sweep over rosters: the dimension beside the calibrations
        run_cols["roster"] = roster
    return [{**run_cols, **m.model_dump()} for m in result.metrics] or [run_cols]


def load_result(run_dir: str | Path) -> DeliberationResult:
    """Read a run's result.json."""
    return RunDir(run_dir).read_result()


def read_manifest(run_dir: str | Path) -> RunManifest:
    """Read a run's manifest.json (any version)."""
    return RunDir(run_dir).read_manifest()


def write_json_atomic(
    path: str | Path, value: Any, *, indent: int | None = 2, sort_keys: bool = True
) -> Path:
    """Write JSON via a temporary file, fsync and rename: readers never see half a file
    (`write_text_atomic`).

    ``sort_keys=False`` keeps a model's field order (schema_version first)."""
    text = (
        canonical_json(value)
        if indent is None
        else json.dumps(value, indent=indent, sort_keys=sort_keys, ensure_ascii=False)
    )
    return write_text_atomic(path, text + "\n")
