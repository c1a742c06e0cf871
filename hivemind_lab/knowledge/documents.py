"""Knowledge documents: Markdown files with YAML front matter, validated on load.

A document is the unit of slicing: it is never cut. The loader checks every file and reports all
problems at once, by file and field, so an academic fixing a knowledge base sees the whole list.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from hivemind_lab.errors import DocumentError, InputError
from hivemind_lab.tokens import TokenCounter, default_counter

ID_PATTERN = r"^[a-z0-9][a-z0-9._-]{0,127}$"
SLUG_PATTERN = r"^[a-z0-9][a-z0-9-]{0,63}$"
_FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)


class DocumentMeta(BaseModel):
    """Front matter every knowledge document carries."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=ID_PATTERN)
    """Stable identifier, used in citations; equals the file stem by convention."""
    title: str = Field(min_length=1, max_length=300)
    """Human title."""
    authors: tuple[str, ...] = Field(min_length=1)
    """Author names, in order."""
    year: int = Field(ge=1500, le=2100)
    """Publication year."""
    venue: str = Field(min_length=1, max_length=200)
    """Journal, conference or publisher."""
    peer_reviewed: bool
    """Whether the work passed peer review (working papers say false)."""
    topics: tuple[str, ...] = Field(min_length=1)
    """Lower-case slugs; the first one is the document's school, used for coherent slicing."""
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


def _format_loc(loc: tuple[Any, ...]) -> str:
    return ".".join(str(part) for part in loc) or "front matter"


def parse_document(path: Path, *, counter: TokenCounter | None = None) -> Document:
    """Parse one Markdown file; raises DocumentError naming the file and each bad field."""
    counter = counter or default_counter()
    try:
        raw = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise DocumentError([f"{path}: unreadable ({exc.__class__.__name__}: {exc})"]) from exc
    match = _FRONT_MATTER.match(raw)
    if not match:
        raise DocumentError([f"{path}: missing YAML front matter (file must start with '---')"])
    try:
        meta = yaml.safe_load(match.group(1))
    except yaml.YAMLError as exc:
        raise DocumentError([f"{path}: malformed YAML front matter ({exc})"]) from exc
    if not isinstance(meta, dict):
        raise DocumentError([f"{path}: front matter must be a mapping of fields"])
    body = raw[match.end() :].strip()
    if not body:
        raise DocumentError([f"{path}: text: document body is empty"])
    try:
        parsed = DocumentMeta.model_validate(meta)
    except ValidationError as exc:
        problems = [
            f"{path}: {_format_loc(err['loc'])}: {err['msg']}"
            for err in exc.errors(include_url=False)
        ]
        raise DocumentError(problems) from None
    return Document(
        **parsed.model_dump(),
        text=body,
        tokens=counter.count(parsed.title + "\n\n" + body),
        source=str(path),
    )


def load_documents(
    location: str | Path, *, counter: TokenCounter | None = None, recursive: bool = True
) -> list[Document]:
    """Load every ``*.md`` document under a folder (or one file), sorted by id.

    Raises:
        InputError: the location does not exist or holds no documents.
        DocumentError: one or more documents are invalid; every problem is listed.
    """
    root = Path(location)
    if not root.exists():
        raise InputError("kb", f"{str(root)!r} does not exist", allowed="a folder of .md files")
    if root.is_file():
        paths = [root]
    else:
        paths = sorted(root.rglob("*.md") if recursive else root.glob("*.md"))
        paths = [p for p in paths if p.name.lower() != "readme.md"]
    if not paths:
        raise InputError("kb", f"{str(root)!r} holds no .md documents", allowed="at least one")
    documents: list[Document] = []
    problems: list[str] = []
    for path in paths:
        try:
            documents.append(parse_document(path, counter=counter))
        except DocumentError as exc:
            problems.extend(exc.problems)
    seen: dict[str, str] = {}
    for doc in documents:
        if doc.id in seen:
            problems.append(f"{doc.source}: id: duplicate id {doc.id!r} (also in {seen[doc.id]})")
        seen[doc.id] = doc.source
    if problems:
        raise DocumentError(problems)
    return sorted(documents, key=lambda d: d.id)


def documents_from_records(
    records: Iterable[dict[str, Any]], *, counter: TokenCounter | None = None
) -> list[Document]:
    """Build documents from JSON records (e.g. the shared strategy corpus' ``documents.jsonl``).

    Records need ``doc_id`` (or ``id``) and ``text``; title, author(s), year and topics are taken
    when present and given neutral defaults otherwise.
    """
    counter = counter or default_counter()
    documents = []
    for record in records:
        doc_id = str(record.get("id") or record["doc_id"]).lower()
        title = str(record.get("title") or record.get("heading") or doc_id)
        author = record.get("authors") or [record.get("author") or "unknown"]
        if isinstance(author, str):
            author = [author]
        topic = re.sub(r"[^a-z0-9]+", "-", str(record.get("book") or "general").lower()).strip("-")
        text = str(record["text"]).strip() or title
        documents.append(
            Document(
                id=doc_id,
                title=title[:300],
                authors=tuple(author),
                year=int(record.get("year") or 1900),
                venue=str(record.get("source") or "corpus")[:200],
                peer_reviewed=bool(record.get("peer_reviewed", False)),
                topics=tuple(record.get("topics") or [topic[:64] or "general"]),
                text=text,
                tokens=counter.count(title + "\n\n" + text),
                source=str(record.get("source") or ""),
            )
        )
    return documents


def load_jsonl_documents(
    path: str | Path, *, counter: TokenCounter | None = None
) -> list[Document]:
    """Read a JSON-lines corpus file into documents (see `documents_from_records`)."""
    with Path(path).open(encoding="utf-8") as handle:
        records = [json.loads(line) for line in handle if line.strip()]
    return documents_from_records(records, counter=counter)
