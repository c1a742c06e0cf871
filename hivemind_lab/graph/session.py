"""What one voting transaction has read, kept in memory so a batch of votes reads each subject
and each domain's ballots once (the transaction holds the subjects' locks meanwhile)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from hivemind_lab.graph.models import Settlement
from hivemind_lab.graph.reliability import Estimate
from hivemind_lab.graph.tally import Ballot, Contest, Pair, Side, contest_of


@dataclass
class SubjectState:
    """The unresolved conflicts about one subject in one domain, their sides and votes."""

    pairs: dict[str, Pair]
    holders: dict[str, dict[str, float]]
    """Assertion id → model → confidence (asserter and corroborators)."""
    created: dict[str, str]
    ballots: dict[tuple[str, str], Ballot]
    """(conflict id, model) → that model's vote on that conflict."""

    def contest(self, conflict_id: str) -> Contest:
        chosen = contest_of(conflict_id, self.pairs.values())
        ids = {x for p in chosen for x in (p.a_id, p.b_id)}
        in_contest = {p.id for p in chosen}
        sides = {
            x: Side(x, dict(self.holders.get(x, {})), self.created.get(x, "")) for x in sorted(ids)
        }
        ballots = sorted(
            (b for (cid, _), b in self.ballots.items() if cid in in_contest),
            key=lambda b: (b.conflict_id, b.model),
        )
        return Contest(sides, tuple(chosen), tuple(ballots))

    def close(self, contest: Contest) -> None:
        """Forget a decided contest's conflicts."""
        for p in contest.pairs:
            self.pairs.pop(p.id, None)
        done = {p.id for p in contest.pairs}
        self.ballots = {k: b for k, b in self.ballots.items() if k[0] not in done}


