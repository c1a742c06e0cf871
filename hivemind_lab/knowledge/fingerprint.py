"""Content hashes of knowledge: what a run knew, and what changed between two knowledge folders.

A document's hash covers what agents can read of it — its metadata and body — and not where it
was loaded from or how a token counter measured it, so moving a folder or changing the counter
does not read as a knowledge change. A knowledge base's hash is the hash of its documents' ids
and hashes, so it changes exactly when a document is added, removed or edited. Constraint
knowledge (``<practicality>/<constraint>/``) and the theory knowledge base are hashed alike.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Literal

from hivemind_lab.canonical import canonical_json
from hivemind_lab.knowledge.documents import Document, load_documents
from hivemind_lab.models import Frozen
from hivemind_lab.tokens import ApproxTokenCounter

HASH_PREFIX = "sha256:"


def document_hash(doc: Document) -> str:
    """SHA-256 of a document's metadata and body (not its path or token count)."""
    content = doc.model_dump(mode="json", exclude={"source", "tokens"})
    return HASH_PREFIX + hashlib.sha256(canonical_json(content).encode("utf-8")).hexdigest()


def knowledge_hash(documents: Iterable[Document]) -> str:
    """SHA-256 over the ids and hashes of a set of documents (order does not matter)."""
    pairs = sorted((d.id, document_hash(d)) for d in documents)
    return HASH_PREFIX + hashlib.sha256(canonical_json(pairs).encode("utf-8")).hexdigest()


def constraint_hashes(practicality_kb: str | Path, constraints: Sequence[str]) -> dict[str, str]:
    """The knowledge hash of each constraint's folder under ``practicality_kb``."""
    root = Path(practicality_kb)
    return {name: folder_hash(root / name) for name in constraints}


def folder_hash(folder: str | Path) -> str:
    """The knowledge hash of a folder, kept per process while its files are unchanged (a
    sweep writes one manifest per point)."""
    root = Path(folder).resolve()
    files = [root] if root.is_file() else [p for p in root.rglob("*") if p.is_file()]
    stamp = tuple(sorted((str(p), p.stat().st_mtime_ns, p.stat().st_size) for p in files))
    return _folder_hash(str(root), stamp)


@functools.lru_cache(maxsize=32)
def _folder_hash(folder: str, stamp: tuple[tuple[str, int, int], ...]) -> str:
    # Token counts are not hashed: the cheap counter spares loading the BPE tables.
    return knowledge_hash(load_documents(folder, counter=ApproxTokenCounter()))


KnowledgeChange = Literal["unchanged", "changed", "added", "unknown"]


def knowledge_changes(
    before: dict[str, str] | None, after: dict[str, str]
) -> dict[str, KnowledgeChange]:
    """Each named knowledge hash in ``after`` against ``before`` (None: not recorded)."""
    out: dict[str, KnowledgeChange] = {}
    for name, digest in after.items():
        if before is None:
            out[name] = "unknown"
        elif name not in before:
            out[name] = "added"
        else:
            out[name] = "unchanged" if before[name] == digest else "changed"
    return out


class DocumentEntry(Frozen):
    """One document of a knowledge folder, as the diff sees it."""

    id: str
    hash: str
    title: str
    location: str
    """The file it came from, relative to the folder (for constraint knowledge, the
    constraint's subfolder shows here)."""


ChangeKind = Literal["added", "removed", "changed"]


class DocumentChange(Frozen):
    """A document that differs between two knowledge folders."""

    change: ChangeKind
    id: str
    title: str
    location: str
    old_hash: str | None
    new_hash: str | None


class KnowledgeDiff(Frozen):
    """Which documents of a knowledge folder were added, removed or changed."""

    old: str
    new: str
    old_hash: str
    new_hash: str
    unchanged: int
    changes: tuple[DocumentChange, ...]

    @property
    def identical(self) -> bool:
        return not self.changes


def entries(folder: str | Path) -> dict[str, DocumentEntry]:
    """Every document of a folder (recursively) by id, with its hash."""
    root = Path(folder)
    out = {}
    for doc in load_documents(root):
        source = Path(doc.source.split(":", 1)[0])
        try:
            location = str(source.relative_to(root)) if root.is_dir() else source.name
        except ValueError:
            location = doc.source
        out[doc.id] = DocumentEntry(
            id=doc.id, hash=document_hash(doc), title=doc.title, location=location
        )
    return out


def diff_entries(
    old: dict[str, DocumentEntry], new: dict[str, DocumentEntry], *, old_name: str, new_name: str
) -> KnowledgeDiff:
    """Compare two folders' documents by id and content hash (pure)."""
    changes: list[DocumentChange] = []
    for doc_id in sorted(set(old) | set(new)):
        a, b = old.get(doc_id), new.get(doc_id)
        if a is not None and b is not None and a.hash == b.hash:
            continue
        kind: ChangeKind = "added" if a is None else "removed" if b is None else "changed"
        shown = b or a
        assert shown is not None
        changes.append(
            DocumentChange(
                change=kind,
                id=doc_id,
                title=shown.title,
                location=shown.location,
                old_hash=a.hash if a else None,
                new_hash=b.hash if b else None,
            )
        )

    def folder_hash(items: dict[str, DocumentEntry]) -> str:
        pairs = sorted((e.id, e.hash) for e in items.values())
        return HASH_PREFIX + hashlib.sha256(canonical_json(pairs).encode("utf-8")).hexdigest()

    return KnowledgeDiff(
        old=old_name,
        new=new_name,
        old_hash=folder_hash(old),
        new_hash=folder_hash(new),
        unchanged=len(set(old) & set(new)) - sum(c.change == "changed" for c in changes),
        changes=tuple(changes),
    )


def diff_folders(old: str | Path, new: str | Path) -> KnowledgeDiff:
    """Which documents were added, removed or changed from ``old`` to ``new``.

    Raises:
        InputError: a folder does not exist or holds no documents.
        DocumentError: a document of either folder is invalid (every problem listed).
    """
    return diff_entries(entries(old), entries(new), old_name=str(old), new_name=str(new))
