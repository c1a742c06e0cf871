"""What one voting transaction has read, kept in memory so a batch of votes reads each subject
and each domain's ballots once (the transaction holds the subjects' locks meanwhile)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

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
    """Every vote of a domain (decided contests included), for the track-record refinement."""

    choice: dict[tuple[str, str], tuple[str, str]] = field(default_factory=dict)
    """(conflict id, model) → (contest key, chosen side id / fork / synthesize)."""
    sides: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    """Contest key → the assertion ids competing in it."""

    def add(
        self, key: str, conflict_id: str, model: str, choice: str, a_id: str, b_id: str
    ) -> None:
        self.choice[(conflict_id, model)] = (key, choice)
        self.sides[key].update((a_id, b_id))

    def by_contest(self) -> dict[str, dict[str, frozenset[str]]]:
        grouped: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
        for (_, model), (key, choice) in self.choice.items():
            grouped[key][model].add(choice)
        return {k: {m: frozenset(c) for m, c in v.items()} for k, v in grouped.items()}

    def values(self) -> dict[str, int]:
        return {k: max(2, len(v)) for k, v in self.sides.items()}


@dataclass
class VoteSession:
    """Per-transaction cache; discarded when the transaction ends."""

    subjects: dict[tuple[str, str], SubjectState] = field(default_factory=dict)
    conflicts: dict[str, dict[str, str]] = field(default_factory=dict)
    """Conflict id → status, domain, subject, sk, a_id, b_id (read once, after the lock)."""
    domains: dict[str, DomainBallots] = field(default_factory=dict)
    records: dict[str, tuple[int, int]] = field(default_factory=dict)
    """Record id → (won, decided), as read or updated in this transaction."""
