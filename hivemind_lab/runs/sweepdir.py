"""Where a sweep lives: the files of an experiment folder, read and written in one place.

An experiment folder (``experiments/runs/<name>/``) holds one run directory per point
(`RunDir`) and the sweep's own files: ``spec.json`` the spec it ran with and its hash,
``last-sweep.json`` what the latest sweep reused, re-ran because stale and ran anew,
``optuna.json`` an Optuna search's best point, ``.sweep.lock`` held by the sweep running on the
folder, ``shared-cache*.sqlite`` the replies shared by its runs, and ``stale/`` the runs set
aside because they no longer stand for their point (whole, never deleted), with
``stale/moved.jsonl`` saying why. Only the run directories are runs: every reader of a sweep
lists them through `SweepDir.runs`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeVar

from pydantic import ValidationError

from hivemind_lab.models import FrozenRecord
from hivemind_lab.runs.manifest import utc_now
from hivemind_lab.runs.rundir import RunDir, write_json_atomic

STALE = "stale"
"""Subfolder of an experiment folder where stale runs are kept."""
_Record = TypeVar("_Record", bound=FrozenRecord)


class SweepSpec(FrozenRecord):
    """spec.json: the experiment spec the folder's latest sweep ran (as JSON) and its hash."""

    spec: dict[str, Any]
    spec_hash: str


class LastSweep(FrozenRecord):
    """last-sweep.json: what the latest sweep of the folder did with its points."""

    reused: int
    """Finished runs still current, reused as they were."""
    stale: dict[str, int]
    """Runs set aside and made again, by reason."""
    new: int
    """Points run for the first time (or finishing an interrupted run)."""
    summary: str
    """The same in words."""


class OptunaBest(FrozenRecord):
    """optuna.json: the best value an Optuna search found and the calibrations that gave it."""

    best_value: float
    best_params: dict[str, float]


class MovedRun(FrozenRecord):
    """One line of stale/moved.jsonl: a run set aside, where to, and why."""

    run_id: str
    moved_to: str
    reasons: tuple[str, ...]
    at: str


class SweepDir:
    """The files of one experiment folder."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    @property
    def spec_path(self) -> Path:
        return self.path / "spec.json"

    @property
    def last_sweep_path(self) -> Path:
        return self.path / "last-sweep.json"

    @property
    def optuna_path(self) -> Path:
        return self.path / "optuna.json"

    @property
    def lock_path(self) -> Path:
        return self.path / ".sweep.lock"

    @property
    def stale_path(self) -> Path:
        return self.path / STALE

    @property
    def moved_path(self) -> Path:
        return self.stale_path / "moved.jsonl"

    def shared_cache_path(self, name: str) -> Path:
        """The reply cache the folder's runs share (``name``: its file name)."""
        return self.path / name

    def run(self, run_id: str) -> RunDir:
        """The run directory of one point."""
        return RunDir(self.path / run_id)

    def runs(self) -> list[RunDir]:
        """Every run directory directly in the folder (those that hold a manifest), by name;
        never the stale ones."""
        if not self.path.is_dir():
            return []
        return [
            RunDir(p)
            for p in sorted(self.path.iterdir())
            if p.is_dir() and p.name != STALE and RunDir(p).started
        ]

    def stale_runs(self) -> list[RunDir]:
        """The runs set aside, by name."""
        if not self.stale_path.is_dir():
            return []
        return [RunDir(p) for p in sorted(self.stale_path.iterdir()) if p.is_dir()]

    def metrics_paths(self) -> list[Path]:
        """metrics.parquet of every run that wrote one (the folder's sweep figures), never the
        stale ones. A folder holding metrics is a run whether or not its manifest is still there
        (a run copied for its figures alone keeps only them)."""
        if not self.path.is_dir():
            return []
        found = (RunDir(p).metrics_path for p in sorted(self.path.iterdir()) if p.name != STALE)
        return [m for m in found if m.exists()]

    def write_spec(self, spec: dict[str, Any], spec_hash: str) -> Path:
        return write_json_atomic(
            self.spec_path, SweepSpec(spec=spec, spec_hash=spec_hash).model_dump()
        )

    def read_spec(self) -> SweepSpec | None:
        return _read(self.spec_path, SweepSpec)

    def write_last_sweep(self, note: LastSweep) -> Path:
        return write_json_atomic(self.last_sweep_path, note.model_dump(mode="json"))

    def read_last_sweep(self) -> LastSweep | None:
        """What the latest sweep did (None before the first one, or for an unreadable file)."""
        return _read(self.last_sweep_path, LastSweep)

    def write_optuna(self, best: OptunaBest) -> Path:
        return write_json_atomic(self.optuna_path, best.model_dump(mode="json"))

    def read_optuna(self) -> OptunaBest | None:
        return _read(self.optuna_path, OptunaBest)

    def move_aside(self, run: RunDir, *, created_at: str, reasons: Sequence[str]) -> RunDir:
        """Move a run to ``stale/<run-id>-<created>/`` (never deleted: it stays a complete
        artifact) and note why in ``stale/moved.jsonl``."""
        self.stale_path.mkdir(exist_ok=True)
        created = re.sub(r"[^0-9T]", "", created_at.split("+")[0]) + "Z"
        target, n = self.stale_path / f"{run.path.name}-{created}", 1
        while target.exists():
            n += 1
            target = self.stale_path / f"{run.path.name}-{created}-{n}"
        run.path.rename(target)
        note = MovedRun(
            run_id=run.path.name, moved_to=target.name, reasons=tuple(reasons), at=utc_now()
        )
        with self.moved_path.open("a", encoding="utf-8") as log:
            log.write(note.model_dump_json() + "\n")
        return RunDir(target)

    def read_moved(self) -> list[MovedRun]:
        """Every run set aside, in the order they were moved."""
        try:
            lines = self.moved_path.read_text("utf-8").splitlines()
        except FileNotFoundError:
            return []
        return [MovedRun.model_validate_json(line) for line in lines if line.strip()]


def _read(path: Path, model: type[_Record]) -> _Record | None:
    try:
        return model.model_validate(json.loads(path.read_text("utf-8")))
    except (OSError, ValueError, ValidationError):
        return None
