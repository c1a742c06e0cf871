"""Binding constraints as the stand-in reads them: what the decision records (each
constraint's ``forbids``, ``not_first`` and ``limits``; an order is never read from a fact) and the prohibitions and limits its facts state, read
by the same code as the client's text at intake (`hivemind_lab.problems.reading.constraints`:
ban, may not, cannot be transferred, illegal, covenant, limit, deadline, runs out …). Never
through one problem's words. Pure functions.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import NamedTuple

from hivemind_lab.agents.policy.phrasing import MAX_TEXT
from hivemind_lab.agents.schemas import (
    MAX_POINTS,
    BindingConstraint,
    Concern,
    CritiquePoint,
    DecisionContext,
    ScoreOutput,
    ScoreTask,
    SolutionView,
    Violation,
)
from hivemind_lab.problems.model import Fact
from hivemind_lab.problems.reading.constraints import read_constraints


class Bound(NamedTuple):
    """One option a binding constraint rules out or bounds."""

    option: int
    citation: str
    """The constraint id (recorded) or the fact id (read from a fact)."""
    text: str


class Bounds(NamedTuple):
    forbids: tuple[Bound, ...]
    limits: tuple[Bound, ...]
    not_first: tuple[Bound, ...] = ()
    """Options barred as a first move but allowed later (recorded constraints only)."""

    def forbidden(self) -> frozenset[int]:
        return frozenset(b.option for b in self.forbids)

    def barred_first(self) -> frozenset[int]:
        """Options a plan may sequence but never pursue now."""
        return frozenset(b.option for b in self.not_first)


@functools.lru_cache(maxsize=4096)
def _read(
    constraints: tuple[BindingConstraint, ...], facts: tuple[Fact, ...], options: tuple[str, ...]
) -> Bounds:
    forbids: dict[int, Bound] = {}
    limits: dict[int, Bound] = {}
    first: dict[int, Bound] = {}
    for c in constraints:
        for i in c.forbids:
            forbids.setdefault(i, Bound(i, c.id, c.text))
        for i in c.not_first:
            first.setdefault(i, Bound(i, c.id, c.text))
        for i in c.limits:
            limits.setdefault(i, Bound(i, c.id, c.text))
    for fact in facts:
        for read in read_constraints(fact.text, options):
            for n in read.forbids:
                forbids.setdefault(n, Bound(n, fact.id, fact.text))
            for n in read.limits:
                limits.setdefault(n, Bound(n, fact.id, fact.text))
    first = {i: b for i, b in first.items() if i not in forbids}
    kept = {i: b for i, b in limits.items() if i not in forbids and i not in first}
    return Bounds(
        tuple(b for _, b in sorted(forbids.items()) if b.option < len(options)),
        tuple(b for _, b in sorted(kept.items()) if b.option < len(options)),
        tuple(b for _, b in sorted(first.items()) if b.option < len(options)),
    )


def bounds(ctx: DecisionContext) -> Bounds:
    """The options the decision's binding constraints and its facts rule out or bound."""
    if not ctx.options:
        return Bounds((), ())
    return _read(ctx.constraints, ctx.facts, ctx.options)


def _fit(text: str) -> str:
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"


def ban_points(
    ctx: DecisionContext, target: SolutionView, points: Sequence[CritiquePoint]
) -> list[CritiquePoint]:
    """The critique's points with a decisive contradiction first on each option the target
    pursues (now or later) that a binding constraint rules out, and on each it pursues now that
    one bars as a first move, citing it."""
    held = {s.option for s in target.stances if s.stance in ("pursue", "later")}
    now = {s.option for s in target.stances if s.stance == "pursue"}
    found = bounds(ctx)
    barred = [(b, "is ruled out") for b in found.forbids if b.option in held]
    barred += [(b, "may not come first") for b in found.not_first if b.option in now]
    made = {(p.option, p.citation) for p in points if p.kind == "contradiction"}
    added = [
        CritiquePoint.model_validate(
            {
                "kind": "contradiction",
                "option": b.option,
                "claim": _fit(f"{ctx.options[b.option]!r} {why}: {b.text}"),
                "strength": 5,
                "citation": b.citation,
            }
        )
        for b, why in barred
        if (b.option, b.citation) not in made
    ]
    return [*added, *points][:MAX_POINTS]


def bind_score(task: ScoreTask, out: ScoreOutput) -> ScoreOutput:
    """A score that knows the binding constraints: 0 with a violation for each option pursued
    now that one rules out or bars as a first move; a minor concern (a condition) for each
    pursued option one only bounds."""
    pursued = {s.option for s in task.solution.stances if s.stance == "pursue"}
    found = bounds(task)
    banned = [b for b in (*found.forbids, *found.not_first) if b.option in pursued]
    limited = [b for b in found.limits if b.option in pursued]
    if not banned and not limited:
        return out
    recorded = {c.id for c in task.constraints}
    violations = [
        Violation.model_validate({"constraint": b.citation, "option": b.option})
        for b in banned
        if b.citation in recorded
    ]
    concerns = [
        Concern.model_validate(
            {
                "option": b.option,
                "grade": "minor",
                "mitigated": False,
                "basis": b.citation,
                "text": _fit(f"{task.options[b.option]!r} is bounded: {b.text}"),
            }
        )
        for b in limited
    ]
    update: dict[str, object] = {
        "violations": [*out.violations, *violations][:8],
        "concerns": [*concerns, *out.concerns][:6],
    }
    if banned:
        b = banned[0]
        update["score"] = 0
        update["reason"] = _fit(
            f"{task.constraint}: {task.options[b.option]!r} is ruled out: {b.text}"
        )
    return out.model_copy(update=update)
