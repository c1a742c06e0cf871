"""Conflicts and consensus: list conflicts, record votes, decide contests and apply verdicts.

The decision rule and the weights are pure functions in `hivemind_lab.graph.tally`; this module
reads a contest inside the voting transaction, applies the decision once and keeps the track
records. A vote locks the subject entity first (as an assert does), so concurrent voters on one
contest queue up and a decision is applied exactly once on both stores.
"""

from __future__ import annotations

import contextlib
import functools
import logging
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from hivemind_lab.errors import InputError
from hivemind_lab.graph.contests import ContestOps, record_ballot
from hivemind_lab.graph.core import now_iso
from hivemind_lab.graph.models import (
    RESOLUTIONS,
    AssertionSide,
    ConflictView,
    Settlement,
    VoteResult,
)
from hivemind_lab.graph.session import VoteSession
from hivemind_lab.graph.store import Tx
from hivemind_lab.graph.tally import FORK, SYNTHESIZE, Ballot, Contest, Decision, Pair

log = logging.getLogger(__name__)

SETTLE_EVERY_S = 60.0
"""How often (graph clock) a vote also sweeps for stale conflicts and closed voting windows."""


class ConsensusOps(ContestOps):
    """hivemind_conflicts and hivemind_resolve."""

    _settled_at: datetime | None = None

    # -- maintenance (writes) ----------------------------------------------------------------
    def settle(self) -> dict[str, int]:
        """Close what is due: fork conflicts unresolved past ``auto_fork_days`` and decide
        contests whose voting window has closed with a quorum. A write: call it from write
        paths (resolve does, at most every minute) or a timer, never from a read."""
        self._settled_at = self.clock()
        forked = self.auto_fork()
        cutoff = self._iso(self.clock() - timedelta(hours=self.config.voting_window_hours))
        due = self.store.read(
            "MATCH (c:Conflict) WHERE c.status = 'unresolved' AND c.created_at < $cutoff "
            "RETURN c.id AS id ORDER BY c.created_at, c.id",
            {"cutoff": cutoff},
        )
        decided = 0
        for row in due:
            settled = self.store.write(functools.partial(self._close_if_due, cid=row["id"]))
            if settled:
                decided += 1
                self._notify(settled)
        if decided:
            self._touched()
        return {"forked": forked, "decided": decided}

    def _iso(self, moment: datetime) -> str:
        return moment.astimezone(UTC).isoformat(timespec="microseconds")

    def _close_if_due(self, tx: Tx, cid: str) -> list[Settlement]:
        session = VoteSession()
        found = self._conflict(tx, session, cid)
        if found is None or found["status"] != "unresolved":
            return []
        domain, sk = found["domain"], found["sk"]
        contest = self._subject(tx, session, sk, domain).contest(cid)
        decision = self._decision(tx, session, contest, domain, sk)
        if not decision.final:
            return []
        self._apply(tx, session, contest, decision, domain=domain, subject=found["subject"], sk=sk)
        return session.settlements

    def auto_fork(self) -> int:
        """Fork conflicts left unresolved longer than ``auto_fork_days``; returns how many."""
        cutoff = self._iso(self.clock() - timedelta(days=self.config.auto_fork_days))
        stale = self.store.read(
            "MATCH (c:Conflict) WHERE c.status = 'unresolved' AND c.created_at < $cutoff "
            "RETURN c.id AS id",
            {"cutoff": cutoff},
        )
        if not stale:
            return 0
        now = now_iso(self.clock)

        def work(tx: Tx) -> int:
            live = [
                row
                for r in stale
                for row in tx.run(
                    "MATCH (c:Conflict {id: $id}) WHERE c.status = 'unresolved' "
                    "RETURN c.id AS id, c.a_id AS a_id, c.b_id AS b_id",
                    {"id": r["id"]},
                )
            ]
            pairs = [Pair(r["id"], r["a_id"], r["b_id"]) for r in live]
            self._fork(tx, pairs, now=now, score=0.0, winners=[])
            return len(pairs)

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
    def resolve(
        self,
        conflict_id: str,
        resolution: str,
        evidence: str = "",
        synthesized_claim: str = "",
        *,
        model: str,
    ) -> VoteResult:
        """Record ``model``'s vote (a re-vote replaces it) and decide the conflict's contest
        once its electorate has voted (see `hivemind_lab.graph.tally.decide`); returns the
        contest's standing and whether the decision is final."""
        row = self._checked_vote(conflict_id, resolution, evidence, synthesized_claim, model)
        last = self._settled_at
        if last is None or (self.clock() - last).total_seconds() >= SETTLE_EVERY_S:
            self.settle()
        now = now_iso(self.clock)
        results, settled = self.store.write(lambda tx: self._votes(tx, [row], now, False))
        self._touched()
        self._notify(settled)
        result = results[0]
        assert result is not None  # skip_closed is off: a closed conflict raised instead
        return result

    def resolve_many(
        self, votes: Sequence[Mapping[str, Any]], *, skip_closed: bool = False
    ) -> list[VoteResult | None]:
        """Apply many votes in one transaction, in order, each exactly as `resolve` would
        (rows carry conflict_id, resolution, model and optional evidence, synthesized_claim).
        Validation happens first, so a bad row leaves nothing written; a vote on a decided
        conflict fails the batch, or with ``skip_closed`` is skipped (``None``)."""
        checked = []
        for i, v in enumerate(votes):
            missing = [k for k in ("conflict_id", "resolution", "model") if k not in v]
            if missing:
                raise InputError(f"votes[{i}]", f"missing {', '.join(missing)}")
            checked.append(
                self._checked_vote(
                    v["conflict_id"],
                    v["resolution"],
                    v.get("evidence", ""),
                    v.get("synthesized_claim", ""),
                    v["model"],
                )
            )
        self.settle()
        now = now_iso(self.clock)
        results, settled = self.store.write(lambda tx: self._votes(tx, checked, now, skip_closed))
        self._touched()
        self._notify(settled)
        return results

    # -- settlement listeners ----------------------------------------------------------------
    def add_settlement_listener(
        self, listener: Callable[[Sequence[Settlement]], None]
    ) -> Callable[[], None]:
        """Call ``listener`` after every committed write that decided contests or revised
        verdicts, with what changed (e.g. to notify clients subscribed to a contest). Returns
        a function that removes it. A failing listener is logged and never undoes the vote."""
        self._listeners.append(listener)

        def remove() -> None:
            with contextlib.suppress(ValueError):
                self._listeners.remove(listener)

        return remove

    def _notify(self, settled: Sequence[Settlement]) -> None:
        if not settled:
            return
        for listener in list(self._listeners):
            try:
                listener(tuple(settled))
            except Exception:  # a subscriber's bug must not fail a committed vote
                log.exception("settlement listener %r failed", listener)

    def _checked_vote(
        self, conflict_id: object, resolution: object, evidence: object, claim: object, model: str
    ) -> tuple[str, str, str, str, str]:
        model = self._model(model)
        cid = self._text("conflict_id", conflict_id, limit=100)
        if resolution not in RESOLUTIONS:
            raise InputError(
                "resolution", f"unknown resolution {resolution!r}", allowed=", ".join(RESOLUTIONS)
            )
        text = self._text("evidence", evidence, limit=self.config.max_evidence, required=False)
        proposal = self._text(
            "synthesized_claim", claim, limit=self.config.max_text, required=False
        )
        if resolution == "synthesize" and not proposal:
            raise InputError("synthesized_claim", "required when resolution is 'synthesize'")
        return cid, str(resolution), text, proposal, model

    def _votes(
        self,
        tx: Tx,
        rows: Sequence[tuple[str, str, str, str, str]],
        now: str,
        skip_closed: bool,
    ) -> tuple[list[VoteResult | None], list[Settlement]]:
        """Record every vote, then decide the contests they touched with one estimate of the
        domain over all votes (this batch's included), then judge every other contest of the
        domain again with that estimate (decide, revise or reopen, `_reconcile`). Deciding
        after the whole batch makes a batch's outcome independent of the order of its rows;
        judging every contest again makes the decisions after the last vote independent of
        the order of the batches."""
        session = VoteSession()
        taken: list[tuple[dict[str, str], tuple[str, str, str, str, str]] | None] = []
        for row in rows:
            found = self._conflict(tx, session, row[0])
            if skip_closed and found is not None and found["status"] != "unresolved":
                taken.append(None)
                continue
            taken.append((self._record(tx, session, *row, now), row))
        decisions: dict[str, tuple[Contest, Decision, str | None]] = {}
        touched = sorted(
            {(f["domain"], f["sk"], row[0]) for item in taken if item for f, row in [item]}
        )
        for domain, sk, cid in touched:
            if cid in decisions or session.conflicts[cid]["status"] != "unresolved":
                continue
            found = session.conflicts[cid]
            contest = self._subject(tx, session, sk, domain).contest(cid)
            decision = self._decision(tx, session, contest, domain, sk)
            synthesized = None
            if decision.final:
                synthesized = self._apply(
                    tx, session, contest, decision, domain=domain, subject=found["subject"], sk=sk
                )
            for p in contest.pairs:
                decisions[p.id] = (contest, decision, synthesized)
        for domain in sorted({d for d, _, _ in touched}):
            self._reconcile(tx, session, domain)
        out: list[VoteResult | None] = []
        for item in taken:
            if item is None:
                out.append(None)
                continue
            found, (cid, resolution, _, _, model) = item
            contest, decision, synthesized = decisions[cid]
            weight = decision.standing.weights.get(model, 0.0)
            tx.run(
                "MATCH (v:Vote {id: $id}) SET v.weight = $w", {"id": f"{cid}|{model}", "w": weight}
            )
            out.append(
                self._result(found, contest, decision, resolution, model, weight, synthesized)
            )
        return out, session.settlements

    def _record(
        self,
        tx: Tx,
        session: VoteSession,
        conflict_id: str,
        resolution: str,
        evidence: str,
        claim: str,
        model: str,
        now: str,
    ) -> dict[str, str]:
        """Store one vote (a re-vote replaces the model's earlier one) after checking that the
        conflict is open; returns the conflict's row."""
        found = self._conflict(tx, session, conflict_id)
        if found is None:
            raise InputError("conflict_id", f"unknown conflict {conflict_id!r}")
        if found["status"] != "unresolved":
            raise InputError(
                "conflict_id",
                f"conflict {conflict_id!r} is already {found['status']}",
                allowed="an unresolved conflict",
            )
        domain, sk = found["domain"], found["sk"]
        self._subject(tx, session, sk, domain)
        ballot = Ballot(conflict_id, model, resolution, claim)  # type: ignore[arg-type]
        record_ballot(session, sk, domain, ballot)
        tx.run(
            "MATCH (c:Conflict {id: $cid}) MERGE (v:Vote {id: $vid}) ON CREATE SET "
            "v.conflict_id = $cid, v.model = $m, v.resolution = $r, v.evidence = $ev, "
            "v.synthesized_claim = $claim, v.weight = 0.0, v.created_at = $now "
            "ON MATCH SET v.resolution = $r, v.evidence = $ev, v.synthesized_claim = $claim, "
            "v.created_at = $now MERGE (v)-[:VOTED_ON]->(c)",
            {
                "vid": f"{conflict_id}|{model}",
                "cid": conflict_id,
                "m": model,
                "r": resolution,
                "ev": evidence,
                "claim": claim,
                "now": now,
            },
        )
        return found

    def _result(
        self,
        found: dict[str, str],
        contest: Contest,
        decision: Decision,
        resolution: str,
        model: str,
        weight: float,
        synthesized: str | None,
    ) -> VoteResult:
        shares = decision.standing.shares
        a_id, b_id = found["a_id"], found["b_id"]
        top = decision.standing.top if decision.final else None
        mine = {a_id: "accept_a", b_id: "accept_b"}.get(top or "", top)
        electorate = contest.electorate
        return VoteResult(
            voter=model,
            resolution=resolution,  # type: ignore[arg-type]  # checked against RESOLUTIONS
            weight=weight,
            current_votes={
                "accept_a": shares.get(a_id, 0.0),
                "accept_b": shares.get(b_id, 0.0),
                "synthesize": shares.get(SYNTHESIZE, 0.0),
                "fork": shares.get(FORK, 0.0),
            },
            vote_count=len(contest.voters),
            votes_needed=self.config.conflict_threshold,
            consensus_reached=decision.final,
            consensus_resolution=mine if mine in RESOLUTIONS else None,
            threshold=self.config.consensus_phi,
            status=("forked" if top == FORK else "resolved") if decision.final else "unresolved",
            synthesized_assertion_id=synthesized,
            final=decision.final,
            standing=shares,
            posterior=decision.standing.posterior,
            winner=top,
            electorate=len(electorate),
            electorate_voted=len(electorate & contest.voters),
            weights=decision.standing.weights,
        )
