"""Retract: a model takes back what it said.

A model may withdraw only what it holds: its own assertion, or its corroboration of another
model's. Nothing is deleted. The assertion keeps its provenance and gains a `Withdrawal` record
(who, when, why), so the history stays auditable; it just stops counting: query, divergence,
patterns and conflict detection read active assertions only.

- The asserter withdraws and nobody else holds the claim: the assertion becomes ``withdrawn``
  and its open conflicts close as ``withdrawn`` (there is nothing left to disagree with).
- The asserter withdraws a claim others corroborate: the claim is still held, so it passes to
  the earliest corroborator (with that model's confidence and evidence); conflicts stay open.
- A corroborator withdraws: only its support goes.
"""

from __future__ import annotations

import uuid
from typing import Literal

from hivemind_lab.errors import InputError
from hivemind_lab.graph.core import GraphCore, now_iso
from hivemind_lab.graph.models import RetractResult
from hivemind_lab.graph.store import Tx

MAX_ID = 100
Outcome = Literal["withdrawn", "handed_over", "support_withdrawn"]


class RetractOps(GraphCore):
    """hivemind_retract."""

    def retract(self, assertion_id: str, reason: str, *, model: str) -> RetractResult:
        """Withdraw ``model``'s hold on an assertion, in one transaction.

        Args:
            assertion_id: the assertion to withdraw.
            reason: why (kept in the withdrawal record; required).
            model: the caller's identity (never taken from tool arguments).

        Raises:
            InputError: unknown assertion, one the model does not hold, or no reason.
        """
        model = self._model(model)
        assertion_id = self._text("assertion_id", assertion_id, limit=MAX_ID)
        reason = self._text("reason", reason, limit=self.config.max_evidence)
        now = now_iso(self.clock)

        def work(tx: Tx) -> RetractResult:
            found = tx.run(
                "MATCH (a:Assertion {id: $id}) RETURN a.subject_key AS sk", {"id": assertion_id}
            )
            if not found:
                raise InputError("assertion_id", f"unknown assertion {assertion_id!r}")
            # Lock the subject as assert and resolve do, then read the state under the lock.
            tx.run(
                "MATCH (e:Entity {key: $k}) SET e.version = e.version + 1", {"k": found[0]["sk"]}
            )
            row = tx.run(
                "MATCH (a:Assertion {id: $id}) RETURN a.source_model AS owner, a.status AS status",
                {"id": assertion_id},
            )[0]
            holders = tx.run(
                "MATCH (a:Assertion {id: $id})-[c:CORROBORATED_BY]->(m:Model) "
                "RETURN m.name AS model, c.confidence AS confidence, c.evidence AS evidence, "
                "c.created_at AS created_at",
                {"id": assertion_id},
            )
            holders.sort(key=lambda h: (h["created_at"] or "", h["model"]))
            if row["status"] != "active":
                raise InputError("assertion_id", f"{assertion_id!r} is {row['status']}, not active")
            outcome: Outcome
            if row["owner"] == model:
                if holders:
                    outcome, closed = "handed_over", []
                    self._hand_over(tx, assertion_id, model, holders[0], now)
                    held_by: str | None = holders[0]["model"]
                else:
                    outcome, held_by = "withdrawn", None
                    closed = self._withdraw(tx, assertion_id, now)
            elif any(h["model"] == model for h in holders):
                outcome, closed, held_by = "support_withdrawn", [], row["owner"]
                tx.run(
                    "MATCH (a:Assertion {id: $id})-[c:CORROBORATED_BY]->(m:Model {name: $m}) "
                    "DELETE c",
                    {"id": assertion_id, "m": model},
                )
                tx.run(
                    "MATCH (a:Assertion {id: $id}) SET a.support = a.support - 1",
                    {"id": assertion_id},
                )
            else:
                raise InputError(
                    "assertion_id",
                    f"asserted by {row['owner']!r}; a model can only withdraw what it holds",
                )
            tx.run(
                "MATCH (a:Assertion {id: $aid}) CREATE (w:Withdrawal {id: $wid, "
                "assertion_id: $aid, model: $m, reason: $r, outcome: $o, created_at: $now})"
                "-[:WITHDRAWS]->(a)",
                {
                    "aid": assertion_id,
                    "wid": str(uuid.uuid4()),
                    "m": model,
                    "r": reason,
                    "o": outcome,
                    "now": now,
                },
            )
            return RetractResult(
                assertion_id=assertion_id,
                outcome=outcome,
                model=model,
                reason=reason,
                withdrawn_at=now,
                conflicts_closed=tuple(sorted(closed)),
                held_by=held_by,
            )

        result = self.store.write(work)
        self._touched()
        return result

    @staticmethod
    def _withdraw(tx: Tx, assertion_id: str, now: str) -> list[str]:
        """Mark the assertion withdrawn and close its open conflicts; returns their ids."""
        tx.run(
            "MATCH (a:Assertion {id: $id}) SET a.status = 'withdrawn', a.updated_at = $now",
            {"id": assertion_id, "now": now},
        )
        open_ids = [
            r["id"]
            for r in tx.run(
                "MATCH (c:Conflict)-[:INVOLVES]->(a:Assertion {id: $id}) "
                "WHERE c.status = 'unresolved' RETURN c.id AS id",
                {"id": assertion_id},
            )
        ]
        for cid in open_ids:
            tx.run(
                "MATCH (c:Conflict {id: $cid}) SET c.status = 'withdrawn', "
                "c.resolution = 'withdrawn', c.resolved_at = $now",
                {"cid": cid, "now": now},
            )
        return open_ids

    @staticmethod
    def _hand_over(tx: Tx, assertion_id: str, owner: str, heir: dict, now: str) -> None:
        """Pass a claim the owner withdraws to its earliest corroborator."""
        params = {
            "id": assertion_id,
            "owner": owner,
            "heir": heir["model"],
            "c": heir["confidence"],
            "ev": heir["evidence"] or "",
            "now": now,
        }
        tx.run(
            "MATCH (a:Assertion {id: $id})-[c:CORROBORATED_BY]->(m:Model {name: $heir}) DELETE c",
            params,
        )
        tx.run(
            "MATCH (a:Assertion {id: $id})-[r:ASSERTED_BY]->(m:Model {name: $owner}) DELETE r",
            params,
        )
        tx.run(
            "MATCH (a:Assertion {id: $id}), (m:Model {name: $heir}) "
            "CREATE (a)-[:ASSERTED_BY]->(m) SET a.source_model = $heir, a.confidence = $c, "
            "a.evidence = $ev, a.support = a.support - 1, a.updated_at = $now",
            params,
        )
        tx.run(
            "MATCH (:Entity)-[r:RELATES_TO {assertion_id: $id}]->(:Entity) "
            "SET r.source = $heir, r.confidence = $c",
            params,
        )
