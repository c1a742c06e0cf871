"""The sample data that ships beside the package: ``data/knowledge``, ``data/practicality``.

Commands and the run API default to these folders by their relative names, which read well in
``--help`` and in manifests; but a user who runs ``hivemind-lab`` from another folder would be
told that ``data/knowledge`` does not exist. A default that is absent from the current folder
therefore names the project's own copy; any path the user gives is taken as given.
"""

from __future__ import annotations

from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
KNOWLEDGE = "data/knowledge"
PRACTICALITY = "data/practicality"


def sample_path(path: str | Path, default: str, *, cwd: Path | None = None) -> Path:
    """``path``, or the project's copy of ``default`` when ``path`` is that default and the
    current folder (``cwd``) has no such folder."""
    given = Path(path)
    if given != Path(default) or given.is_absolute():
        return given
    here = (cwd or Path.cwd()) / given
    project = PROJECT / default
    if here.exists() or not project.exists():
        return given
    return project
