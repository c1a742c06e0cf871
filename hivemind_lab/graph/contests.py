"""Contests in the store: read a subject's open conflicts inside a vote's transaction (after
taking the subject's lock), weigh the voters, and apply a final decision once (verdicts,
conflict statuses, track records)."""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from hivemind_lab.graph.core import GraphCore, each, now_iso, unwind
from hivemind_lab.graph.keys import text_key
from hivemind_lab.graph.models import CONSENSUS_MODEL, Revision, Settlement, TrackRecord
from hivemind_lab.graph.reliability import Estimate, Prior, estimate
from hivemind_lab.graph.session import DomainBallots, SubjectState, VoteSession
from hivemind_lab.graph.store import Tx
from hivemind_lab.graph.tally import (
    FORK,
    SYNTHESIZE,
    Ballot,
    Contest,
    Decision,
    Pair,
    Rule,
    Side,
    choices,
    confidence_factor,
    decide,
    standing,
    verdicts,
)


def record_id(model: str, domain: str) -> str:
    """Key of a model's track record in a domain."""
    return f"{model}|{domain}"


class _Reader:
    """A read-only stand-in for a transaction, for loaders used outside a write."""

    def __init__(self, read: Any) -> None:
        self.run = read


class ContestOps(GraphCore):
    """Store side of the consensus rule in `hivemind_lab.graph.tally`."""

    @property
    def _prior(self) -> Prior:
        return Prior(self.config.record_prior_mean, self.config.record_prior_strength)

    @property
    def _rule(self) -> Rule:
        return Rule(
            phi=self.config.consensus_phi,
            min_votes=self.config.conflict_threshold,
            quorum=self.config.consensus_quorum,
            window_s=self.config.voting_window_hours * 3600,
        )

    # -- track records -----------------------------------------------------------------------
    def track_record(self, model: str, domain: str = "general") -> TrackRecord:
        """``model``'s record in ``domain``: decided claims won (hard outcomes, revisions
        included) and the joint estimate behind its vote weight (ballots, agreement with the
        likeliest side, expected correct, prior, copy discount)."""
        model, domain = self._model(model), self._domain(domain)
        session = VoteSession()
        reader = _Reader(self.store.read)
        won, decided = self._records(reader, session, domain).get(model, (0, 0))
        ballots = self._domain_ballots(reader, session, domain)
        found = self._estimate(reader, session, domain)
        by_contest, _ = ballots.ballots()
        agreed = 0
        for key, by_model in by_contest.items():
            picked = by_model.get(model)
            post = found.posteriors.get(key)
            if picked and post and len(by_model) >= 2:
                best = max(post, key=lambda s: (post[s], s))
                agreed += best in picked
        return TrackRecord(
            model=model,
            domain=domain,
            decided=decided,
            won=won,
            ballots=found.ballots.get(model, 0),
            agreed=agreed,
            expected_correct=round(found.soft_correct.get(model, 0.0), 6),
            prior_mean=found.prior.mean,
            prior_strength=found.prior.strength,
            reliability=round(found.p(model), 6),
            independence=round(found.independence.get(model, 1.0), 6),
            copies=found.copies.get(model, ()),
            weight=round(found.weight(model, 2), 6),
            label_hits={
                t.replace("\x1f", " "): round(h, 6)
                for (m, t), h in sorted(found.labels.hit.items())
                if m == model
            },
        )

    def vote_weight(self, model: str, domain: str) -> float:
        """The weight of ``model``'s vote in a two-sided conflict of ``domain`` (its estimated
        reliability's log odds; confidence may scale it at vote time)."""
        return self.track_record(model, domain).weight

    def revisions(self, domain: str = "general") -> list[Revision]:
        """Every change of a verdict in ``domain``, oldest first (the history that revisions
        keep)."""
        domain = self._domain(domain)
        rows = self.store.read(
            "MATCH (r:Revision), (v:Verdict) WHERE v.id = r.verdict_id AND v.domain = $d "
            "RETURN r.verdict_id AS verdict_id, r.from_winner AS from_winner, "
            "r.to_winner AS to_winner, r.posterior AS posterior, r.created_at AS at",
            {"d": domain},
        )
        rows.sort(key=lambda r: (r["at"], r["verdict_id"]))
        return [Revision(**r) for r in rows]

    # -- reading (once per transaction) ------------------------------------------------------
    @staticmethod
    def _conflict(tx: Tx, session: VoteSession, cid: str) -> dict[str, str] | None:
        """The conflict's status and subject, read after taking the subject's lock (the entity
        version an assert also bumps): no other vote or assert on the subject is then in flight."""
        if cid in session.conflicts:
            return session.conflicts[cid]
        found = tx.run("MATCH (c:Conflict {id: $id}) RETURN c.subject AS subject", {"id": cid})
        if not found:
            return None
        sk = text_key(found[0]["subject"])
        if not any(key == sk for key, _ in session.subjects):
            tx.run("MATCH (e:Entity {key: $k}) SET e.version = e.version + 1", {"k": sk})
        row = tx.run(
            "MATCH (c:Conflict {id: $id}) RETURN c.status AS status, c.domain AS domain, "
            "c.subject AS subject, c.a_id AS a_id, c.b_id AS b_id",
            {"id": cid},
        )[0]
        session.conflicts[cid] = {**row, "sk": sk}
        return session.conflicts[cid]

    @staticmethod
    def _subject(tx: Tx, session: VoteSession, sk: str, domain: str) -> SubjectState:
        """Every unresolved conflict about the subject, its sides' holders and its votes."""
        if (sk, domain) in session.subjects:
            return session.subjects[(sk, domain)]
        params = {"k": sk, "d": domain}
        rows = tx.run(
            "MATCH (e:Entity {key: $k})<-[:SUBJECT_REF]-(a:Assertion)<-[i:INVOLVES]-(c:Conflict) "
            "WHERE c.domain = $d AND c.status = 'unresolved' "
            "RETURN c.id AS cid, c.created_at AS created, i.side AS side, a.id AS aid, "
            "a.source_model AS model, a.confidence AS conf, a.created_at AS a_created",
            params,
        )
        ends: dict[str, dict[str, str]] = defaultdict(dict)
        opened: dict[str, str] = {}
        holders: dict[str, dict[str, float]] = defaultdict(dict)
        created: dict[str, str] = {}
        for r in rows:
            ends[r["cid"]][r["side"]] = r["aid"]
            opened[r["cid"]] = r["created"]
            holders[r["aid"]][r["model"]] = float(r["conf"])
            created[r["aid"]] = r["a_created"]
        for r in tx.run(
            "MATCH (e:Entity {key: $k})<-[:SUBJECT_REF]-(a:Assertion)-[r:CORROBORATED_BY]->"
            "(m:Model) WHERE a.domain = $d AND a.status = 'active' "
            "RETURN a.id AS aid, m.name AS model, r.confidence AS conf",
            params,
        ):
            if r["aid"] in holders:
                holders[r["aid"]][r["model"]] = float(r["conf"])
        ballots = {
            (r["cid"], r["model"]): Ballot(r["cid"], r["model"], r["resolution"], r["claim"] or "")
            for r in tx.run(
                # Each vote comes back once per side (a filter on the side loses rows on
                # LadybugDB 0.x); the dict keeps one.
                "MATCH (e:Entity {key: $k})<-[:SUBJECT_REF]-(a:Assertion)<-[:INVOLVES]-"
                "(c:Conflict)<-[:VOTED_ON]-(v:Vote) "
                "WHERE c.domain = $d AND c.status = 'unresolved' "
                "RETURN c.id AS cid, v.model AS model, v.resolution AS resolution, "
                "v.synthesized_claim AS claim",
                params,
            )
        }
        pairs = {
            c: Pair(c, e["a"], e["b"], opened[c]) for c, e in ends.items() if "a" in e and "b" in e
        }
        state = SubjectState(pairs, dict(holders), created, ballots)
        session.subjects[(sk, domain)] = state
        return state

    def _records(self, tx: Tx, session: VoteSession, domain: str) -> dict[str, tuple[int, int]]:
        """Every model's (won, decided) in the domain."""
        marker = record_id("", domain)
        if marker not in session.records:
            for r in tx.run(
                "MATCH (r:Record) WHERE r.domain = $d RETURN r.id AS id, r.decided AS decided, "
                "r.won AS won",
                {"d": domain},
            ):
                session.records.setdefault(r["id"], (r["won"], r["decided"]))
            session.records[marker] = (0, 0)
        suffix = "|" + domain
        return {
            k.removesuffix(suffix): v
            for k, v in session.records.items()
            if k.endswith(suffix) and k != marker
        }

    @staticmethod
    def _domain_ballots(tx: Tx, session: VoteSession, domain: str) -> DomainBallots:
        """Every vote cast in the domain (decided contests included, each keyed by its
        verdict) and the current winner of every verdict."""
        if domain not in session.domains:
            ballots = DomainBallots()
            for r in tx.run(
                "MATCH (c:Conflict)<-[:VOTED_ON]-(v:Vote) WHERE c.domain = $d "
                "RETURN c.id AS cid, c.a_id AS a, c.b_id AS b, v.model AS model, "
                "v.resolution AS r, v.synthesized_claim AS claim",
                {"d": domain},
            ):
                choice = {"accept_a": r["a"], "accept_b": r["b"]}.get(r["r"], r["r"])
                ballots.add(r["cid"], r["model"], str(choice), r["a"], r["b"], r["claim"] or "")
            for r in tx.run(
                "MATCH (c:Conflict) WHERE c.domain = $d RETURN c.id AS cid, c.a_id AS a, "
                "c.b_id AS b, c.status AS status, c.created_at AS created, c.subject AS subject",
                {"d": domain},
            ):
                ballots.ends.setdefault(r["cid"], (r["a"], r["b"]))
                ballots.status[r["cid"]] = r["status"]
                ballots.opened[r["cid"]] = r["created"]
                ballots.subjects[r["cid"]] = r["subject"]
            for r in tx.run(
                "MATCH (a:Assertion) WHERE a.domain = $d "
                "RETURN a.id AS id, a.predicate_key AS p, a.object_key AS o, "
                "a.source_model AS owner, a.confidence AS conf, a.created_at AS created",
                {"d": domain},
            ):
                ballots.values[r["id"]] = f"{r['p']}\x1f{r['o']}"
                ballots.holders[r["id"]] = {r["owner"]: float(r["conf"])}
                ballots.created[r["id"]] = r["created"]
            holders: dict[str, set[str]] = defaultdict(set)
            for r in tx.run(
                # A decided contest's losing sides keep their corroborators as holders, so the
                # contest is judged again with the electorate it was decided with.
                "MATCH (a:Assertion)-[r:CORROBORATED_BY]->(m:Model) WHERE a.domain = $d "
                "AND a.status IN ['active', 'disproven'] RETURN a.id AS id, "
                "a.source_model AS owner, m.name AS model, r.confidence AS conf, "
                "a.status AS status",
                {"d": domain},
            ):
                ballots.holders.setdefault(r["id"], {})[r["model"]] = float(r["conf"])
                if r["status"] == "active":
                    holders[r["id"]].update((r["owner"], r["model"]))
            ballots.agreements = {k: frozenset(v) for k, v in holders.items()}
            for r in tx.run(
                "MATCH (v:Verdict)-[:DECIDES]->(c:Conflict) WHERE v.domain = $d "
                "RETURN v.id AS vid, c.id AS cid, v.winner AS winner",
                {"d": domain},
            ):
                ballots.verdict[r["cid"]] = r["vid"]
                session.winners[r["vid"]] = r["winner"]
            session.domains[domain] = ballots
            for (_, d), state in session.subjects.items():
                if d == domain:
                    for b in state.ballots.values():
                        _add_ballot(ballots, state, b)
        return session.domains[domain]

    def _estimate(self, tx: Tx, session: VoteSession, domain: str) -> Estimate:
        """Every model's reliability in the domain, estimated jointly from all its votes
        (`hivemind_lab.graph.reliability.estimate`); once per transaction and vote set."""
        if domain not in session.estimates:
            by_contest, sides = self._domain_ballots(tx, session, domain).ballots()
            values = session.domains[domain].values
            kinds = {v: v.split("\x1f", 1)[0] for v in values.values()}
            session.estimates[domain] = estimate(
                by_contest, sides, self._prior, values=values, kinds=kinds
            )
        return session.estimates[domain]

    def _decision(
        self, tx: Tx, session: VoteSession, contest: Contest, domain: str, sk: str
    ) -> Decision:
        """Where the contest stands and whether it is final, with every voter weighted by the
        reliability the joint estimate over the domain's votes gives it."""
        return judge(
            contest, self._estimate(tx, session, domain), self._rule, self._elapsed(contest)
        )

    def _elapsed(self, contest: Contest) -> float:
        """Seconds since the contest's first conflict (its voting window)."""
        opened = contest.opened_at
        if not opened:
            return 0.0
        return (self.clock() - datetime.fromisoformat(opened)).total_seconds()

    # -- applying a decision -----------------------------------------------------------------
    def _apply(
        self,
        tx: Tx,
        session: VoteSession,
        contest: Contest,
        decision: Decision,
        *,
        domain: str,
        subject: str,
        sk: str,
    ) -> str | None:
        """Carry out a final decision inside the voting transaction: conflict statuses,
        assertion verdicts, track records; returns a synthesized assertion's id."""
        now = now_iso(self.clock)
        top = decision.standing.top
        assert top is not None  # a final decision has a leading choice
        score = decision.standing.shares[top]
        if top not in (FORK, SYNTHESIZE):
            score = decision.standing.posterior[top]
        self._verdict(tx, session, contest, domain=domain, subject=subject, top=top, score=score)
        picked = {
            m: c for m, c in choices(contest).items() if top in c
        }  # voters whose ballot carried the winner
        winners = sorted(picked)
        status = "forked" if top == FORK else "resolved"
        for p in contest.pairs:
            if p.id in session.conflicts:
                session.conflicts[p.id]["status"] = status
            if domain in session.domains:
                session.domains[domain].status[p.id] = status
        session.subjects[(sk, domain)].close(contest)
        if top == FORK:
            self._fork(tx, list(contest.pairs), now=now, score=score, winners=winners)
            return None
        result = verdicts(contest, top, decision.standing.shares)
        each(
            tx,
            "MATCH (c:Conflict {id: $id}) SET c.status = 'resolved', "
            "c.resolution = $resolution, c.resolved_at = $now, c.consensus_score = $score",
            [{"id": k, "resolution": v} for k, v in result.resolutions.items()],
            now=now,
            score=score,
        )
        self._resolved_by(tx, contest.pairs, winners)
        if top == SYNTHESIZE:
            return self._synthesize(tx, contest, decision, domain=domain, subject=subject, now=now)
        each(
            tx,
            "MATCH (a:Assertion {id: $id}) SET a.survived_consensus = true",
            [{"id": i} for i in sorted(result.survivors)],
        )
        each(
            tx,
            "MATCH (a:Assertion {id: $id}) SET a.survived_consensus = false, a.status = 'disproven'",
            [{"id": i} for i in sorted(result.disproven)],
        )
        tally: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for side in contest.sides.values():
            for holder in side.holders:
                tally[holder][0] += 1
                tally[holder][1] += side.id in result.survivors
        rows = [
            {"id": record_id(m, domain), "model": m, "decided": d, "won": w}
            for m, (d, w) in sorted(tally.items())
        ]
        for m, (d, w) in sorted(tally.items()):
            old_won, old_decided = session.records.get(record_id(m, domain), (0, 0))
            session.records[record_id(m, domain)] = (old_won + w, old_decided + d)
        unwind(
            tx,
            "UNWIND $rows AS r MERGE (x:Record {id: r.id}) ON CREATE SET x.model = r.model, "
            "x.domain = $d, x.decided = r.decided, x.won = r.won "
            "ON MATCH SET x.decided = x.decided + r.decided, x.won = x.won + r.won",
            {"rows": rows, "d": domain},
        )
        unwind(
            tx,
            "UNWIND $rows AS r MATCH (m:Model {name: r.model}) "
            "SET m.conflict_wins = m.conflict_wins + r.won",
            {"rows": [r for r in rows if r["won"]]},
        )
        return None

    def _verdict(
        self,
        tx: Tx,
        session: VoteSession,
        contest: Contest,
        *,
        domain: str,
        subject: str,
        top: str,
        score: float,
    ) -> None:
        """Keep the decision as a verdict over its conflicts, so later estimates can revise it
        and the contest's votes stay one contest in the domain's vote set."""
        now = now_iso(self.clock)
        vid = contest.pairs[0].id
        params = {"id": vid, "d": domain, "s": subject, "w": top, "p": score, "now": now}
        if tx.run("MATCH (v:Verdict {id: $id}) RETURN v.id AS id", {"id": vid}):
            # A reopened contest decided again keeps its verdict, and the history says so.
            tx.run(
                "MATCH (v:Verdict {id: $id}) SET v.winner = $w, v.posterior = $p, "
                "v.revised_at = $now, v.revisions = v.revisions + 1",
                params,
            )
            tx.run(
                "CREATE (r:Revision {id: $rid, verdict_id: $id, from_winner: '', to_winner: $w, "
                "posterior: $p, created_at: $now})",
                {**params, "rid": str(uuid.uuid4()), "p": round(score, 6)},
            )
        else:
            tx.run(
                "CREATE (v:Verdict {id: $id, domain: $d, subject: $s, winner: $w, posterior: $p, "
                "decided_at: $now, revised_at: $now, revisions: 0})",
                params,
            )
        each(
            tx,
            "MATCH (v:Verdict {id: $vid}), (c:Conflict {id: $cid}) CREATE (v)-[:DECIDES]->(c)",
            [{"cid": p.id} for p in contest.pairs],
            vid=vid,
        )
        if domain in session.domains:
            for p in contest.pairs:
                session.domains[domain].verdict[p.id] = vid
                session.domains[domain].ends[p.id] = (p.a_id, p.b_id)
        session.winners[vid] = top
        session.settlements.append(
            Settlement(
                kind="decided",
                verdict_id=vid,
                domain=domain,
                subject=subject,
                conflict_ids=tuple(p.id for p in contest.pairs),
                winner=top,
                posterior=round(score, 6),
                at=now,
            )
        )

    # -- judging every contest again ---------------------------------------------------------
    def _reconcile(self, tx: Tx, session: VoteSession, domain: str) -> int:
        """Judge every contest of the domain again with the current estimate, so that the
        graph's decisions are a function of the vote set, whatever order the votes came in:

        - an open contest that is now final is decided (a split contest waiting for votes
          elsewhere to move the records);
        - a verdict whose side is still final stays; one whose posterior now names another
          side with at least φ is revised; one that would no longer be decided is reopened
          (its conflicts take votes again).

        Verdicts for ``fork`` or ``synthesize`` are procedural and stay. Each change takes the
        subject's lock and reads the contest again before it is made. Returns how many
        contests changed."""
        ballots = self._domain_ballots(tx, session, domain)
        found = self._estimate(tx, session, domain)
        changed = 0
        for key, members in sorted(ballots.contests().items()):
            winner = session.winners.get(key) if ballots.verdict.get(members[0]) == key else None
            if winner in (FORK, SYNTHESIZE):
                continue
            if winner is None and any(ballots.status.get(c) != "unresolved" for c in members):
                continue  # forked or withdrawn without a verdict
            contest = ballots.contest(members)
            if not contest.ballots:
                continue
            decision = judge(contest, found, self._rule, self._elapsed(contest))
            top = decision.standing.top if decision.final else None
            if winner is None:
                if top is not None:
                    changed += self._decide_open(tx, session, members[0], domain)
                continue
            if top == winner:
                continue
            if top is not None and top not in (FORK, SYNTHESIZE):
                self._revise_one(
                    tx,
                    session,
                    key,
                    members,
                    winner,
                    top,
                    decision.standing.posterior,
                    domain=domain,
                )
                changed += 1
            else:
                changed += self._reopen(tx, session, key, members, winner, decision, domain=domain)
        return changed

    def _decide_open(self, tx: Tx, session: VoteSession, cid: str, domain: str) -> int:
        """Decide the open contest of ``cid`` as a vote in it would (lock, read, decide)."""
        found = self._conflict(tx, session, cid)
        if found is None or found["status"] != "unresolved":
            return 0
        sk = found["sk"]
        contest = self._subject(tx, session, sk, domain).contest(cid)
        decision = self._decision(tx, session, contest, domain, sk)
        if not decision.final:
            return 0
        self._apply(tx, session, contest, decision, domain=domain, subject=found["subject"], sk=sk)
        return 1

    def _reopen(
        self,
        tx: Tx,
        session: VoteSession,
        vid: str,
        members: Sequence[str],
        old: str,
        decision: Decision,
        *,
        domain: str,
    ) -> bool:
        """Undo a verdict the current estimate would no longer reach: its conflicts are
        unresolved again, its sides active and undecided, its holders' records lose the
        contest; the verdict node stays (winner empty) with a `Revision` to ``""``. A verdict
        one of whose sides was withdrawn since stays (returns False)."""
        self._conflict(tx, session, members[0])  # the subject's lock
        now = now_iso(self.clock)
        ballots = session.domains[domain]
        ids = sorted({x for c in members for x in ballots.ends[c]})
        rows = tx.run(
            "MATCH (a:Assertion) WHERE a.id IN $ids RETURN a.id AS id, a.status AS status, "
            "a.survived_consensus AS survived, a.subject AS subject",
            {"ids": ids},
        )
        if any(r["status"] == "withdrawn" for r in rows):
            return False
        each(
            tx,
            "MATCH (c:Conflict {id: $id}) SET c.status = 'unresolved', c.resolution = NULL, "
            "c.resolved_at = NULL, c.consensus_score = NULL",
            [{"id": c} for c in members],
        )
        each(
            tx,
            "MATCH (c:Conflict {id: $id})-[r:RESOLVED_BY]->(:Model) DELETE r",
            [{"id": c} for c in members],
        )
        each(
            tx,
            "MATCH (v:Verdict {id: $vid})-[r:DECIDES]->(c:Conflict {id: $id}) DELETE r",
            [{"id": c} for c in members],
            vid=vid,
        )
        each(
            tx,
            "MATCH (a:Assertion {id: $id}) SET a.survived_consensus = NULL, "
            "a.status = CASE WHEN a.status = 'disproven' THEN 'active' ELSE a.status END",
            [{"id": x} for x in ids],
        )
        survivors = {r["id"] for r in rows if r["survived"]}
        tally: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for x in ids:
            for holder in ballots.holders.get(x, {}):
                tally[holder][0] += 1
                tally[holder][1] += x in survivors
        each(
            tx,
            "MATCH (x:Record {id: $id}) SET x.decided = x.decided - $decided, x.won = x.won - $won",
            [
                {"id": record_id(m, domain), "decided": d, "won": w}
                for m, (d, w) in sorted(tally.items())
            ],
        )
        each(
            tx,
            "MATCH (m:Model {name: $model}) SET m.conflict_wins = m.conflict_wins - $won",
            [{"model": m, "won": w} for m, (_, w) in sorted(tally.items()) if w],
        )
        for m, (d, w) in tally.items():
            won, decided = session.records.get(record_id(m, domain), (0, 0))
            session.records[record_id(m, domain)] = (won - w, decided - d)
        best = max(decision.standing.posterior.values(), default=0.0)
        tx.run(
            "MATCH (v:Verdict {id: $id}) SET v.winner = '', v.posterior = $p, "
            "v.revised_at = $now, v.revisions = v.revisions + 1",
            {"id": vid, "p": best, "now": now},
        )
        tx.run(
            "CREATE (r:Revision {id: $rid, verdict_id: $id, from_winner: $old, to_winner: '', "
            "posterior: $p, created_at: $now})",
            {"rid": str(uuid.uuid4()), "id": vid, "old": old, "p": round(best, 6), "now": now},
        )
        session.winners.pop(vid, None)
        for c in members:
            ballots.verdict.pop(c, None)
            ballots.status[c] = "unresolved"
            if c in session.conflicts:
                session.conflicts[c]["status"] = "unresolved"
        subject = next((r["subject"] for r in rows), "")
        session.subjects.pop((text_key(subject), domain), None)  # read again, reopened
        session.settlements.append(
            Settlement(
                kind="reopened",
                verdict_id=vid,
                domain=domain,
                subject=subject,
                conflict_ids=tuple(members),
                winner="",
                previous_winner=old,
                posterior=round(best, 6),
                at=now,
            )
        )
        return True

    def _revise_one(
        self,
        tx: Tx,
        session: VoteSession,
        vid: str,
        members: Sequence[str],
        old: str,
        new: str,
        post: dict[str, float],
        *,
        domain: str,
    ) -> None:
        now = now_iso(self.clock)
        ballots = session.domains[domain]
        pairs = tuple(Pair(c, *ballots.ends[c]) for c in members)
        ids = sorted({x for p in pairs for x in (p.a_id, p.b_id)})
        rows = tx.run(
            "MATCH (a:Assertion)-[:ASSERTED_BY]->(m:Model) WHERE a.id IN $ids "
            "RETURN a.id AS id, m.name AS model, a.status AS status, a.created_at AS created, "
            "a.survived_consensus AS survived, a.subject AS subject",
            {"ids": ids},
        )
        holders: dict[str, dict[str, float]] = defaultdict(dict)
        info = {r["id"]: r for r in rows}
        for r in rows:
            holders[r["id"]][r["model"]] = 1.0
        for r in tx.run(
            "MATCH (a:Assertion)-[:CORROBORATED_BY]->(m:Model) WHERE a.id IN $ids "
            "RETURN a.id AS id, m.name AS model",
            {"ids": ids},
        ):
            holders[r["id"]][r["model"]] = 1.0
        sides = {x: Side(x, holders[x], info[x]["created"] if x in info else "") for x in ids}
        contest = Contest(sides, pairs, ())
        before = frozenset(x for x in ids if x in info and info[x]["survived"])
        after = verdicts(contest, new, post)
        each(
            tx,
            "MATCH (c:Conflict {id: $id}) SET c.resolution = $resolution, "
            "c.consensus_score = $score",
            [{"id": k, "resolution": v} for k, v in sorted(after.resolutions.items())],
            score=post[new],
        )
        each(
            tx,
            "MATCH (a:Assertion {id: $id}) SET a.survived_consensus = true, "
            "a.status = CASE WHEN a.status = 'disproven' THEN 'active' ELSE a.status END",
            [{"id": x} for x in sorted(after.survivors)],
        )
        each(
            tx,
            "MATCH (a:Assertion {id: $id}) SET a.survived_consensus = false, "
            "a.status = CASE WHEN a.status = 'active' THEN 'disproven' ELSE a.status END",
            [{"id": x} for x in sorted(after.disproven)],
        )
        delta: dict[str, int] = defaultdict(int)
        for side in sides.values():
            change = (side.id in after.survivors) - (side.id in before)
            for holder in side.holders:
                delta[holder] += change
        changed = [(m, d) for m, d in sorted(delta.items()) if d]
        each(
            tx,
            "MATCH (x:Record {id: $id}) SET x.won = x.won + $won",
            [{"id": record_id(m, domain), "won": d} for m, d in changed],
        )
        each(
            tx,
            "MATCH (m:Model {name: $model}) SET m.conflict_wins = m.conflict_wins + $won",
            [{"model": m, "won": d} for m, d in changed],
        )
        for m, d in changed:
            won, decided = session.records.get(record_id(m, domain), (0, 0))
            session.records[record_id(m, domain)] = (won + d, decided)
        each(
            tx,
            "MATCH (c:Conflict {id: $id})-[r:RESOLVED_BY]->(:Model) DELETE r",
            [{"id": c} for c in members],
        )
        backers = sorted(
            {m for (cid, m), choice in ballots.choice.items() if cid in members and choice == new}
        )
        self._resolved_by(tx, pairs, backers)
        tx.run(
            "MATCH (v:Verdict {id: $id}) SET v.winner = $w, v.posterior = $p, "
            "v.revised_at = $now, v.revisions = v.revisions + 1",
            {"id": vid, "w": new, "p": post[new], "now": now},
        )
        tx.run(
            "CREATE (r:Revision {id: $rid, verdict_id: $id, from_winner: $old, to_winner: $new, "
            "posterior: $p, created_at: $now})",
            {
                "rid": str(uuid.uuid4()),
                "id": vid,
                "old": old,
                "new": new,
                "p": round(post[new], 6),
                "now": now,
            },
        )
        session.winners[vid] = new
        subject = next((r["subject"] for r in rows), "")
        session.settlements.append(
            Settlement(
                kind="revised",
                verdict_id=vid,
                domain=domain,
                subject=subject,
                conflict_ids=tuple(members),
                winner=new,
                previous_winner=old,
                posterior=round(post[new], 6),
                at=now,
            )
        )

    @staticmethod
    def _resolved_by(tx: Tx, pairs: Sequence[Pair], winners: Sequence[str]) -> None:
        each(
            tx,
            "MATCH (c:Conflict {id: $cid}), (m:Model {name: $m}) CREATE (c)-[:RESOLVED_BY]->(m)",
            [{"cid": p.id, "m": m} for p in pairs for m in winners],
        )

    def _fork(
        self, tx: Tx, pairs: Sequence[Pair], *, now: str, score: float, winners: Sequence[str]
    ) -> None:
        """Keep every side: each conflict is forked and its assertions survive."""
        if not pairs:
            return
        each(
            tx,
            "MATCH (c:Conflict {id: $id}) SET c.status = 'forked', "
            "c.resolution = 'fork', c.resolved_at = $now, c.consensus_score = $score",
            [{"id": p.id} for p in pairs],
            now=now,
            score=score,
        )
        each(
            tx,
            "MATCH (c:Conflict {id: $cid}), (a:Assertion {id: $aid}) "
            "SET a.survived_consensus = true CREATE (a)-[:FORKED_FROM]->(c)",
            [{"cid": p.id, "aid": x} for p in pairs for x in (p.a_id, p.b_id)],
        )
        self._resolved_by(tx, pairs, winners)

    def _synthesize(
        self,
        tx: Tx,
        contest: Contest,
        decision: Decision,
        *,
        domain: str,
        subject: str,
        now: str,
    ) -> str:
        """One consensus assertion for the whole contest, linked to each of its conflicts."""
        claim = decision.standing.claim or ""
        new_id = str(uuid.uuid4())
        self._upsert_model(tx, CONSENSUS_MODEL, now)
        self._create_assertion(
            tx,
            id=new_id,
            subject=subject,
            predicate="synthesized_as",
            obj=claim,
            sk=text_key(subject),
            pk="synthesized_as",
            ok=text_key(claim),
            confidence=round(decision.standing.shares[SYNTHESIZE], 6),
            model=CONSENSUS_MODEL,
            domain=domain,
            evidence="Synthesized from conflicts " + ", ".join(p.id for p in contest.pairs),
            now=now,
            survived=True,
        )
        each(
            tx,
            "MATCH (s:Assertion {id: $sid}), (c:Conflict {id: $cid}) "
            "CREATE (s)-[:SYNTHESIZED_FROM]->(c)",
            [{"cid": p.id} for p in contest.pairs],
            sid=new_id,
        )
        return new_id


