"""Re-keying a graph written under older key rules (docs/design/graph-keys.md, *Old graphs*).

Conflict detection, contests and every read by name go through the stored keys (`Entity.key`,
`Assertion.subject_key`, …). A graph written before a change of the key rules keeps the old
keys, and then a vote on an old conflict finds no contest (its subject's entity is looked up
under the new key), a new claim does not meet the old claims about the same subject, and reads
by name miss them. `rekey` runs when a store is opened (`open_store`): it compares the stored
keys with what `text_key` and `predicate_key` give now, moves the assertions that differ to the
entities of their new keys, and records `KEYS_VERSION` so that later opens only read one node.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from hivemind_lab.graph.core import conflict_id
from hivemind_lab.graph.keys import KEYS_VERSION, predicate_key, text_key
from hivemind_lab.graph.predicates import PredicateRegistry
from hivemind_lab.graph.store import GraphStore, Tx
from hivemind_lab.models import Frozen

log = logging.getLogger(__name__)

MARKER = "keys"
"""The `Meta` node whose value is the key rules' version the stored keys follow."""


class RekeyReport(Frozen):
    """What re-keying changed in a store."""

    version_before: str | None
    """The key rules the store followed before (None: written before versions were kept)."""
    version: str
    assertions: int = 0
    """Assertions whose subject, predicate or object key changed."""
    entities_removed: int = 0
    """Entities left without any relationship under their old key, deleted."""
    conflicts_found: int = 0
    """Conflicts between active claims that the old keys kept apart, created unresolved."""
    duplicates: int = 0
    """Pairs of active claims that are now the same claim (one subject, predicate and object
    key) but are stored as two assertions; kept as they are (their votes and conflicts
    differ), and logged."""


@dataclass(frozen=True)
class Change:
    """One assertion's keys, stored and current."""

    id: str
    subject: str
    obj: str
    old: tuple[str, str, str]
    new: tuple[str, str, str]


def changes(rows: Iterable[Mapping[str, Any]]) -> list[Change]:
    """The assertions (rows of id, subject, predicate, object and the three stored keys)
    whose keys differ from what the current rules give."""
    out = []
    for r in rows:
        old = (r["sk"], r["pk"], r["ok"])
        new = (text_key(r["subject"]), predicate_key(r["predicate"]), text_key(r["object"]))
        if old != new:
            out.append(Change(r["id"], r["subject"], r["object"], old, new))
    return sorted(out, key=lambda c: c.id)


def stored_version(store: GraphStore) -> str | None:
    rows = store.read("MATCH (m:Meta {key: $k}) RETURN m.value AS v", {"k": MARKER})
    return rows[0]["v"] if rows and rows[0]["v"] else None


def rekey(
    store: GraphStore,
    predicates: PredicateRegistry | None = None,
    *,
    now: datetime | None = None,
) -> RekeyReport:
    """Bring the store's keys to the current rules (`KEYS_VERSION`), once: a store that
    already follows them costs one read. Conflicts between claims that only now share a
    subject are found with ``predicates`` (the default semantics unless given)."""
    before = stored_version(store)
    if before == KEYS_VERSION:
        return RekeyReport(version_before=before, version=KEYS_VERSION)
    registry = predicates or PredicateRegistry()
    moment = (now or datetime.now(UTC)).astimezone(UTC).isoformat(timespec="microseconds")
    report = store.write(lambda tx: _rekey_in(tx, registry, moment))
    if report.assertions or report.duplicates:
        log.warning(
            "re-keyed %d assertions to key rules %s (from %s): %d entities removed, "
            "%d conflicts found, %d duplicate claims kept",
            report.assertions,
            KEYS_VERSION,
            report.version_before or "unversioned",
            report.entities_removed,
            report.conflicts_found,
            report.duplicates,
        )
    return report


def _rekey_in(tx: Tx, predicates: PredicateRegistry, now: str) -> RekeyReport:
    # The marker first, with a write: a second process opening the store meanwhile waits here
    # and then finds the current version.
    marker = tx.run(
        "MERGE (m:Meta {key: $k}) ON CREATE SET m.value = '' ON MATCH SET m.value = m.value "
        "RETURN m.value AS v",
        {"k": MARKER},
    )
    before = (marker[0]["v"] or None) if marker else None
    if before == KEYS_VERSION:
        return RekeyReport(version_before=before, version=KEYS_VERSION)
    rows = tx.run(
        "MATCH (a:Assertion) RETURN a.id AS id, a.subject AS subject, a.predicate AS predicate, "
        "a.object AS object, a.subject_key AS sk, a.predicate_key AS pk, a.object_key AS ok"
    )
    found = changes(rows)
    for c in found:
        _move(tx, c)
    removed = _remove_orphans(tx, {k for c in found for k in (c.old[0], c.old[2])})
    conflicts, duplicates = _detect(tx, predicates, found, now)
    tx.run("MATCH (m:Meta {key: $k}) SET m.value = $v", {"k": MARKER, "v": KEYS_VERSION})
    return RekeyReport(
        version_before=before,
        version=KEYS_VERSION,
        assertions=len(found),
        entities_removed=removed,
        conflicts_found=conflicts,
        duplicates=duplicates,
    )


