"""Strategic problems: the question plus optional client-cleared and market data (TOML files)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import Field, StrictBool, ValidationError, field_validator

from hivemind_lab.errors import InputError
from hivemind_lab.knowledge.documents import ID_PATTERN
from hivemind_lab.models import FrozenRecord
from hivemind_lab.problems.model import ConstraintKind


class ConstraintSpec(FrozenRecord):
    """A binding constraint as a problem file or a flag states it."""

    text: str = Field(min_length=1, max_length=1000)
    kind: ConstraintKind | None = None
    """legal, regulatory, financial, operational, social, deadline or other (read when absent)."""
    forbids: tuple[str, ...] = ()
    """Labels of the options it rules out (linked by content when neither list is given)."""
    limits: tuple[str, ...] = ()
    """Labels of the options it only bounds."""
    not_first: tuple[str, ...] = ()
    """Labels of the options it bars as a first move but allows later (a dividend unlawful now,
    lawful after the leaseback)."""
    after: str | None = None
    """Label of the option that must come before the ``not_first`` ones."""

    @field_validator("text")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        return value.strip()


class AttachedDocument(FrozenRecord):
    """Client-cleared or market data that every agent sees."""

    id: str = Field(pattern=ID_PATTERN)
    title: str = Field(min_length=1, max_length=300)
    text: str = Field(min_length=1, max_length=50_000)


class SuggestedInputs(FrozenRecord):
    """Slider values a problem's author suggests for a demo."""

    sufficiency: int = Field(default=2, ge=1)
    feasibility: int = Field(default=50, ge=1, le=100)
    density: int = Field(default=6000, gt=0)


