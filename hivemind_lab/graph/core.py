"""Shared state of the knowledge-graph operations: validation, the analytics snapshot and the
two write helpers every operation uses (model upsert, assertion creation).

Every write runs in one store transaction. The caller's model identity is always passed in by
the caller (the MCP server takes it from its configuration or the client's token), never from
tool arguments.
"""

from __future__ import annotations

import math
import os
import re
import threading
import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from hivemind_lab.errors import InputError
from hivemind_lab.graph.analytics import ConflictEdge, GraphSnapshot
from hivemind_lab.graph.config import GraphConfig
from hivemind_lab.graph.models import Assertion, Settlement
from hivemind_lab.graph.predicates import PredicateRegistry
from hivemind_lab.graph.store import GraphStore, Tx
from hivemind_lab.text import strip_control
from hivemind_lab.tokens import TokenCounter, default_counter

CONFLICT_NAMESPACE = uuid.UUID("6f1c2b1e-8d0a-4c55-9a53-6a1f2f0b7c11")
MODEL_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@-]{0,63}$")

_ASSERTION_FIELDS = (
    "a.id AS id, a.subject AS subject, a.predicate AS predicate, a.object AS object, "
    "a.confidence AS confidence, a.source_model AS source_model, a.domain AS domain, "
    "a.evidence AS evidence, a.created_at AS created_at, a.survived_consensus AS "
    "survived_consensus, a.status AS status, a.support AS support, a.subject_key AS "
    "subject_key, a.object_key AS object_key, a.predicate_key AS predicate_key"
)


def now_iso(clock: Callable[[], datetime]) -> str:
    return clock().astimezone(UTC).isoformat(timespec="microseconds")


def unwind(tx: Tx, query: str, params: dict[str, Any]) -> None:
    """Run an ``UNWIND $list`` statement, skipped when the list is empty (LadybugDB cannot
    type an empty list parameter, and there is nothing to do)."""
    if all(v for v in params.values() if isinstance(v, list)):
        tx.run(query, params)


def each(tx: Tx, query: str, rows: list[dict[str, Any]], **shared: Any) -> None:
    """Run ``query`` once per row (row fields and ``shared`` as parameters). A lookup by
    primary key from an ``UNWIND`` variable scans the table on LadybugDB; a parameter does not."""
    for row in rows:
        tx.run(query, {**shared, **row})


def new_ids(n: int) -> list[str]:
    """``n`` random (version 4) UUIDs as text, from one read of the OS's random source: a
    bulk load's ids, ~6x cheaper than ``str(uuid.uuid4())`` each."""
    raw = bytearray(os.urandom(16 * n))
    out = []
    for i in range(0, 16 * n, 16):
        raw[i + 6] = raw[i + 6] & 0x0F | 0x40  # version 4
        raw[i + 8] = raw[i + 8] & 0x3F | 0x80  # RFC 4122 variant
        h = raw[i : i + 16].hex()
        out.append(f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}")
    return out


def conflict_id(first: str, second: str) -> str:
    """The conflict id of a pair of assertions, whatever the order (UUIDv5 of the sorted pair)."""
    return str(uuid.uuid5(CONFLICT_NAMESPACE, "|".join(sorted((first, second)))))


def _clean(value: str) -> str:
    return strip_control(value).strip()