def _move(tx: Tx, c: Change) -> None:
    """Point one assertion at the entities of its new keys, its RELATES_TO edge too."""
    sk, pk, ok = c.new
    tx.run(
        "MERGE (e:Entity {key: $k}) ON CREATE SET e.name = $name, e.version = 1",
        {"k": sk, "name": c.subject},
    )
    tx.run(
        "MERGE (e:Entity {key: $k}) ON CREATE SET e.name = $name, e.version = 0",
        {"k": ok, "name": c.obj},
    )
    edge = tx.run(
        "MATCH (:Entity)-[r:RELATES_TO {assertion_id: $id}]->(:Entity) "
        "RETURN r.confidence AS c, r.source AS source",
        {"id": c.id},
    )
    tx.run("MATCH (:Entity)-[r:RELATES_TO {assertion_id: $id}]->(:Entity) DELETE r", {"id": c.id})
    tx.run("MATCH (a:Assertion {id: $id})-[r:SUBJECT_REF]->(:Entity) DELETE r", {"id": c.id})
    tx.run("MATCH (a:Assertion {id: $id})-[r:OBJECT_REF]->(:Entity) DELETE r", {"id": c.id})
    props = tx.run(
        "MATCH (a:Assertion {id: $id}) SET a.subject_key = $sk, a.predicate_key = $pk, "
        "a.object_key = $ok RETURN a.confidence AS c, a.source_model AS m",
        {"id": c.id, "sk": sk, "pk": pk, "ok": ok},
    )[0]
    confidence = edge[0]["c"] if edge else props["c"]
    source = edge[0]["source"] if edge else props["m"]
    tx.run(
        "MATCH (a:Assertion {id: $id}), (s:Entity {key: $sk}), (o:Entity {key: $ok}) "
        "CREATE (a)-[:SUBJECT_REF]->(s), (a)-[:OBJECT_REF]->(o), "
        "(s)-[:RELATES_TO {predicate: $pk, confidence: $c, source: $m, assertion_id: $id}]->(o)",
        {"id": c.id, "sk": sk, "ok": ok, "pk": pk, "c": confidence, "m": source},
    )


def _remove_orphans(tx: Tx, keys: Iterable[str]) -> int:
    removed = 0
    for key in sorted(keys):
        linked = tx.run(
            "MATCH (e:Entity {key: $k})-[r]-() RETURN count(r) AS n",
            {"k": key},
        )
        exists = tx.run("MATCH (e:Entity {key: $k}) RETURN e.key AS k", {"k": key})
        if exists and not (linked and linked[0]["n"]):
            tx.run("MATCH (e:Entity {key: $k}) DELETE e", {"k": key})
            removed += 1
    return removed


def _detect(
    tx: Tx, predicates: PredicateRegistry, found: Sequence[Change], now: str
) -> tuple[int, int]:
    """Conflicts the write path would have found between active claims about each re-keyed
    subject (at least one side re-keyed), and pairs that are now one claim."""
    moved = {c.id for c in found}
    created = duplicates = 0
    for sk in sorted({c.new[0] for c in found}):
        rows = tx.run(
            "MATCH (e:Entity {key: $k})<-[:SUBJECT_REF]-(x:Assertion) WHERE x.status = 'active' "
            "RETURN x.id AS id, x.subject AS subject, x.predicate_key AS pk, "
            "x.object_key AS ok, x.domain AS domain, x.created_at AS created_at",
            {"k": sk},
        )
        by_domain: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
        for r in sorted(rows, key=lambda r: (r["created_at"], r["id"])):
            by_domain[r["domain"]].append(r)
        for domain, claims in sorted(by_domain.items()):
            for i, x in enumerate(claims):
                for y in claims[i + 1 :]:
                    if x["id"] not in moved and y["id"] not in moved:
                        continue
                    if (x["pk"], x["ok"]) == (y["pk"], y["ok"]):
                        duplicates += 1
                        continue
                    kind = predicates.conflict(x["pk"], x["ok"], y["pk"], y["ok"])
                    if kind is None:
                        continue
                    cid = conflict_id(x["id"], y["id"])
                    if tx.run("MATCH (c:Conflict {id: $id}) RETURN c.id AS id", {"id": cid}):
                        continue
                    params = {
                        "cid": cid,
                        "d": domain,
                        "s": y["subject"],
                        "kind": kind,
                        "a": x["id"],
                        "b": y["id"],
                        "now": now,
                    }
                    tx.run(
                        "CREATE (c:Conflict {id: $cid, domain: $d, subject: $s, kind: $kind, "
                        "status: 'unresolved', a_id: $a, b_id: $b, created_at: $now})",
                        params,
                    )
                    tx.run(
                        "MATCH (c:Conflict {id: $cid}), (a:Assertion {id: $a}), "
                        "(b:Assertion {id: $b}) CREATE (c)-[:INVOLVES {side: 'a'}]->(a), "
                        "(c)-[:INVOLVES {side: 'b'}]->(b), (b)-[:CONFLICTS_WITH]->(a)",
                        params,
                    )
                    created += 1
    return created, duplicates