class Problem(FrozenRecord):
    """A client's strategic question."""

    id: str = Field(pattern=ID_PATTERN)
    title: str = Field(min_length=1, max_length=300)
    profile: str = Field(default="enterprise", min_length=1)
    """Practicality profile the problem calls for (enterprise, individual or a custom one)."""
    question: str = Field(min_length=1)
    options: tuple[Annotated[str, Field(min_length=1, max_length=160)], ...] = Field(
        default=(), max_length=8
    )
    """The courses of action the client weighs (read from the question when empty)."""
    exclusive: StrictBool | None = None
    """true: the client takes one of the options (alternatives, never sequenced); false: they
    may be combined or sequenced; absent: not stated (the model intake may read it from the question)."""
    constraints: tuple[ConstraintSpec, ...] = Field(default=(), max_length=12)
    """Binding constraints: a text each, or a table with text, kind, forbids, limits,
    not_first and after."""
    declared_in: Literal["toml", "front_matter"] = "toml"
    """Where the problem's own options, constraints and exclusivity were written (set by the
    loader)."""
    suggested: SuggestedInputs = SuggestedInputs()
    roster: dict[str, Any] | None = None
    """The problem file's ``[roster]`` table as written: which model answers each agent (None:
    the run's one model for all; ``--agent-model`` flags replace the roles and agents they
    name). Read by the one roster parser (`hivemind_lab.agents.roster.roster_from_table`) where
    the run is assembled: a problem names models but does not know them."""
    client_data: tuple[AttachedDocument, ...] = ()
    market_data: tuple[AttachedDocument, ...] = ()

    @field_validator("question", "title")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        return value

    @field_validator("constraints", mode="before")
    @classmethod
    def _constraint_texts(cls, value: Any) -> Any:
        if isinstance(value, (list, tuple)):
            return [{"text": v} if isinstance(v, str) else v for v in value]
        return value

    @field_validator("options")
    @classmethod
    def _distinct_options(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        # checked here as well as in the request, so the error names the problem file
        cleaned = [v.strip().casefold() for v in value]
        if any(not v for v in cleaned):
            raise ValueError("an option is blank")
        if len(set(cleaned)) != len(cleaned):
            raise ValueError("options must be distinct")
        return value


_ALLOWED = {
    "id": "lower-case letters, digits, '.', '_' or '-', starting with a letter or digit",
    "title": "1-300 characters",
    "question": "non-empty text",
    "options": "up to 8 distinct, non-empty options of at most 160 characters each",
    "profile": "enterprise, individual or comma-separated constraint names",
    "exclusive": "true (one of the options) or false (options may be combined or sequenced)",
    "constraints": "up to 12 texts, or tables with text, kind, forbids, limits, not_first and after",
    "constraints.kind": "legal, regulatory, financial, operational, social, deadline or other",
    "suggested.sufficiency": "integer >= 1",
    "suggested.feasibility": "integer 1-100",
    "suggested.density": "integer tokens > 0",
}
"""What each problem field accepts, for error messages (fields not listed: see the README)."""


def _not_utf8(path: Path, exc: UnicodeDecodeError) -> str:
    byte = exc.object[exc.start]
    return f"{str(path)!r} is not UTF-8 (byte 0x{byte:02x} at offset {exc.start}); save it as UTF-8"


def load_problem(path: str | Path) -> Problem:
    """Read one problem TOML file; errors name the file and field."""
    path = Path(path)
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8-sig"))  # a BOM is not TOML
    except FileNotFoundError:
        raise InputError(
            "problem", f"file {str(path)!r} does not exist", allowed="a .toml file"
        ) from None
    except UnicodeDecodeError as exc:
        raise InputError("problem", _not_utf8(path, exc), allowed="UTF-8 text") from None
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise InputError("problem", f"{str(path)!r} is not valid TOML ({exc})") from None
    try:
        return Problem.model_validate(raw)
    except ValidationError as exc:
        raise _invalid(str(path), exc) from None


_SAID = {
    "missing": "is missing",
    "extra_forbidden": "is not a field of a problem",
    "string_type": "is not text",
    "string_too_short": "is empty",
    "string_pattern_mismatch": "has characters it cannot have",
    "int_type": "is not a whole number",
    "int_parsing": "is not a whole number",
    "int_from_float": "is not a whole number",
    "bool_type": "is not true or false",
    "bool_parsing": "is not true or false",
    "tuple_type": "is not a list",
    "list_type": "is not a list",
    "model_type": "is not a table",
    "dict_type": "is not a table",
    "model_attributes_type": "is not a table",
    "literal_error": "is not one of the allowed values",
    "enum": "is not one of the allowed values",
}
"""What a problem file's value does wrong, by pydantic's error type (bounds are worded with
their limit in `_worded`)."""


def _worded(err: Any) -> tuple[str, str, str | None]:
    """One validation error as the problem's author reads it: the field (``suggested.density``,
    ``options.2``), what is wrong with the value they wrote, and what is allowed."""
    loc = ".".join(str(p) for p in err["loc"])
    kind, ctx = err["type"], err.get("ctx") or {}
    bounds = {
        "greater_than_equal": f"must be at least {ctx.get('ge')}",
        "greater_than": f"must be more than {ctx.get('gt')}",
        "less_than_equal": f"must be at most {ctx.get('le')}",
        "less_than": f"must be less than {ctx.get('lt')}",
        "string_too_long": f"is longer than {ctx.get('max_length')} characters",
        "too_long": f"has more than {ctx.get('max_length')} items",
        "too_short": f"has fewer than {ctx.get('min_length')} items",
    }
    said = bounds.get(kind) or _SAID.get(kind) or re.sub(r"^Value error, ", "", err["msg"])
    if kind not in ("missing", "extra_forbidden"):
        said += f", got {err.get('input')!r}"[:200]
    field = re.sub(r"\.\d+$", "", loc)
    allowed = _ALLOWED.get(field) or (
        f"one of {', '.join(sorted(Problem.model_fields))}"
        if kind == "extra_forbidden" and "." not in loc
        else None
    )
    return loc, said, allowed


def _invalid(where: str, exc: ValidationError, *, prefix: str = "") -> InputError:
    """Every error of a problem at once (a file with three mistakes is refused once, naming
    the three), each in the author's words; one error names its field as before."""
    worded = [_worded(err) for err in exc.errors(include_url=False)]
    if len(worded) == 1:
        loc, said, allowed = worded[0]
        return InputError(f"{where}: {prefix}{loc}", said, allowed=allowed)
    lines = [
        f"\n  {prefix}{loc}: {said}" + (f" (allowed: {allowed})" if allowed else "")
        for loc, said, allowed in worded
    ]
    return InputError(where, f"{len(worded)} fields need fixing:" + "".join(lines))


def load_problems(folder: str | Path) -> list[Problem]:
    """Every problem in a folder, sorted by id."""
    paths = sorted(Path(folder).glob("*.toml"))
    if not paths:
        raise InputError("problems", f"no .toml problems in {str(folder)!r}")
    return sorted((load_problem(p) for p in paths), key=lambda p: p.id)


TEXT_SUFFIXES = (".txt", ".md", ".markdown")
_PATH_LIKE = re.compile(r"^\S+(?:[/\\]\S*|\.[A-Za-z0-9]{1,8})$")


def _title(text: str) -> str:
    """A text problem's title: an email's subject line, else its first heading or first line,
    cut at a word."""
    from hivemind_lab.problems.reading.text import subject

    said = subject(text)
    if said:
        return _cut(said)
    first = text.strip().splitlines()[0]
    return _cut(first.lstrip("# ").strip() if first.lstrip().startswith("#") else first.strip())


def _cut(line: str, limit: int = 120) -> str:
    return line if len(line) <= limit else line[: limit - 1].rsplit(" ", 1)[0] + "…"


_FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(?P<yaml>.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)
_FRONT_KEYS = ("options", "constraints", "exclusive")


def front_matter(text: str, *, where: str = "problem") -> tuple[dict[str, Any], str]:
    """A Markdown problem's front matter (``options``, ``constraints``, ``exclusive``) and the
    text after it; ({}, text) when it has none. Errors name ``where`` and the key."""
    match = _FRONT_MATTER.match(text)
    if not match:
        return {}, text
    try:
        raw = yaml.safe_load(match.group("yaml")) or {}
    except yaml.YAMLError as exc:
        raise InputError(f"{where}: front matter", f"is not valid YAML ({exc})") from None
    if not isinstance(raw, dict):
        raise InputError(f"{where}: front matter", "is not a mapping", allowed="key: value lines")
    unknown = sorted(str(k) for k in raw if k not in _FRONT_KEYS)
    if unknown:
        raise InputError(
            f"{where}: front matter", f"unknown key {unknown[0]!r}", allowed=", ".join(_FRONT_KEYS)
        )
    return raw, text[match.end() :]


def problem_from_text(text: str, *, id: str = "ad-hoc", where: str = "problem") -> Problem:
    """Wrap a bare question (typed, or read from a text file); a Markdown front matter's
    options, constraints and exclusivity are the problem's own."""
    text = text.replace("\ufeff", "")  # a byte-order mark is not part of the question
    declared, text = front_matter(text, where=where)
    if not text.strip():
        raise InputError("problem", "is blank", allowed="non-empty text or a problem file")
    title = _title(text)
    slug = re.sub(r"[^a-z0-9]+", "-", id.lower()).strip("-") or "ad-hoc"
    values: dict[str, Any] = {
        "id": slug,
        "title": title or "ad hoc",
        "question": text.strip(),
        "profile": _profile(text),
    }
    if declared:
        values.update(declared, declared_in="front_matter")
    try:
        return Problem.model_validate(values)
    except ValidationError as exc:
        raise _invalid(where, exc, prefix="front matter ") from None


def _profile(text: str) -> str:
    """``individual`` for a decision told in the first person singular ("Should I take the
    offer? My partner …"), else ``enterprise``: a career choice is scored for its social,
    occupational and reputational feasibility, not by a regulator."""
    singular = len(re.findall(r"\b(?:I|I'm|I've|I'd|me|my|myself)\b", text))
    plural = len(re.findall(r"\b(?:we|we're|we've|us|our|ours)\b", text, re.IGNORECASE))
    return "individual" if singular >= 2 and singular > plural else "enterprise"


def resolve_problem(argument: str) -> Problem:
    """A ``--problem`` argument: a .toml file, a .txt/.md file (its text is the question), or
    the question itself. Something that looks like a path but is not a file is an error."""
    if not argument.strip():
        raise InputError("problem", "is blank", allowed="non-empty text or a problem file")
    single_token = not re.search(r"\s", argument.strip())
    path = Path(argument.strip())
    try:
        exists = "\n" not in argument and path.exists()
    except OSError:  # e.g. a name too long for the file system: it is text
        exists = False
    looks_like_path = exists or (single_token and bool(_PATH_LIKE.match(argument.strip())))
    if not looks_like_path:
        return problem_from_text(argument)
    if not exists:
        raise InputError(
            "problem",
            f"file {str(path)!r} does not exist",
            allowed="a .toml, .txt or .md file, or the problem as text",
        )
    if path.is_dir():
        raise InputError(
            "problem", f"{str(path)!r} is a directory", allowed="a .toml, .txt or .md file"
        )
    if path.suffix.lower() == ".toml":
        return load_problem(path)
    if path.suffix.lower() in TEXT_SUFFIXES:
        try:
            text = path.read_text(encoding="utf-8-sig")
        except UnicodeDecodeError as exc:
            raise InputError("problem", _not_utf8(path, exc), allowed="UTF-8 text") from None
        except OSError as exc:
            raise InputError("problem", f"cannot read {str(path)!r} ({exc})") from None
        if not text.strip():
            raise InputError("problem", f"{str(path)!r} is empty", allowed="a non-empty question")
        return problem_from_text(text, id=path.stem, where=str(path))
    raise InputError(
        "problem",
        f"{str(path)!r} has an unsupported suffix {path.suffix!r}",
        allowed="a .toml, .txt or .md file, or the problem as text",
    )
