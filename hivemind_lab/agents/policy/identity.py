"""The offline model's identity beyond its name: a content hash of the code that answers.

``hivemind-offline-v2`` names the model but does not change when its reasoning does, so a sweep
could not tell a run of yesterday's model from one of today's. The fingerprint hashes the source
of this package and of every ``hivemind_lab`` module it imports, transitively (the options,
decision and text helpers it reasons with, the task schemas and prompts it reads): any edit to
what can change a reply changes it. Computed once per process.
"""

from __future__ import annotations

import ast
import functools
import hashlib
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2]
"""The ``hivemind_lab`` package folder."""


def code_fingerprint() -> str:
    """``sha256:`` of the offline model's source files (this package, its word lists and the
    modules it imports)."""
    return _fingerprint()


@functools.cache
def _fingerprint() -> str:
    digest = hashlib.sha256()
    lexicons = set(Path(__file__).parent.glob("lexicon/*.txt"))  # its word lists are code too
    for path in sorted(_sources() | lexicons, key=lambda p: p.relative_to(PACKAGE).as_posix()):
        digest.update(path.relative_to(PACKAGE).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return "sha256:" + digest.hexdigest()


def _sources() -> set[Path]:
    """The offline package's files and the package modules they import, transitively."""
    todo = sorted(Path(__file__).parent.glob("*.py"))
    seen: set[Path] = set()
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        todo += [p for p in _imports(path) if p not in seen]
    return seen


def _imports(path: Path) -> list[Path]:
    """Files of the ``hivemind_lab`` modules ``path`` imports (module-level or inside functions)."""
    names: list[str] = []
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names += [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names += [a.name for a in node.names]
    out = []
    for name in names:
        parts = name.split(".")
        if parts[0] != "hivemind_lab" or len(parts) < 2:
            continue
        base = PACKAGE.joinpath(*parts[1:])
        for candidate in (base.with_suffix(".py"), base / "__init__.py"):
            if candidate.is_file():
                out.append(candidate)
    return out
