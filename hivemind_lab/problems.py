"""Strategic problems: the question plus optional client-cleared and market data (TOML files)."""

from __future__ import annotations

import tomllib
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from hivemind_lab.errors import InputError
from hivemind_lab.knowledge.documents import ID_PATTERN


class AttachedDocument(BaseModel):
    """Client-cleared or market data that every agent sees."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(pattern=ID_PATTERN)
    title: str = Field(min_length=1, max_length=300)
    text: str = Field(min_length=1, max_length=50_000)


class SuggestedInputs(BaseModel):
    """Slider values a problem's author suggests for a demo."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    sufficiency: int = Field(default=2, ge=1)
    feasibility: int = Field(default=50, ge=1, le=100)
    density: int = Field(default=6000, gt=0)


class Problem(BaseModel):
    """A client's strategic question."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(pattern=ID_PATTERN)
    title: str = Field(min_length=1, max_length=300)
    profile: str = Field(default="enterprise", min_length=1)
    """Practicality profile the problem calls for (enterprise, individual or a custom one)."""
    question: str = Field(min_length=1)
    suggested: SuggestedInputs = SuggestedInputs()
    client_data: tuple[AttachedDocument, ...] = ()
    market_data: tuple[AttachedDocument, ...] = ()


def load_problem(path: str | Path) -> Problem:
    """Read one problem TOML file; errors name the file and field."""
    path = Path(path)
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(
            "problem", f"file {str(path)!r} does not exist", allowed="a .toml file"
        ) from None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise InputError("problem", f"{str(path)!r} is not valid TOML ({exc})") from None
    try:
        return Problem.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        loc = ".".join(str(p) for p in err["loc"])
        raise InputError(f"{path}: {loc}", err["msg"]) from None


def load_problems(folder: str | Path) -> list[Problem]:
    """Every problem in a folder, sorted by id."""
    paths = sorted(Path(folder).glob("*.toml"))
    if not paths:
        raise InputError("problems", f"no .toml problems in {str(folder)!r}")
    return sorted((load_problem(p) for p in paths), key=lambda p: p.id)


def problem_from_text(text: str) -> Problem:
    """Wrap a bare question typed on the command line."""
    return Problem(id="ad-hoc", title=text.strip()[:80] or "ad hoc", question=text)
