"""Binding constraints in the theory network: a solution that pursues now an option the
client's decision forbids, or bars as a first move (``not_first``: allowed only later, after
another option), is contradicted by the engine itself, citing the constraint, whatever model
the critics run on. The practicality side is
`hivemind_lab.deliberation.practicality.apply_binding`.
"""

from __future__ import annotations

from collections.abc import Sequence

from hivemind_lab.agents.schemas import (
    BindingConstraint,
    CritiquePoint,
    DecisionContext,
    SolutionView,
)
from hivemind_lab.wire import MAX_TEXT


def barred_now(constraint: BindingConstraint) -> frozenset[int]:
    """The options ``constraint`` bars as a first move: those it forbids and those it allows
    only later (``not_first``). A solution that pursues one of them now is in breach."""
    return frozenset((*constraint.forbids, *constraint.not_first))


def first_moves_barred(context: DecisionContext) -> frozenset[int]:
    """The options some binding constraint of the decision bars as a first move."""
    return frozenset(o for c in context.constraints for o in barred_now(c))


def forbidden_pursued(view: SolutionView, context: DecisionContext) -> list[tuple[str, int]]:
    """(constraint id, option) for each option the solution pursues now that a binding
    constraint of the decision forbids or bars as a first move (a ``later`` stance on a
    ``not_first`` option is no breach)."""
    pursued = {s.option for s in view.stances if s.stance == "pursue"}
    return [
        (c.id, option) for c in context.constraints for option in sorted(pursued & barred_now(c))
    ]


def _label(option: int, context: DecisionContext) -> str:
    return context.options[option] if option < len(context.options) else f"option {option}"


def binding_points(
    view: SolutionView, context: DecisionContext, points: Sequence[CritiquePoint] = ()
) -> tuple[CritiquePoint, ...]:
    """The critique ``points`` with a decisive contradiction first for every option the target
    pursues now that a binding constraint forbids or bars as a first move, citing the
    constraint (unless the critic already made that point)."""
    made = {(p.citation, p.option) for p in points if p.kind == "contradiction"}
    constraints = {c.id: c for c in context.constraints}
    added = []
    for constraint_id, option in forbidden_pursued(view, context):
        if (constraint_id, option) in made:
            continue
        constraint = constraints[constraint_id]
        label = _label(option, context)
        if option in constraint.forbids:
            claim = f"A binding constraint rules out {label!r}: {constraint.text}"
        else:
            before = (
                f" (not before {_label(constraint.after, context)!r})"
                if constraint.after is not None
                else ""
            )
            claim = (
                f"A binding constraint bars {label!r} as a first move; it may come later"
                f"{before}: {constraint.text}"
            )
        added.append(
            CritiquePoint.model_validate(
                {
                    "kind": "contradiction",
                    "option": option,
                    "claim": claim if len(claim) <= MAX_TEXT else claim[: MAX_TEXT - 1] + "…",
                    "strength": 5,
                    "citation": constraint_id,
                }
            )
        )
    return (*added, *points)