@dataclass
class DomainBallots:
    """Every vote of a domain (decided contests included), for the joint reliability estimate.

    A decided contest is keyed by its verdict; the open conflicts form contests by shared sides.
    Only side choices count (``fork`` and ``synthesize`` say nothing about which value is true).
    """

    ends: dict[str, tuple[str, str]] = field(default_factory=dict)
    """Conflict id → its two assertion ids."""
    verdict: dict[str, str] = field(default_factory=dict)
    """Conflict id → the verdict that decided it (absent while open)."""
    choice: dict[tuple[str, str], str] = field(default_factory=dict)
    """(conflict id, model) → the side it accepted, ``fork`` or ``synthesize``."""
    agreements: dict[str, frozenset[str]] = field(default_factory=dict)
    """Uncontested assertion id → the models holding it (at least two): each holder's
    agreement counts as a vote for the claim, as a worker's label on an item nobody
    disputes does in truth discovery."""
    values: dict[str, str] = field(default_factory=dict)
    """Assertion id → its value (predicate and object keys), so the estimate can tell a value
    that recurs across contests (a label) from a one-off."""
    status: dict[str, str] = field(default_factory=dict)
    """Conflict id → its status (unresolved, resolved, forked, withdrawn)."""
    opened: dict[str, str] = field(default_factory=dict)
    """Conflict id → when it was created (the voting window runs from the contest's first)."""
    subjects: dict[str, str] = field(default_factory=dict)
    """Conflict id → its subject as stored."""
    holders: dict[str, dict[str, float]] = field(default_factory=dict)
    """Contested assertion id → model → confidence (asserter and corroborators), so every
    contest of the domain can be judged again without reading its subject."""
    created: dict[str, str] = field(default_factory=dict)
    """Assertion id → when it was asserted."""
    claims: dict[tuple[str, str], str] = field(default_factory=dict)
    """(conflict id, model) → the claim proposed with a ``synthesize`` vote."""
    by_conflict: dict[str, dict[str, str]] = field(default_factory=lambda: defaultdict(dict))
    """Conflict id → model → its choice (``choice`` indexed by conflict)."""

    def add(
        self, conflict_id: str, model: str, choice: str, a_id: str, b_id: str, claim: str = ""
    ) -> None:
        self.ends[conflict_id] = (a_id, b_id)
        self.choice[(conflict_id, model)] = choice
        self.claims[(conflict_id, model)] = claim
        self.by_conflict[conflict_id][model] = choice

    def contest(self, members: Sequence[str]) -> Contest:
        """The contest of ``members`` (conflict ids) as the domain's reads give it: the same
        sides, pairs and ballots a vote's read of the subject gives an open contest, so a
        decision made either way is the same."""
        pairs = tuple(
            sorted(
                (Pair(c, *self.ends[c], self.opened.get(c, "")) for c in members),
                key=lambda p: (p.created_at, p.id),
            )
        )
        ids = sorted({x for p in pairs for x in (p.a_id, p.b_id)})
        sides = {x: Side(x, dict(self.holders.get(x, {})), self.created.get(x, "")) for x in ids}
        ballots = []
        for p in pairs:
            for model, choice in self.by_conflict.get(p.id, {}).items():
                resolution = {p.a_id: "accept_a", p.b_id: "accept_b"}.get(choice, choice)
                claim = self.claims.get((p.id, model), "")
                ballots.append(Ballot(p.id, model, resolution, claim))  # type: ignore[arg-type]
        ballots.sort(key=lambda b: (b.conflict_id, b.model))
        return Contest(sides, pairs, tuple(ballots))

    def contests(self) -> dict[str, list[str]]:
        """Contest key (a verdict id, or the first open conflict id) → its conflict ids."""
        parent: dict[str, str] = {}

        def find(x: str) -> str:
            while parent.setdefault(x, x) != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        for cid in sorted(self.ends):
            key = self.verdict.get(cid)
            if key is not None:
                parent[find("v:" + cid)] = find("verdict:" + key)
            else:
                a, b = self.ends[cid]
                parent[find("v:" + cid)] = find("side:" + a)
                parent[find("side:" + b)] = find("side:" + a)
        groups: dict[str, list[str]] = defaultdict(list)
        for cid in sorted(self.ends):
            groups[find("v:" + cid)].append(cid)
        return {self.verdict.get(members[0], members[0]): members for members in groups.values()}

    def ballots(self) -> tuple[dict[str, dict[str, frozenset[str]]], dict[str, frozenset[str]]]:
        """(contest → model → sides accepted, contest → every side), side choices only."""
        by_conflict: dict[str, dict[str, str]] = defaultdict(dict)
        for (cid, model), choice in self.choice.items():
            by_conflict[cid][model] = choice
        ballots: dict[str, dict[str, frozenset[str]]] = {}
        sides: dict[str, frozenset[str]] = {}
        for key, members in self.contests().items():
            picked: dict[str, set[str]] = defaultdict(set)
            for cid in members:
                a, b = self.ends[cid]
                for model, choice in by_conflict.get(cid, {}).items():
                    if choice in (a, b):
                        picked[model].add(choice)
            sides[key] = frozenset(x for cid in members for x in self.ends[cid])
            ballots[key] = {m: frozenset(c) for m, c in sorted(picked.items())}
        contested = {x for ends in self.ends.values() for x in ends}
        for aid, holders in sorted(self.agreements.items()):
            if aid not in contested:
                ballots["agree:" + aid] = {m: frozenset([aid]) for m in sorted(holders)}
                sides["agree:" + aid] = frozenset([aid])
        return ballots, sides


@dataclass
class VoteSession:
    """Per-transaction cache; discarded when the transaction ends."""

    subjects: dict[tuple[str, str], SubjectState] = field(default_factory=dict)
    conflicts: dict[str, dict[str, str]] = field(default_factory=dict)
    """Conflict id → status, domain, subject, sk, a_id, b_id (read once, after the lock)."""
    domains: dict[str, DomainBallots] = field(default_factory=dict)
    records: dict[str, tuple[int, int]] = field(default_factory=dict)
    """Record id → (won, decided), as read or updated in this transaction."""
    winners: dict[str, str] = field(default_factory=dict)
    """Verdict id → its current winner (a side's assertion id, fork or synthesize)."""
    estimates: dict[str, Estimate] = field(default_factory=dict)
    """Domain → the reliability estimate over its votes (dropped when a vote is added)."""
    settlements: list[Settlement] = field(default_factory=list)
    """Contests decided or revised in this transaction, for the listeners after commit."""