def _add_ballot(ballots: DomainBallots, state: SubjectState, b: Ballot) -> None:
    pair = state.pairs.get(b.conflict_id)
    if pair is None:
        return
    choice = {"accept_a": pair.a_id, "accept_b": pair.b_id}.get(b.resolution, b.resolution)
    ballots.add(b.conflict_id, b.model, choice, pair.a_id, pair.b_id, b.claim)


def record_ballot(session: VoteSession, sk: str, domain: str, ballot: Ballot) -> None:
    """Put a new vote into the transaction's cache (subject and, when loaded, domain); the
    domain's estimate is made again when next needed."""
    state = session.subjects[(sk, domain)]
    state.ballots[(ballot.conflict_id, ballot.model)] = ballot
    if domain in session.domains:
        _add_ballot(session.domains[domain], state, ballot)
    session.estimates.pop(domain, None)


def judge(contest: Contest, found: Estimate, rule: Rule, elapsed_s: float) -> Decision:
    """Where ``contest`` stands and whether it is final, every voter weighted by the joint
    estimate over the domain's votes: a function of the vote set, the contest and the clock
    only, so deciding a contest when its last vote comes and judging it again after later
    votes (`ContestOps._reconcile`) give the same answer."""
    values = max(2, len(contest.sides))
    weights = {m: found.weight(m, values) for m in sorted(contest.voters)}
    sides = frozenset(contest.sides)
    evidence = None
    if found.labelled(sides):  # Dawid–Skene rows: a voter's part depends on the side
        picked = {m: frozenset(c & sides) for m, c in choices(contest).items() if c & sides}
        factor = {
            m: confidence_factor(
                max(
                    (h for h in (contest.sides[s].holders.get(m) for s in c) if h is not None),
                    default=None,
                )
            )
            for m, c in picked.items()
        }
        evidence = found.evidence(picked, sides, factor)
    now = standing(contest, weights, evidence=evidence)
    return decide(contest, now, rule, elapsed_s=elapsed_s)
