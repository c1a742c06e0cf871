"""Conflicts and consensus: list conflicts, record votes, decide and apply resolutions."""

from __future__ import annotations

import uuid
from datetime import UTC, timedelta

from hivemind_lab.errors import InputError
from hivemind_lab.graph.core import GraphCore, now_iso
from hivemind_lab.graph.models import (
    CONSENSUS_MODEL,
    RESOLUTIONS,
    AssertionSide,
    ConflictView,
    VoteResult,
)
from hivemind_lab.graph.store import Tx
from hivemind_lab.text import normalise


class ConsensusOps(GraphCore):
    """hivemind_conflicts and hivemind_resolve."""

    # -- conflicts ---------------------------------------------------------------------------
    def auto_fork(self) -> int:
        """Fork conflicts left unresolved longer than ``auto_fork_days``; returns how many."""
        cutoff = (self.clock() - timedelta(days=self.config.auto_fork_days)).astimezone(UTC)
        cutoff_iso = cutoff.isoformat(timespec="microseconds")
        stale = self.store.read(
            "MATCH (c:Conflict) WHERE c.status = 'unresolved' AND c.created_at < $cutoff "
            "RETURN c.id AS id",
            {"cutoff": cutoff_iso},
        )
        if not stale:
            return 0
        now = now_iso(self.clock)

        def work(tx: Tx) -> int:
            forked = 0
            for row in stale:
                current = tx.run("MATCH (c:Conflict {id: $id}) RETURN c.status AS status", row)
                if not current or current[0]["status"] != "unresolved":
                    continue
                self._apply(
                    tx,
                    row["id"],
                    "fork",
                    now=now,
                    score=0.0,
                    winners=[],
                    claim=None,
                    domain="",
                    subject="",
                    a_id="",
                    b_id="",
                )
                forked += 1
            return forked

        count = self.store.write(work)
        self._touched()
        return count

    def conflicts(self, domain: str = "general", status: str = "unresolved") -> list[ConflictView]:
        """Conflicts in a domain with both sides and their vote counts, newest first."""
        domain = self._domain(domain)
        if status not in ("unresolved", "resolved", "forked", "all"):
            raise InputError(
                "status", f"unknown status {status!r}", allowed="unresolved, resolved, forked, all"
            )
        self.auto_fork()
        rows = self.store.read(
            "MATCH (c:Conflict)-[ra:INVOLVES]->(a:Assertion), (c)-[rb:INVOLVES]->(b:Assertion) "
            "WHERE c.domain = $d AND ($st = 'all' OR c.status = $st) AND ra.side = 'a' AND rb.side = 'b' "
            "OPTIONAL MATCH (v:Vote)-[:VOTED_ON]->(c) "
            "RETURN c.id AS id, c.kind AS kind, c.status AS status, c.resolution AS resolution, "
            "c.created_at AS created_at, c.resolved_at AS resolved_at, "
            "a.id AS a_id, a.subject AS a_s, a.predicate AS a_p, a.object AS a_o, "
            "a.source_model AS a_m, a.confidence AS a_c, a.status AS a_st, "
            "b.id AS b_id, b.subject AS b_s, b.predicate AS b_p, b.object AS b_o, "
            "b.source_model AS b_m, b.confidence AS b_c, b.status AS b_st, count(v) AS votes",
            {"d": domain, "st": status},
        )
        rows.sort(key=lambda r: (r["created_at"], r["id"]), reverse=True)
        return [
            ConflictView(
                conflict_id=r["id"],
                assertion_a=AssertionSide(
                    id=r["a_id"],
                    subject=r["a_s"],
                    predicate=r["a_p"],
                    object=r["a_o"],
                    source_model=r["a_m"],
                    confidence=r["a_c"],
                    status=r["a_st"],
                ),
                assertion_b=AssertionSide(
                    id=r["b_id"],
                    subject=r["b_s"],
                    predicate=r["b_p"],
                    object=r["b_o"],
                    source_model=r["b_m"],
                    confidence=r["b_c"],
                    status=r["b_st"],
                ),
                domain=domain,
                type=r["kind"],
                status=r["status"],
                resolution=r["resolution"],
                created_at=r["created_at"],
                resolved_at=r["resolved_at"],
                vote_count=int(r["votes"]),
            )
            for r in rows
        ]

    # -- resolve -----------------------------------------------------------------------------
    def vote_weight(self, model: str, domain: str, tx: Tx | None = None) -> float:
        """Average confidence of the model's surviving (not disproven) assertions in the domain,
        floored at 0.1 so a newcomer still has a voice."""
        query = (
            "MATCH (a:Assertion)-[:ASSERTED_BY]->(m:Model {name: $m}) "
            "WHERE a.domain = $d AND a.status = 'active' RETURN avg(a.confidence) AS w"
        )
        rows = (
            tx.run(query, {"m": model, "d": domain})
            if tx
            else self.store.read(query, {"m": model, "d": domain})
        )
        weight = rows[0]["w"] if rows and rows[0]["w"] is not None else 0.0
        return round(max(float(weight), 0.1), 6)

    def resolve(
        self,
        conflict_id: str,
        resolution: str,
        evidence: str = "",
        synthesized_claim: str = "",
        *,
        model: str,
    ) -> VoteResult:
        """Record ``model``'s vote (a re-vote replaces it) and decide when consensus is reached."""
        model = self._model(model)
        conflict_id = self._text("conflict_id", conflict_id, limit=100)
        if resolution not in RESOLUTIONS:
            raise InputError(
                "resolution", f"unknown resolution {resolution!r}", allowed=", ".join(RESOLUTIONS)
            )
        evidence = self._text("evidence", evidence, limit=self.config.max_evidence, required=False)
        claim = self._text(
            "synthesized_claim", synthesized_claim, limit=self.config.max_text, required=False
        )
        if resolution == "synthesize" and not claim:
            raise InputError("synthesized_claim", "required when resolution is 'synthesize'")
        self.auto_fork()
        now = now_iso(self.clock)
        phi, needed = self.config.consensus_phi, self.config.conflict_threshold

        def work(tx: Tx) -> VoteResult:
            found = tx.run(
                "MATCH (c:Conflict {id: $id}) RETURN c.status AS status, c.domain AS domain, "
                "c.subject AS subject, c.a_id AS a_id, c.b_id AS b_id",
                {"id": conflict_id},
            )
            if not found:
                raise InputError("conflict_id", f"unknown conflict {conflict_id!r}")
            c = found[0]
            if c["status"] != "unresolved":
                raise InputError(
                    "conflict_id",
                    f"conflict {conflict_id!r} is already {c['status']}",
                    allowed="an unresolved conflict",
                )
            weight = self.vote_weight(model, c["domain"], tx)
            vote_id = f"{conflict_id}|{model}"
            tx.run(
                "MERGE (v:Vote {id: $vid}) ON CREATE SET v.conflict_id = $cid, v.model = $m, "
                "v.resolution = $r, v.evidence = $ev, v.synthesized_claim = $claim, v.weight = $w, "
                "v.created_at = $now ON MATCH SET v.resolution = $r, v.evidence = $ev, "
                "v.synthesized_claim = $claim, v.weight = $w, v.created_at = $now",
                {
                    "vid": vote_id,
                    "cid": conflict_id,
                    "m": model,
                    "r": resolution,
                    "ev": evidence,
                    "claim": claim,
                    "w": weight,
                    "now": now,
                },
            )
            tx.run(
                "MATCH (v:Vote {id: $vid}), (c:Conflict {id: $cid}) MERGE (v)-[:VOTED_ON]->(c)",
                {"vid": vote_id, "cid": conflict_id},
            )
            votes = tx.run(
                "MATCH (v:Vote)-[:VOTED_ON]->(c:Conflict {id: $cid}) RETURN v.model AS model, "
                "v.resolution AS resolution, v.weight AS weight, v.synthesized_claim AS claim, "
                "v.created_at AS created_at",
                {"cid": conflict_id},
            )
            totals = dict.fromkeys(RESOLUTIONS, 0.0)
            for v in votes:
                totals[v["resolution"]] += float(v["weight"])
            grand = sum(totals.values()) or 1.0
            shares: dict[str, float] = {r: round(t / grand, 6) for r, t in totals.items()}
            top = max(RESOLUTIONS, key=lambda r: (shares[r], -RESOLUTIONS.index(r)))
            reached = len(votes) >= needed and shares[top] >= phi
            synthesized = None
            status = "unresolved"
            if reached:
                winners = sorted(v["model"] for v in votes if v["resolution"] == top)
                chosen = None
                if top == "synthesize":
                    best = max(
                        (v for v in votes if v["resolution"] == "synthesize" and v["claim"]),
                        key=lambda v: (v["weight"], v["created_at"]),
                    )
                    chosen = best["claim"]
                synthesized = self._apply(
                    tx,
                    conflict_id,
                    top,
                    now=now,
                    score=shares[top],
                    winners=winners,
                    claim=chosen,
                    domain=c["domain"],
                    subject=c["subject"],
                    a_id=c["a_id"],
                    b_id=c["b_id"],
                )
                status = "forked" if top == "fork" else "resolved"
            return VoteResult(
                voter=model,
                resolution=resolution,
                weight=weight,
                current_votes=shares,
                vote_count=len(votes),
                votes_needed=needed,
                consensus_reached=reached,
                consensus_resolution=top if reached else None,
                threshold=phi,
                status=status,
                synthesized_assertion_id=synthesized,
            )

        result = self.store.write(work)
        self._touched()
        return result

    def _apply(
        self,
        tx: Tx,
        cid: str,
        resolution: str,
        *,
        now: str,
        score: float,
        winners: list[str],
        claim: str | None,
        domain: str,
        subject: str,
        a_id: str,
        b_id: str,
    ) -> str | None:
        """Carry out a decided resolution inside the voting transaction."""
        status = "forked" if resolution == "fork" else "resolved"
        tx.run(
            "MATCH (c:Conflict {id: $id}) SET c.status = $st, c.resolution = $r, c.resolved_at = $now, "
            "c.consensus_score = $score",
            {"id": cid, "st": status, "r": resolution, "now": now, "score": score},
        )
        for name in winners:
            tx.run(
                "MATCH (c:Conflict {id: $id}), (m:Model {name: $m}) CREATE (c)-[:RESOLVED_BY]->(m)",
                {"id": cid, "m": name},
            )
        if resolution in ("accept_a", "accept_b"):
            win, lose = (a_id, b_id) if resolution == "accept_a" else (b_id, a_id)
            tx.run("MATCH (a:Assertion {id: $id}) SET a.survived_consensus = true", {"id": win})
            tx.run(
                "MATCH (a:Assertion {id: $id}) SET a.survived_consensus = false, a.status = 'disproven'",
                {"id": lose},
            )
            tx.run(
                "MATCH (a:Assertion {id: $id})-[:ASSERTED_BY]->(m:Model) "
                "SET m.conflict_wins = m.conflict_wins + 1",
                {"id": win},
            )
            return None
        if resolution == "fork":
            tx.run(
                "MATCH (c:Conflict {id: $id})-[:INVOLVES]->(a:Assertion) SET a.survived_consensus = true "
                "CREATE (a)-[:FORKED_FROM]->(c)",
                {"id": cid},
            )
            return None
        new_id = str(uuid.uuid4())
        self._upsert_model(tx, CONSENSUS_MODEL, now)
        self._create_assertion(
            tx,
            id=new_id,
            subject=subject,
            predicate="synthesized_as",
            obj=claim or "",
            sk=normalise(subject),
            pk="synthesized_as",
            ok=normalise(claim or ""),
            confidence=round(score, 6),
            model=CONSENSUS_MODEL,
            domain=domain,
            evidence=f"Synthesized from conflict {cid}",
            now=now,
            survived=True,
        )
        tx.run(
            "MATCH (s:Assertion {id: $sid}), (c:Conflict {id: $cid}) CREATE (s)-[:SYNTHESIZED_FROM]->(c)",
            {"sid": new_id, "cid": cid},
        )
        return new_id