class GraphCore:
    """Store, configuration and snapshot cache shared by the operation mixins."""

    def __init__(
        self,
        store: GraphStore,
        config: GraphConfig | None = None,
        *,
        predicates: PredicateRegistry | None = None,
        counter: TokenCounter | None = None,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        self.store = store
        self.config = config or GraphConfig()
        self.predicates = predicates or PredicateRegistry()
        self.counter = counter or default_counter()
        self.clock = clock or (lambda: datetime.now(UTC))
        self._snapshot: GraphSnapshot | None = None
        self._snapshot_at = 0.0
        self._snapshot_version: int | None = None
        self._snapshot_lock = threading.RLock()
        self._listeners: list[Callable[[Sequence[Settlement]], None]] = []
        """Called with the contests a committed write decided or revised."""

    # -- validation --------------------------------------------------------------------------
    def _model(self, model: str) -> str:
        if not isinstance(model, str) or not MODEL_NAME.match(model):
            raise InputError(
                "model",
                f"invalid model identity {model!r}",
                allowed="1-64 letters, digits and . _ : @ -",
            )
        return model

    def _text(self, field: str, value: object, *, limit: int, required: bool = True) -> str:
        if not isinstance(value, str):
            raise InputError(field, f"must be text, got {type(value).__name__}")
        cleaned = _clean(value)
        if required and not cleaned:
            raise InputError(field, "must not be empty", allowed=f"1-{limit} characters")
        if len(cleaned) > limit:
            raise InputError(
                field, f"is {len(cleaned)} characters long", allowed=f"at most {limit}"
            )
        return cleaned

    def _name(self, field: str, value: object, key: Callable[[str], str]) -> tuple[str, str]:
        """A subject, predicate or object and its comparison key: text that shows something
        once invisible characters are removed (the stored text stays as given; the key drops
        them)."""
        text = self._text(field, value, limit=self.config.max_text)
        found = key(text)
        if not found:
            raise InputError(
                field,
                "has no visible characters (only zero-width, bidi, control or space characters)",
                allowed="text with at least one visible character",
            )
        return text, found

    def _domain(self, domain: object) -> str:
        if domain not in self.config.domains:
            raise InputError(
                "domain", f"unknown domain {domain!r}", allowed=", ".join(self.config.domains)
            )
        return str(domain)

    @staticmethod
    def _confidence(field: str, value: object) -> float:
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
        ):
            raise InputError(field, f"must be a number, got {value!r}", allowed="0.0-1.0")
        if not 0.0 <= float(value) <= 1.0:
            raise InputError(field, f"out of range: {value!r}", allowed="0.0-1.0")
        return float(value)

    def _touched(self) -> None:
        with self._snapshot_lock:
            self._snapshot = None

    def _after_write(self, before: int | None, change: Callable[[GraphSnapshot], bool]) -> None:
        """Apply a local write to the snapshot in place when nothing else changed the store
        meanwhile; otherwise drop the snapshot so the next read rebuilds it."""
        with self._snapshot_lock:
            snap, now_version = self._snapshot, self.store.version
            in_step = now_version is None or (
                before is not None
                and self._snapshot_version == before
                and now_version == before + 1
            )
            if snap is None or not in_step or not change(snap):
                self._snapshot = None
                return
            self._snapshot_version = now_version

    @staticmethod
    def _upsert_model(tx: Tx, model: str, now: str) -> None:
        tx.run(
            "MERGE (m:Model {name: $m}) ON CREATE SET m.assertion_count = 1, m.conflict_wins = 0, "
            "m.last_active = $now ON MATCH SET m.assertion_count = m.assertion_count + 1, "
            "m.last_active = $now",
            {"m": model, "now": now},
        )

    @staticmethod
    def _create_assertion(
        tx: Tx,
        *,
        id: str,
        subject: str,
        predicate: str,
        obj: str,
        sk: str,
        pk: str,
        ok: str,
        confidence: float,
        model: str,
        domain: str,
        evidence: str,
        now: str,
        survived: bool | None,
    ) -> None:
        tx.run(
            "MERGE (o:Entity {key: $k}) ON CREATE SET o.name = $name, o.version = 0",
            {"k": ok, "name": obj},
        )
        tx.run(
            "CREATE (a:Assertion {id: $id, subject: $s, predicate: $p, object: $o, subject_key: $sk, "
            "predicate_key: $pk, object_key: $ok, confidence: $c, source_model: $m, domain: $d, "
            "evidence: $ev, created_at: $now, updated_at: $now, survived_consensus: $surv, "
            "status: 'active', support: 1})",
            {
                "id": id,
                "s": subject,
                "p": predicate,
                "o": obj,
                "sk": sk,
                "pk": pk,
                "ok": ok,
                "c": confidence,
                "m": model,
                "d": domain,
                "ev": evidence,
                "now": now,
                "surv": survived,
            },
        )
        tx.run(
            "MATCH (a:Assertion {id: $id}), (m:Model {name: $m}), (s:Entity {key: $sk}), "
            "(o:Entity {key: $ok}) CREATE (a)-[:ASSERTED_BY]->(m), (a)-[:SUBJECT_REF]->(s), "
            "(a)-[:OBJECT_REF]->(o), (s)-[:RELATES_TO {predicate: $pk, confidence: $c, "
            "source: $m, assertion_id: $id}]->(o)",
            {"id": id, "m": model, "sk": sk, "ok": ok, "pk": pk, "c": confidence},
        )

    # -- snapshot ----------------------------------------------------------------------------
    def snapshot(self) -> GraphSnapshot:
        """The analytics view of the graph, rebuilt after local writes or when older than
        ``snapshot_max_age_s`` (other processes may write to a shared store)."""
        with self._snapshot_lock:
            snap, version = self._snapshot, self.store.version
            if version is None:  # a shared server: others write too, so refresh by age
                fresh = time.monotonic() - self._snapshot_at <= self.config.snapshot_max_age_s
            else:  # embedded: every writer is in this process, so the write counter tells
                fresh = self._snapshot_version == version
            if snap is not None and fresh:
                due = time.monotonic() - snap.ranked_at > self.config.snapshot_max_age_s
                if snap.changes and (due or snap.changes * 100 >= len(snap.assertions)):
                    snap.rerank()  # PageRank follows the graph: at 1 % change or when stale
                return snap
            rows = self.store.read(f"MATCH (a:Assertion) RETURN {_ASSERTION_FIELDS}")
            corroborations: dict[str, list[str]] = defaultdict(list)
            for r in self.store.read(
                "MATCH (a:Assertion)-[:CORROBORATED_BY]->(m:Model) "
                "RETURN a.id AS id, m.name AS model"
            ):
                corroborations[r["id"]].append(r["model"])
            assertions = [
                Assertion(
                    **{
                        **r,
                        "evidence": r["evidence"] or "",
                        "support": r["support"] or 1,
                        "corroborated_by": tuple(sorted(corroborations.get(r["id"], ()))),
                    }
                )
                for r in rows
            ]
            conflicts = [
                ConflictEdge(**r)
                for r in self.store.read(
                    "MATCH (c:Conflict) RETURN c.id AS id, c.a_id AS a_id, c.b_id AS b_id, "
                    "c.status AS status, c.domain AS domain, c.kind AS kind"
                )
            ]
            self._snapshot = GraphSnapshot.build(assertions, conflicts)
            self._snapshot_at = time.monotonic()
            self._snapshot_version = version
            return self._snapshot
