"""The engine's rules as a version: a content hash of the deliberation package's source.

The calibrations, the loop, the monitor and the practicality veto act in this package for every
model, so a change here changes what a run gets whatever answers it. The prompt version names
what models are asked, not these rules (prompt version 2026-12-02.3 named two different
crossing rules in one day), so a sweep compares this fingerprint too before it reuses a run.
Any edit counts, a docstring's included: a needless rerun costs time, a wrongly reused run
costs a wrong figure. Computed once per process.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent
"""The ``hivemind_lab.deliberation`` package folder."""


def engine_fingerprint() -> str:
    """``sha256:`` of every source file of the deliberation package, by relative path."""
    return _fingerprint()


@functools.cache
def _fingerprint() -> str:
    digest = hashlib.sha256()
    for path in sorted(PACKAGE.rglob("*.py"), key=lambda p: p.relative_to(PACKAGE).as_posix()):
        digest.update(path.relative_to(PACKAGE).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return "sha256:" + digest.hexdigest()
