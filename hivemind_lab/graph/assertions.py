"""Assert: store a claim and detect its conflicts in the same transaction; bulk ingest.

Concurrent asserts about the same subject are serialised by bumping the subject entity's version
first (a row lock on Neo4j; a process-wide lock on LadybugDB), so the second writer's conflict
check sees the first writer's assertion; conflicts are keyed by their sorted pair of assertion
ids (a UUIDv5), so a pair can never yield two conflicts.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from hivemind_lab.errors import InputError
from hivemind_lab.graph.analytics import ConflictEdge, GraphSnapshot
from hivemind_lab.graph.core import GraphCore, conflict_id, now_iso
from hivemind_lab.graph.models import Assertion, AssertResult, ConflictHit
from hivemind_lab.graph.predicates import predicate_key
from hivemind_lab.graph.store import Tx
from hivemind_lab.text import normalise


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
        model = self._model(model)
        subject = self._text("subject", subject, limit=self.config.max_text)
        predicate = self._text("predicate", predicate, limit=self.config.max_text)
        obj = self._text("obj", obj, limit=self.config.max_text)
        evidence = self._text("evidence", evidence, limit=self.config.max_evidence, required=False)
        confidence = self._confidence("confidence", confidence)
        domain = self._domain(domain)
        sk, pk, ok = normalise(subject), predicate_key(predicate), normalise(obj)
        if not pk:
            raise InputError("predicate", "must contain a word")
        now = now_iso(self.clock)
        new_id = str(uuid.uuid4())

        def work(tx: Tx) -> AssertResult:
            # Lock the subject first: concurrent writers about it queue here.
            tx.run(
                "MERGE (e:Entity {key: $k}) ON CREATE SET e.name = $name, e.version = 1 "
                "ON MATCH SET e.version = e.version + 1",
                {"k": sk, "name": subject},
            )
            existing = tx.run(
                "MATCH (e:Entity {key: $k})<-[:SUBJECT_REF]-(x:Assertion) "
                "WHERE x.domain = $d AND x.status = 'active' "
                "RETURN x.id AS id, x.predicate_key AS pk, x.object_key AS ok, "
                "x.source_model AS model, x.created_at AS created_at",
                {"k": sk, "d": domain},
            )
            existing.sort(key=lambda x: (x["created_at"], x["id"]))
            same = [x for x in existing if x["pk"] == pk and x["ok"] == ok]
            if same:
                mine = [x for x in same if x["model"] == model]
                if mine:
                    tx.run(
                        "MATCH (a:Assertion {id: $id}) SET a.confidence = $c, a.evidence = $ev, "
                        "a.updated_at = $now",
                        {"id": mine[0]["id"], "c": confidence, "ev": evidence, "now": now},
                    )
                    tx.run(
                        "MATCH (m:Model {name: $m}) SET m.last_active = $now",
                        {"m": model, "now": now},
                    )
                    return AssertResult(assertion_id=mine[0]["id"], outcome="updated")
                target = same[0]["id"]
                self._upsert_model(tx, model, now)
                known = tx.run(
                    "MATCH (a:Assertion {id: $id})-[c:CORROBORATED_BY]->(m:Model {name: $m}) "
                    "RETURN count(c) AS n",
                    {"id": target, "m": model},
                )
                if known and known[0]["n"]:
                    tx.run(
                        "MATCH (a:Assertion {id: $id})-[c:CORROBORATED_BY]->(m:Model {name: $m}) "
                        "SET c.confidence = $c, c.evidence = $ev, c.created_at = $now",
                        {"id": target, "m": model, "c": confidence, "ev": evidence, "now": now},
                    )
                else:
                    tx.run(
                        "MATCH (a:Assertion {id: $id}), (m:Model {name: $m}) "
                        "CREATE (a)-[:CORROBORATED_BY {confidence: $c, evidence: $ev, created_at: $now}]->(m) "
                        "SET a.support = a.support + 1",
                        {"id": target, "m": model, "c": confidence, "ev": evidence, "now": now},
                    )
                return AssertResult(assertion_id=target, outcome="corroborated")

            self._upsert_model(tx, model, now)
            self._create_assertion(
                tx,
                id=new_id,
                subject=subject,
                predicate=predicate,
                obj=obj,
                sk=sk,
                pk=pk,
                ok=ok,
                confidence=confidence,
                model=model,
                domain=domain,
                evidence=evidence,
                now=now,
                survived=None,
            )
            hits = []
            for x in existing:
                kind = self.predicates.conflict(x["pk"], x["ok"], pk, ok)
                if kind is None:
                    continue
                cid = conflict_id(x["id"], new_id)
                tx.run(
                    "MERGE (c:Conflict {id: $cid}) ON CREATE SET c.domain = $d, c.subject = $s, "
                    "c.kind = $kind, c.status = 'unresolved', c.a_id = $a, c.b_id = $b, "
                    "c.created_at = $now",
                    {
                        "cid": cid,
                        "d": domain,
                        "s": subject,
                        "kind": kind,
                        "a": x["id"],
                        "b": new_id,
                        "now": now,
                    },
                )
                tx.run(
                    "MATCH (c:Conflict {id: $cid}), (a:Assertion {id: $a}), (b:Assertion {id: $b}) "
                    "CREATE (c)-[:INVOLVES {side: 'a'}]->(a), (c)-[:INVOLVES {side: 'b'}]->(b), "
                    "(b)-[:CONFLICTS_WITH]->(a)",
                    {"cid": cid, "a": x["id"], "b": new_id},
                )
                hits.append(
                    ConflictHit(
                        conflict_id=cid,
                        with_assertion=x["id"],
                        type="negates" if kind == "negation" else "contradicts",
                        other_model=x["model"],
                    )
                )
            return AssertResult(assertion_id=new_id, conflicts_detected=tuple(hits))

        before = self.store.version
        result = self.store.write(work)

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

    def bulk_assert(self, rows: Sequence[dict[str, Any]], *, model: str) -> int:
        """Ingest many claims at once without conflict detection (known-consistent data).

        Rows carry subject, predicate, obj, confidence and optional domain and evidence. Uses the
        store's bulk path (COPY on LadybugDB, batched UNWIND on Neo4j) in one transaction.
        """
        model = self._model(model)
        now = now_iso(self.clock)
        assertions: list[dict[str, Any]] = []
        entities: dict[str, str] = {}
        for row in rows:
            subject = self._text("subject", row["subject"], limit=self.config.max_text)
            obj = self._text("obj", row["obj"], limit=self.config.max_text)
            predicate = self._text("predicate", row["predicate"], limit=self.config.max_text)
            sk, ok = normalise(subject), normalise(obj)
            entities.setdefault(sk, subject)
            entities.setdefault(ok, obj)
            assertions.append(
                {
                    "id": str(uuid.uuid4()),
                    "subject": subject,
                    "predicate": predicate,
                    "object": obj,
                    "subject_key": sk,
                    "predicate_key": predicate_key(predicate),
                    "object_key": ok,
                    "confidence": self._confidence("confidence", row["confidence"]),
                    "source_model": model,
                    "domain": self._domain(row.get("domain", "general")),
                    "evidence": self._text(
                        "evidence",
                        row.get("evidence", ""),
                        limit=self.config.max_evidence,
                        required=False,
                    ),
                    "created_at": now,
                    "updated_at": now,
                    "survived_consensus": None,
                    "status": "active",
                    "support": 1,
                }
            )
        if not assertions:
            return 0
        self.store.write(lambda tx: self._upsert_model(tx, model, now))
        self.store.write(
            lambda tx: tx.run(
                "MATCH (m:Model {name: $m}) SET m.assertion_count = m.assertion_count + $n",
                {"m": model, "n": len(assertions) - 1},
            )
        )
        self.store.load_assertions(
            model,
            [{"key": k, "name": n, "version": 0} for k, n in entities.items()],
            assertions,
        )
        self._touched()
        return len(assertions)
