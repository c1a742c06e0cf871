"""Append-only, hash-chained audit log (see docs/design/audit-log.md).

Each line is one JSON record: ``seq``, ``ts`` (UTC), ``actor``, ``kind``, ``payload``, ``prev``
(the previous record's hash, or 64 zeros) and ``hash`` (SHA-256 of the canonical JSON of all the
other fields). A record is flushed and fsynced before `AuditLog.append` returns. Editing, deleting,
inserting or reordering any line breaks the chain at that line. Cutting records off the end would
leave a valid shorter chain, so a small anchor file beside the log (``<log>.head``) holds the last
sequence number and hash; it is replaced atomically after every ``anchor_every`` appends (1 by
default), on `AuditLog.anchor` and on close. The anchor may lag the log by records written just
before a crash (the chain still covers them), but it may never be ahead.
"""

from __future__ import annotations

import fcntl
import hashlib
import io
import json
import os
import threading
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from hivemind_lab.canonical import canonical_json
from hivemind_lab.errors import AuditIntegrityError, InputError
from hivemind_lab.models import Event, Frozen
from hivemind_lab.runs import events
from hivemind_lab.runs.atomic import write_bytes_atomic, write_text_atomic

GENESIS = "0" * 64


def _digest(fields: dict[str, Any]) -> str:
    return hashlib.sha256(canonical_json(fields).encode("utf-8")).hexdigest()


class AuditRecord(Frozen):
    """One immutable entry of the audit trail."""

    seq: int
    """0-based position in the log."""
    ts: str
    """UTC timestamp (ISO 8601) of the append."""
    actor: str
    """Who spoke: an agent id, ``monitor``, ``engine``..."""
    kind: str
    """What happened, dotted (``llm.propose``, ``theory.critique``, ``practicality.veto``...)."""
    payload: dict[str, Any]
    """The utterance or decision, verbatim as written (the hash covers it); typed: `event`."""
    prev: str
    """Hash of the previous record (64 zeros for the first)."""
    hash: str
    """SHA-256 of this record's other fields."""

    @property
    def event(self) -> events.AnyEvent:
        """The payload read as its typed event (`events.Unknown` for a kind not known here)."""
        return events.parse(self.kind, self.payload)

    def expected_hash(self) -> str:
        """Recompute the hash from the record's content."""
        return _digest(self.model_dump(exclude={"hash"}))


def _anchor_path(path: Path) -> Path:
    return path.with_name(path.name + ".head")


