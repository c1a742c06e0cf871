"""Knowledge documents: a folder of Markdown (with or without YAML front matter), plain text and
JSON-lines files, validated on load.

A document is the unit of slicing: it is never cut. The loader checks every file and reports all
problems at once, by file (and line, for JSON lines) and field, so an academic fixing a knowledge
base sees the whole list. Only the body is required: a missing title comes from the first
Markdown heading (a text file's first line; else the file name), a missing id from the file
name; every other field has a neutral default (see `DocumentMeta`). Years are not range-checked,
so classics (Sun Tzu, c. -500) load like last year's paper.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import Field, ValidationError

from hivemind_lab.errors import DocumentError, InputError
from hivemind_lab.models import FrozenRecord
from hivemind_lab.tokens import TokenCounter, default_counter

ID_PATTERN = r"^[a-z0-9][a-z0-9._-]{0,127}$"
SLUG_PATTERN = r"^[a-z0-9][a-z0-9-]{0,63}$"
SUFFIXES = (".md", ".markdown", ".txt", ".jsonl")
"""File types a knowledge base folder may hold (README.md is never a document)."""
DEFAULT_TOPIC = "general"
_FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)
SKIPPED = {
    ".pdf": "PDF is not read: convert it to Markdown or text (e.g. `pdftotext FILE.pdf`)",
    ".docx": "Word documents are not read: save it as Markdown or plain text",
    ".doc": "Word documents are not read: save it as Markdown or plain text",
    ".odt": "OpenDocument files are not read: save it as Markdown or plain text",
    ".rtf": "RTF is not read: save it as Markdown or plain text",
    ".html": "HTML is not read: save it as Markdown or plain text",
    ".htm": "HTML is not read: save it as Markdown or plain text",
}
"""Files a corpus folder often holds that are not documents, with what to do instead."""


class DocumentMeta(FrozenRecord):
    """The fields a knowledge document may carry (front matter keys, or JSON-lines keys)."""

    id: str = Field(pattern=ID_PATTERN)
    """Stable identifier, used in citations. Default: the file name without its suffix."""
    title: str = Field(min_length=1, max_length=300)
    """Human title. Default: the first Markdown heading (a text file's first line), else the
    file name."""
    authors: tuple[str, ...] = ()
    """Author names, in order. Default: none (shown as "unknown author")."""
    year: int | None = None
    """Publication year; negative for BCE. Default: unknown."""
    venue: str = Field(default="", max_length=200)
    """Journal, conference or publisher. Default: none."""
    peer_reviewed: bool = False
    """Whether the work passed peer review. Default: false."""
    topics: tuple[str, ...] = Field(default=(DEFAULT_TOPIC,), min_length=1)
    """Topics, the first being the document's school (kept together when slicing). Default:
    ``general``."""
    constraint: str | None = Field(default=None, pattern=SLUG_PATTERN)
    """For practicality knowledge: the constraint this document informs."""
    red_flags: tuple[str, ...] = ()
    """For practicality knowledge: phrases that signal risk under the constraint."""
    mitigations: tuple[str, ...] = ()
    """For practicality knowledge: phrases that signal the risk is handled."""


class Document(DocumentMeta):
    """A validated knowledge document with its body text and token count."""

    text: str = Field(min_length=1)
    """The body (Markdown without front matter)."""
    tokens: int = Field(ge=1)
    """Token count of title and body by the project's token counter (a title alone counts)."""
    source: str = ""
    """Where the document was loaded from (file path or corpus reference)."""

    @property
    def school(self) -> str:
        """The primary topic, used to keep slices topically coherent."""
        return self.topics[0]

    def citation(self) -> str:
        """How reports cite the document: title, authors and year."""
        authors = (
            ", ".join(self.authors)
            if len(self.authors) <= 3
            else f"{self.authors[0]} et al. ({len(self.authors)} authors)"
        )
        year = (
            "n.d." if self.year is None else (f"{-self.year} BCE" if self.year < 0 else self.year)
        )
        return f"{self.title} ({authors or 'unknown author'}, {year})"


def _format_loc(loc: tuple[Any, ...]) -> str:
    return ".".join(str(part) for part in loc) or "front matter"


def _plain_error(err: Any) -> str:
    """A validation error in an author's words: an unknown field names the nearest known one
    (pydantic says "Extra inputs are not permitted")."""
    where = _format_loc(err["loc"])
    if err["type"] == "extra_forbidden":
        name = str(err["loc"][0]) if err["loc"] else where
        known = list(DocumentMeta.model_fields)
        near = difflib.get_close_matches(name, known, n=1)
        hint = f"did you mean {near[0]!r}? " if near else ""
        return f"{name}: not a document field ({hint}fields: {', '.join(known)})"
    if err["type"] == "missing":
        return f"{where}: required, missing"
    if err["type"] == "string_pattern_mismatch" and where == "id":
        return f"id: {err.get('input')!r} is not a valid id (lower-case letters, digits, '.', '_', '-')"
    return f"{where}: {err['msg'].lower()} (got {err.get('input')!r})"


def file_id(path: Path) -> str:
    """A document id from a file name: lower-case, runs of other characters become '-'."""
    return re.sub(r"[^a-z0-9._-]+", "-", path.stem.lower()).strip("-._")[:128] or "document"


def _build(
    where: str, meta: dict[str, Any], body: str, counter: TokenCounter, source: str
) -> Document:
    """Validate metadata and body into a Document; DocumentError lists every bad field."""
    if not body.strip():
        raise DocumentError([f"{where}: text: document body is empty"])
    try:
        parsed = DocumentMeta.model_validate(meta)
    except ValidationError as exc:
        problems = [f"{where}: {_plain_error(err)}" for err in exc.errors(include_url=False)]
        raise DocumentError(problems) from None
    return Document(
        **parsed.model_dump(),
        text=body.strip(),
        tokens=counter.count(parsed.title + "\n\n" + body.strip()),
        source=source,
    )


def _read(path: Path) -> str:
    """A document file's text; a byte-order mark (Windows editors write one) is dropped."""
    try:
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DocumentError(
            [
                f"{path}: unreadable, not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at "
                f"offset {exc.start}); save it as UTF-8"
            ]
        ) from exc
    except OSError as exc:
        raise DocumentError([f"{path}: unreadable ({exc.__class__.__name__}: {exc})"]) from exc


def first_heading(markdown: str) -> tuple[str, tuple[int, int]] | None:
    """The first heading of a Markdown text (ATX or setext, per CommonMark) and its line span."""
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").parse(markdown)
    for i, token in enumerate(tokens):
        if token.type == "heading_open" and token.map and i + 1 < len(tokens):
            text = tokens[i + 1].content.strip()
            if text:
                return text, (token.map[0], token.map[1])
    return None


def _yaml_problem(exc: yaml.YAMLError) -> str:
    """A YAML error on one line: what is wrong and where (line numbers count the file's)."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    where = f"line {mark.line + 2}, column {mark.column + 1}: " if mark is not None else ""
    return f"{where}{problem}"


def parse_document(path: Path, *, counter: TokenCounter | None = None) -> Document:
    """Parse one Markdown or text file; raises DocumentError naming the file and each bad field.

    Front matter is optional: without it (or without ``title``/``id`` in it) the title is the
    first heading and the id the file name.
    """
    counter = counter or default_counter()
    raw = _read(path)
    if not raw.strip():
        raise DocumentError([f"{path}: text: the file is empty"])
    meta: dict[str, Any] = {}
    body = raw
    match = _FRONT_MATTER.match(raw)
    if not match and path.suffix.lower() != ".txt" and re.match(r"\A---[ \t]*\r?\n", raw):
        raise DocumentError([f"{path}: front matter opened with '---' is never closed"])
    if match:
        try:
            loaded = yaml.safe_load(match.group(1))
        except yaml.YAMLError as exc:
            raise DocumentError(
                [f"{path}: malformed YAML front matter ({_yaml_problem(exc)})"]
            ) from exc
        if loaded is not None and not isinstance(loaded, dict):
            raise DocumentError([f"{path}: front matter must be a mapping of fields"])
        meta = dict(loaded or {})
        body = raw[match.end() :]
    if "title" not in meta:
        if path.suffix.lower() == ".txt":
            first = next((line.strip() for line in body.splitlines() if line.strip()), "")
            if first and len(first) <= 300:
                meta["title"] = first
        else:
            heading = first_heading(body)
            if heading is not None:
                meta["title"], (start, end) = heading
                # The heading is the title; what follows it is the body.
                lines = body.splitlines(keepends=True)
                rest = "".join(lines[end:])
                if rest.strip():
                    body = "".join(lines[:start]) + rest
    if "title" not in meta:
        # A note without a heading is common in a folder of notes: it is named by its file,
        # as its id is, rather than failing the whole knowledge base.
        meta["title"] = _file_title(path)
    meta.setdefault("id", file_id(path))
    return _build(str(path), meta, body, counter, str(path))


def _record_meta(record: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """Map a JSON record's keys (and common aliases) onto document fields and the body."""
    aliases = {"doc_id": "id", "heading": "title", "author": "authors", "source": "venue"}
    known = set(DocumentMeta.model_fields)
    meta: dict[str, Any] = {}
    for key, value in record.items():
        name = key if key in known else aliases.get(key)
        if name and value is not None and name not in meta:
            meta[name] = value
    if isinstance(meta.get("authors"), str):
        meta["authors"] = [meta["authors"]]
    if isinstance(meta.get("id"), str):
        meta["id"] = meta["id"].lower()
    book = record.get("book")
    if "topics" not in meta and isinstance(book, str) and book.strip():
        meta["topics"] = [book.strip()]  # chapters of one book stay together when slicing
    if isinstance(book, str) and isinstance(record.get("heading"), str) and "title" in meta:
        meta["title"] = f"{book.strip()}: {meta['title']}"[:300]
    if isinstance(meta.get("title"), str):
        meta["title"] = meta["title"][:300]
    if isinstance(meta.get("venue"), str):
        meta["venue"] = meta["venue"][:200]
    return meta, str(record.get("text") or "")


def _from_record(where: str, record: dict[str, Any], counter: TokenCounter) -> Document:
    meta, body = _record_meta(record)
    if "id" not in meta:
        raise DocumentError([f"{where}: id: required (or doc_id)"])
    meta.setdefault("title", str(meta["id"]))
    return _build(where, meta, body, counter, where)


def documents_from_records(
    records: Iterable[dict[str, Any]],
    *,
    counter: TokenCounter | None = None,
    source: str = "records",
) -> list[Document]:
    """Build documents from JSON records (one per line of a ``.jsonl`` file).

    Records take the document fields by name (``id``, ``title``, ``authors``, ``year``,
    ``venue``, ``peer_reviewed``, ``topics``, ...) plus ``text``; ``doc_id``, ``heading``,
    ``author`` and ``source`` are accepted for ``id``, ``title``, ``authors`` and ``venue``, and a
    ``book`` names the topic (and prefixes the chapter heading) when ``topics`` is absent. Other
    keys are ignored. Raises DocumentError listing every bad record by its position.
    """
    documents, problems = _collect(
        ((f"{source}:{n}", r) for n, r in enumerate(records, start=1)), counter or default_counter()
    )
    if problems:
        raise DocumentError(problems)
    return documents


def _collect(
    records: Iterable[tuple[str, dict[str, Any]]], counter: TokenCounter
) -> tuple[list[Document], list[str]]:
    documents, problems = [], []
    for where, record in records:
        try:
            documents.append(_from_record(where, record, counter))
        except DocumentError as exc:
            problems.extend(exc.problems)
    return documents, problems


def _read_jsonl(path: Path, counter: TokenCounter) -> tuple[list[Document], list[str]]:
    """The good documents of a JSON-lines file and the problems of the bad lines."""
    records, problems = [], []
    for line, text in enumerate(_read(path).splitlines(), start=1):
        if not text.strip():
            continue
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            problems.append(f"{path}:{line}: malformed JSON ({exc.msg})")
            continue
        if not isinstance(value, dict):
            problems.append(f"{path}:{line}: a record must be a JSON object")
            continue
        records.append((f"{path}:{line}", value))
    documents, bad = _collect(records, counter)
    return documents, sorted(problems + bad, key=_line_of)


def load_jsonl_documents(
    path: str | Path, *, counter: TokenCounter | None = None
) -> list[Document]:
    """Read a JSON-lines corpus file into documents (see `documents_from_records`)."""
    documents, problems = _read_jsonl(Path(path), counter or default_counter())
    if problems:
        raise DocumentError(problems)
    return documents


def _line_of(problem: str) -> int:
    where = problem.split(": ", 1)[0]
    tail = where.rsplit(":", 1)[-1]
    return int(tail) if tail.isdigit() else 0


def _paths(root: Path, recursive: bool) -> list[Path]:
    if root.is_file():
        return [root]
    found = root.rglob("*") if recursive else root.glob("*")
    return sorted(
        p
        for p in found
        if p.is_file() and p.suffix.lower() in SUFFIXES and p.name.lower() != "readme.md"
    )


@dataclass(frozen=True)
class CorpusCheck:
    """Every file of a knowledge base: the documents read, each bad file with its reasons, and
    each file skipped with why (a PDF is named, not silently ignored)."""

    documents: list[Document]
    problems: dict[str, list[str]] = field(default_factory=dict)
    """File (or file:line) -> what is wrong with it."""
    skipped: dict[str, str] = field(default_factory=dict)
    """File -> why it was not read."""

    @property
    def ok(self) -> bool:
        return not self.problems


def _skipped(root: Path, recursive: bool) -> dict[str, str]:
    if not root.is_dir():
        return {}
    found = root.rglob("*") if recursive else root.glob("*")
    return {
        str(p): SKIPPED[p.suffix.lower()]
        for p in sorted(found)
        if p.is_file() and p.suffix.lower() in SKIPPED
    }


def check_documents(
    location: str | Path, *, counter: TokenCounter | None = None, recursive: bool = True
) -> CorpusCheck:
    """Read every document under a folder (or one file), keeping going past bad files.

    Raises:
        InputError: the location does not exist or holds no documents.
    """
    counter = counter or default_counter()
    root = Path(location)
    allowed = "a folder (or file) of .md, .txt or .jsonl documents"
    if not root.exists():
        raise InputError("kb", f"{str(root)!r} does not exist", allowed=allowed)
    paths = _paths(root, recursive)
    if root.is_file() and root.suffix.lower() not in SUFFIXES:
        reason = SKIPPED.get(root.suffix.lower(), "not a document file")
        raise InputError("kb", f"{str(root)!r}: {reason}", allowed=allowed)
    skipped = _skipped(root, recursive)
    if not paths:
        others = sorted(p.name for p in root.rglob("*") if p.is_file())[:5] if root.is_dir() else []
        unread = f" (not read: {', '.join(others)})" if others else ""
        raise InputError("kb", f"{str(root)!r} holds no documents{unread}", allowed=allowed)
    documents: list[Document] = []
    problems: list[str] = []
    for path in paths:
        try:
            if path.suffix.lower() == ".jsonl":
                good, bad = _read_jsonl(path, counter)
                documents.extend(good)
                problems.extend(bad)
            else:
                documents.append(parse_document(path, counter=counter))
        except DocumentError as exc:
            problems.extend(exc.problems)
    seen: dict[str, str] = {}
    unique: list[Document] = []
    for doc in documents:
        if doc.id in seen:
            problems.append(f"{doc.source}: id: duplicate id {doc.id!r} (also in {seen[doc.id]})")
            continue
        seen[doc.id] = doc.source
        unique.append(doc)
    by_file: dict[str, list[str]] = {}
    for problem in problems:
        where, _, what = problem.partition(": ")
        by_file.setdefault(where, []).append(what)
    return CorpusCheck(sorted(unique, key=lambda d: d.id), by_file, skipped)


def load_documents(
    location: str | Path, *, counter: TokenCounter | None = None, recursive: bool = True
) -> list[Document]:
    """Load every document under a folder (or one file), sorted by id.

    Reads ``.md``/``.markdown`` (front matter optional), ``.txt`` and ``.jsonl`` files.

    Raises:
        InputError: the location does not exist or holds no documents.
        DocumentError: one or more documents are invalid; every problem is listed.
    """
    check = check_documents(location, counter=counter, recursive=recursive)
    if check.problems:
        problems = [f"{where}: {what}" for where, whats in check.problems.items() for what in whats]
        failed = set(check.problems) - {d.source for d in check.documents}
        raise DocumentError(problems, documents=len(check.documents) + len(failed))
    return check.documents


MIN_AGENTS = 3
"""Fewer theory agents than this is not a deliberation (one agent's plan is reported as if
agreed)."""


def density_advice(documents: list[Document], density: int) -> str | None:
    """A warning when the corpus gives fewer than `MIN_AGENTS` agents at ``density``, with a
    density that gives more (or what to add when no density can)."""
    import warnings

    from hivemind_lab.knowledge.slicing import plan_slices

    def agents(at: int) -> int:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return plan_slices(documents, at).n_agents

    have = agents(density)
    if have >= MIN_AGENTS:
        return None
    total = sum(d.tokens for d in documents)
    if len(documents) < MIN_AGENTS:
        return (
            f"only {_agents(have)} at density {density}: {len(documents)} documents of "
            f"{total} tokens cannot make {MIN_AGENTS} slices (documents are never cut); add "
            "documents"
        )
    suggestion = max(1, total // MIN_AGENTS)
    while suggestion > 1 and agents(suggestion) < MIN_AGENTS:
        suggestion //= 2
    return (
        f"only {_agents(have)} at density {density} ({total} tokens in all): a run would be "
        f"one agent's view, not a deliberation; --density {suggestion} gives "
        f"{agents(suggestion)} agents"
    )


def _agents(n: int) -> str:
    return f"{n} agent" if n == 1 else f"{n} agents"


def _file_title(path: Path) -> str:
    """A title from a file's name: "market-notes_2024.md" reads "Market notes 2024"."""
    words = " ".join(re.split(r"[-_\s]+", path.stem)).strip() or path.name
    return words[:1].upper() + words[1:]
