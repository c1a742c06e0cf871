"""Assert: store a claim and detect its conflicts in the same transaction; bulk ingest.

Concurrent asserts about the same subject are serialised by bumping the subject entity's version
first (a row lock on Neo4j; a process-wide lock on LadybugDB), so the second writer's conflict
check sees the first writer's assertion; conflicts are keyed by their sorted pair of assertion
ids (a UUIDv5), so a pair can never yield two conflicts.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from hivemind_lab.errors import InputError
from hivemind_lab.graph.analytics import ConflictEdge, GraphSnapshot
from hivemind_lab.graph.core import GraphCore, conflict_id, each, new_ids, now_iso
from hivemind_lab.graph.keys import predicate_key, text_key
from hivemind_lab.graph.models import Assertion, AssertResult, ConflictHit
from hivemind_lab.graph.store import Tx

WORD = re.compile(r"\w")
T = TypeVar("T")


@dataclass(frozen=True)
class _Claim:
    """A validated claim, ready to write."""

    model: str
    subject: str
    predicate: str
    obj: str
    evidence: str
    confidence: float
    domain: str
    sk: str
    pk: str
    ok: str
    now: str
    new_id: str


class AssertOps(GraphCore):
    """hivemind_assert and bulk ingest."""

    # -- assert ------------------------------------------------------------------------------
    def assert_claim(
        self,
        subject: str,
        predicate: str,
        obj: str,
        confidence: float,
        domain: str = "general",
        evidence: str = "",
        *,
        model: str,
    ) -> AssertResult:
        """Store a claim as ``model``, detecting conflicts in the same transaction."""
        c = self._claim(subject, predicate, obj, confidence, domain, evidence, model)
        model, subject, predicate, obj, evidence = (
            c.model,
            c.subject,
            c.predicate,
            c.obj,
            c.evidence,
        )
        confidence, domain, sk, pk, ok, now = c.confidence, c.domain, c.sk, c.pk, c.ok, c.now
        before = self.store.version
        result = self.store.write(lambda tx: self._assert_in(tx, c))

        def change(snap: GraphSnapshot) -> bool:
            if result.outcome == "created":
                snap.put(
                    Assertion(
                        id=result.assertion_id,
                        subject=subject,
                        predicate=predicate,
                        object=obj,
                        confidence=confidence,
                        source_model=model,
                        domain=domain,
                        evidence=evidence,
                        created_at=now,
                        subject_key=sk,
                        object_key=ok,
                        predicate_key=pk,
                    )
                )
                for hit in result.conflicts_detected:
                    kind = "negation" if hit.type == "negates" else "different_object"
                    snap.conflicts.append(
                        ConflictEdge(
                            hit.conflict_id,
                            hit.with_assertion,
                            result.assertion_id,
                            "unresolved",
                            domain,
                            kind,
                        )
                    )
                return True
            old = snap.assertions.get(result.assertion_id)
            if old is None:
                return False
            if result.outcome == "updated":
                snap.put(old.model_copy(update={"confidence": confidence, "evidence": evidence}))
            elif model not in old.corroborated_by:
                snap.put(
                    old.model_copy(
                        update={
                            "support": old.support + 1,
                            "corroborated_by": tuple(sorted((*old.corroborated_by, model))),
                        }
                    )
                )
            return True

        self._after_write(before, change)
        return result

    def assert_many(self, claims: Sequence[Mapping[str, Any]]) -> list[AssertResult]:
        """Assert many claims in one transaction, in order, each exactly as `assert_claim`
        would (rows carry subject, predicate, obj, confidence, model and optional domain and
        evidence). Every row is validated first, so a bad row leaves nothing written."""
        checked = []
        for i, row in enumerate(claims):
            missing = [
                k for k in ("subject", "predicate", "obj", "confidence", "model") if k not in row
            ]
            if missing:
                raise InputError(f"claims[{i}]", f"missing {', '.join(missing)}")
            checked.append(
                self._claim(
                    row["subject"],
                    row["predicate"],
                    row["obj"],
                    row["confidence"],
                    row.get("domain", "general"),
                    row.get("evidence", ""),
                    row["model"],
                )
            )
        results = self.store.write(lambda tx: [self._assert_in(tx, c) for c in checked])
        self._touched()
        return results

    def _claim(
        self,
        subject: object,
        predicate: object,
        obj: object,
        confidence: object,
        domain: object,
        evidence: object,
        model: str,
    ) -> _Claim:
        model = self._model(model)
        subject, sk = self._name("subject", subject, text_key)
        predicate, pk = self._name("predicate", predicate, predicate_key)
        obj, ok = self._name("obj", obj, text_key)
        evidence = self._text("evidence", evidence, limit=self.config.max_evidence, required=False)
        confidence = self._confidence("confidence", confidence)
        domain = self._domain(domain)
        if not WORD.search(pk):
            raise InputError("predicate", f"must contain a word, got {predicate!r}")
        return _Claim(
            model,
            subject,
            predicate,
            obj,
            evidence,
            confidence,
            domain,
            sk,
            pk,
            ok,
            now_iso(self.clock),
            str(uuid.uuid4()),
        )

    def _assert_in(self, tx: Tx, c: _Claim) -> AssertResult:
        # Lock the c.subject first: concurrent writers about it queue here.
        tx.run(
            "MERGE (e:Entity {key: $k}) ON CREATE SET e.name = $name, e.version = 1 "
            "ON MATCH SET e.version = e.version + 1",
            {"k": c.sk, "name": c.subject},
        )
        existing = tx.run(
            "MATCH (e:Entity {key: $k})<-[:SUBJECT_REF]-(x:Assertion) "
            "WHERE x.domain = $d AND x.status = 'active' "
            "RETURN x.id AS id, x.predicate_key AS pk, x.object_key AS ok, "
            "x.source_model AS model, x.created_at AS created_at",
            {"k": c.sk, "d": c.domain},
        )
        existing.sort(key=lambda x: (x["created_at"], x["id"]))
        same = [x for x in existing if x["pk"] == c.pk and x["ok"] == c.ok]
        if same:
            mine = [x for x in same if x["model"] == c.model]
            if mine:
                tx.run(
                    "MATCH (a:Assertion {id: $id}) SET a.confidence = $c, a.evidence = $ev, "
                    "a.updated_at = $now",
                    {"id": mine[0]["id"], "c": c.confidence, "ev": c.evidence, "now": c.now},
                )
                tx.run(
                    "MATCH (m:Model {name: $m}) SET m.last_active = $now",
                    {"m": c.model, "now": c.now},
                )
                return AssertResult(assertion_id=mine[0]["id"], outcome="updated")
            target = same[0]["id"]
            self._upsert_model(tx, c.model, c.now)
            known = tx.run(
                "MATCH (a:Assertion {id: $id})-[c:CORROBORATED_BY]->(m:Model {name: $m}) "
                "RETURN count(c) AS n",
                {"id": target, "m": c.model},
            )
            if known and known[0]["n"]:
                tx.run(
                    "MATCH (a:Assertion {id: $id})-[c:CORROBORATED_BY]->(m:Model {name: $m}) "
                    "SET c.confidence = $c, c.evidence = $ev, c.created_at = $now",
                    {"id": target, "m": c.model, "c": c.confidence, "ev": c.evidence, "now": c.now},
                )
            else:
                tx.run(
                    "MATCH (a:Assertion {id: $id}), (m:Model {name: $m}) "
                    "CREATE (a)-[:CORROBORATED_BY {confidence: $c, evidence: $ev, created_at: $now}]->(m) "
                    "SET a.support = a.support + 1",
                    {"id": target, "m": c.model, "c": c.confidence, "ev": c.evidence, "now": c.now},
                )
            return AssertResult(assertion_id=target, outcome="corroborated")

        self._upsert_model(tx, c.model, c.now)
        self._create_assertion(
            tx,
            id=c.new_id,
            subject=c.subject,
            predicate=c.predicate,
            obj=c.obj,
            sk=c.sk,
            pk=c.pk,
            ok=c.ok,
            confidence=c.confidence,
            model=c.model,
            domain=c.domain,
            evidence=c.evidence,
            now=c.now,
            survived=None,
        )
        hits = []
        rows = []
        for x in existing:
            kind = self.predicates.conflict(x["pk"], x["ok"], c.pk, c.ok)
            if kind is None:
                continue
            cid = conflict_id(x["id"], c.new_id)
            rows.append({"cid": cid, "kind": kind, "a": x["id"]})
            hits.append(
                ConflictHit(
                    conflict_id=cid,
                    with_assertion=x["id"],
                    type="negates" if kind == "negation" else "contradicts",
                    other_model=x["model"],
                )
            )
        if rows:
            shared = {"d": c.domain, "s": c.subject, "b": c.new_id, "now": c.now}
            each(
                tx,
                "MERGE (c:Conflict {id: $cid}) ON CREATE SET c.domain = $d, c.subject = $s, "
                "c.kind = $kind, c.status = 'unresolved', c.a_id = $a, c.b_id = $b, "
                "c.created_at = $now",
                rows,
                **shared,
            )
            each(
                tx,
                "MATCH (c:Conflict {id: $cid}), (a:Assertion {id: $a}), (b:Assertion {id: $b}) "
                "CREATE (c)-[:INVOLVES {side: 'a'}]->(a), (c)-[:INVOLVES {side: 'b'}]->(b), "
                "(b)-[:CONFLICTS_WITH]->(a)",
                rows,
                **shared,
            )
        return AssertResult(assertion_id=c.new_id, conflicts_detected=tuple(hits))

    def bulk_assert(self, rows: Sequence[dict[str, Any]], *, model: str, loaders: int = 1) -> int:
        """Ingest many claims at once without conflict detection (known-consistent data).

        Rows carry subject, predicate, obj, confidence and optional domain and evidence. Every
        row is validated first; then the store's bulk path (COPY on LadybugDB, batched UNWIND
        on Neo4j) writes the model, entities and assertions in one transaction, so a failure
        leaves nothing written. ``loaders`` > 1 (Neo4j only; LadybugDB has one writer and
        refuses it) splits the rows into groups with disjoint subject/object entities and
        writes them in parallel transactions; a failed group undoes the committed ones.
        """
        if isinstance(loaders, bool) or not isinstance(loaders, int) or loaders < 1:
            raise InputError("loaders", f"must be an integer >= 1, got {loaders!r}")
        model = self._model(model)
        now = now_iso(self.clock)
        # Bulk rows repeat their names, domains and evidence: each distinct text is validated
        # and keyed once per call (the same checks and errors as one row at a time).
        seen: dict[str, dict[str, Any]] = {f: {} for f in ("subject", "obj", "predicate")}
        seen |= {"domain": {}, "evidence": {}}

        def once(field: str, value: object, check: Callable[[object], T]) -> T:
            if type(value) is not str:
                return check(value)  # not text: refused, never cached
            cache = seen[field]
            if value not in cache:
                cache[value] = check(value)
            return cast(T, cache[value])

        def evidence(value: object) -> str:
            return self._text("evidence", value, limit=self.config.max_evidence, required=False)

        def subject_of(value: object) -> tuple[str, str]:
            return self._name("subject", value, text_key)

        def object_of(value: object) -> tuple[str, str]:
            return self._name("obj", value, text_key)

        def predicate_of(value: object) -> tuple[str, str]:
            return self._name("predicate", value, predicate_key)

        ids = new_ids(len(rows))
        assertions: list[dict[str, Any]] = []
        entities: dict[str, str] = {}
        for row, new_id in zip(rows, ids, strict=True):
            subject, sk = once("subject", row["subject"], subject_of)
            obj, ok = once("obj", row["obj"], object_of)
            predicate, pk = once("predicate", row["predicate"], predicate_of)
            if not WORD.search(pk):
                raise InputError("predicate", f"must contain a word, got {predicate!r}")
            entities.setdefault(sk, subject)
            entities.setdefault(ok, obj)
            assertions.append(
                {
                    "id": new_id,
                    "subject": subject,
                    "predicate": predicate,
                    "object": obj,
                    "subject_key": sk,
                    "predicate_key": pk,
                    "object_key": ok,
                    "confidence": self._confidence("confidence", row["confidence"]),
                    "source_model": model,
                    "domain": once("domain", row.get("domain", "general"), self._domain),
                    "evidence": once("evidence", row.get("evidence", ""), evidence),
                    "created_at": now,
                    "updated_at": now,
                    "survived_consensus": None,
                    "status": "active",
                    "support": 1,
                }
            )
        if not assertions:
            return 0
        try:
            self.store.load_assertions(
                model,
                [{"key": k, "name": n, "version": 0} for k, n in entities.items()],
                assertions,
                now=now,
                loaders=loaders,
            )
        finally:
            self._touched()
        return len(assertions)