class AuditLog:
    """Appends records to a hash-chained log; safe to share between threads of one process.

    Opening an existing log continues its chain (used by resumed runs). A torn last line, left by
    a crash during a write that was never acknowledged, is cut off and the repair is itself logged.
    One writer at a time: the log is locked while open, and a second writer (another process
    resuming the same run) is refused, so two chains never interleave in one file. A new log is
    anchored at once (an empty chain), so a crash before the first checkpoint leaves a log that
    verifies.

    Raises:
        InputError: another open `AuditLog` (in any process) is writing this log.
    """

    def __init__(self, path: str | Path, *, anchor_every: int = 1) -> None:
        self.path = Path(path)
        self.anchor_every = anchor_every
        self._lock = threading.Lock()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._seq = 0
        self._prev = GENESIS
        self._handle = self.path.open("a", encoding="utf-8")
        try:
            fcntl.flock(self._handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._handle.close()
            raise InputError(
                "run_dir",
                f"{str(self.path.parent)!r} is in use: another process is writing its "
                f"{self.path.name}",
                allowed="one writer per run directory (wait for it to finish, then --resume)",
            ) from None
        repaired = self._recover()
        if self._seq == 0 and not _anchor_path(self.path).exists():
            self._write_anchor()
        if repaired:
            self.append("audit", events.Repair(dropped_bytes=repaired))

    def _recover(self) -> int:
        if not self.path.exists():
            return 0
        data = self.path.read_bytes()
        keep = data.rfind(b"\n") + 1 if not data.endswith(b"\n") else len(data)
        lines = data[:keep].splitlines()
        if lines:
            try:
                last = json.loads(lines[-1])
                self._seq, self._prev = int(last["seq"]) + 1, str(last["hash"])
            except (ValueError, KeyError) as exc:
                raise AuditIntegrityError(len(lines) - 1, f"unreadable record ({exc})") from exc
        if keep < len(data):
            with self.path.open("r+b") as handle:
                handle.truncate(keep)
                handle.flush()
                os.fsync(handle.fileno())
        return len(data) - keep

    @property
    def head(self) -> str:
        """Hash of the last record (64 zeros for an empty log)."""
        return self._prev

    @property
    def count(self) -> int:
        """Number of records in the log."""
        return self._seq

    def append(self, actor: str, event: Event) -> AuditRecord:
        """Write one event durably (flushed and fsynced) and return its record."""
        return self.extend([(actor, event)])[0]

    def extend(self, entries: Sequence[tuple[str, Event]]) -> list[AuditRecord]:
        """Write several events in order with one fsync: all are durable when this returns.

        Raises:
            TypeError: an entry is not a typed event (an `events.Unknown` is only ever read).
        """
        for _, event in entries:
            if not isinstance(event, Event) or isinstance(event, events.Unknown):
                raise TypeError(f"the audit log writes typed events, got {event!r}"[:200])
        with self._lock:
            records = [self._write(actor, event.kind, event.payload()) for actor, event in entries]
            self._handle.flush()
            os.fsync(self._handle.fileno())
            if self.anchor_every and records and self._seq % self.anchor_every < len(records):
                self._write_anchor()
            return records

    def _write(self, actor: str, kind: str, payload: dict[str, Any]) -> AuditRecord:
        """Append one line (the caller holds the lock, then flushes and fsyncs)."""
        fields: dict[str, Any] = {
            "seq": self._seq,
            "ts": datetime.now(UTC).isoformat(timespec="microseconds"),
            "actor": actor,
            "kind": kind,
            "payload": payload,
            "prev": self._prev,
        }
        # Serialise once: the hash covers exactly the canonical text a reader re-derives
        # (payloads are JSON data, so parsing and re-serialising gives the same text).
        text = canonical_json(fields)
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
        self._handle.write(f'{text[:-1]},"hash":"{digest}"}}\n')
        record = AuditRecord.model_construct(**fields, hash=digest)
        self._seq += 1
        self._prev = record.hash
        return record

    def anchor(self) -> None:
        """Record the current length and head in the anchor file now."""
        with self._lock:
            self._write_anchor()

    def _write_anchor(self) -> None:
        write_text_atomic(
            _anchor_path(self.path), canonical_json({"seq": self._seq - 1, "hash": self._prev})
        )

    def close(self) -> None:
        """Close the file handle (records are already durable)."""
        with self._lock:
            if not self._handle.closed:
                self._handle.close()
                self._write_anchor()

    def __enter__(self) -> AuditLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class VerifyReport(Frozen):
    """Outcome of `verify_log`."""

    path: str
    ok: bool
    records: int
    """Records read before the first problem (all of them when ok)."""
    head: str
    """Hash of the last good record."""
    anchored: bool
    """Whether an anchor file confirmed the log's length."""
    first_bad: int | None = None
    """0-based index of the first bad record."""
    reason: str | None = None


def read_records(path: str | Path, *, skip_damaged: bool = False) -> Iterator[AuditRecord]:
    """Read records in order; raises AuditIntegrityError on an unreadable line, unless
    ``skip_damaged`` (readers that show what is left; `verify_log` names the damage)."""
    with Path(path).open(encoding="utf-8") as handle:
        for index, line in enumerate(handle):
            try:
                yield AuditRecord.model_validate_json(line)
            except ValueError as exc:
                if skip_damaged:
                    continue
                raise AuditIntegrityError(index, "malformed or truncated record") from exc


def verify_log(path: str | Path, *, require_anchor: bool = True) -> VerifyReport:
    """Check every record's hash, sequence and chain link, and the anchor.

    Returns a report naming the first bad record; never raises for a damaged log.
    """
    path = Path(path)
    if not path.exists():
        raise InputError("path", f"{str(path)!r} does not exist", allowed="an audit.jsonl file")
    prev, count = GENESIS, 0

    def bad(index: int, reason: str, anchored: bool = False) -> VerifyReport:
        return VerifyReport(
            path=str(path),
            ok=False,
            records=count,
            head=prev,
            anchored=anchored,
            first_bad=index,
            reason=reason,
        )

    try:
        for index, record in enumerate(read_records(path)):
            if record.seq != index:
                return bad(
                    index,
                    f"sequence {record.seq} where {index} was expected "
                    "(a record was deleted, inserted or moved)",
                )
            if record.prev != prev:
                return bad(
                    index,
                    "previous-hash link broken (a record before it was changed, "
                    "deleted, inserted or moved)",
                )
            if record.expected_hash() != record.hash:
                return bad(index, "content does not match its hash (record was modified)")
            prev, count = record.hash, count + 1
    except AuditIntegrityError as exc:
        return bad(exc.index, exc.reason)

    anchor = _anchor_path(path)
    if not anchor.exists():
        if require_anchor:
            return bad(
                count, f"anchor file {anchor.name!r} is missing: truncation cannot be ruled out"
            )
        return VerifyReport(path=str(path), ok=True, records=count, head=prev, anchored=False)
    try:
        head = json.loads(anchor.read_text("utf-8"))
        head_seq, head_hash = int(head["seq"]), str(head["hash"])
    except (ValueError, KeyError, OSError) as exc:
        return bad(count, f"anchor file unreadable ({exc.__class__.__name__})")
    if head_seq >= count:
        return bad(
            count,
            f"log ends at record {count - 1} but its anchor names record {head_seq} "
            "(records were cut off the end)",
            anchored=True,
        )
    if head_seq >= 0:
        anchored_record = next(r for i, r in enumerate(read_records(path)) if i == head_seq)
        if anchored_record.hash != head_hash:
            return bad(head_seq, "record does not match the anchor's hash", anchored=True)
    return VerifyReport(path=str(path), ok=True, records=count, head=prev, anchored=True)


ExportFormat = Literal["parquet", "jsonl"]


def _length_of(path: str | Path, records: int) -> int:
    """Byte length of the first ``records`` lines of a log."""
    size = 0
    with Path(path).open("rb") as handle:
        for _ in range(records):
            size += len(handle.readline())
    return size


def export_log(path: str | Path, out: str | Path, *, format: ExportFormat = "parquet") -> Path:
    """Export a verified log; refuses to export a log that fails verification."""
    report = verify_log(path, require_anchor=False)
    if not report.ok:
        raise AuditIntegrityError(report.first_bad or 0, report.reason or "verification failed")
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    records = list(read_records(path))
    buffer = io.BytesIO()
    if format == "jsonl":
        # The lines as written: a byte-identical copy that verifies like the original.
        buffer.write(Path(path).read_bytes()[: _length_of(path, report.records)])
    elif format == "parquet":
        import polars as pl

        frame = pl.DataFrame(
            {
                "seq": [r.seq for r in records],
                "ts": [r.ts for r in records],
                "actor": [r.actor for r in records],
                "kind": [r.kind for r in records],
                "payload": [canonical_json(r.payload) for r in records],
                "prev": [r.prev for r in records],
                "hash": [r.hash for r in records],
            },
            schema={
                "seq": pl.Int64,
                "ts": pl.String,
                "actor": pl.String,
                "kind": pl.String,
                "payload": pl.String,
                "prev": pl.String,
                "hash": pl.String,
            },
        )
        frame.write_parquet(buffer)
    else:
        raise InputError("format", f"unknown format {format!r}", allowed="parquet or jsonl")
    return write_bytes_atomic(out, buffer.getvalue())
