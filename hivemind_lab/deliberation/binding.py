"""Binding constraints in the theory network: a solution that pursues an option the client's
decision forbids is contradicted by the engine itself, citing the constraint, whatever model
the critics run on. The practicality side is `hivemind_lab.deliberation.practicality.apply_binding`.
"""

from __future__ import annotations

from collections.abc import Sequence

from hivemind_lab.agents.schemas import MAX_TEXT, CritiquePoint, DecisionContext, SolutionView


def forbidden_pursued(view: SolutionView, context: DecisionContext) -> list[tuple[str, int]]:
    """(constraint id, option) for each option the solution pursues now that a binding
    constraint of the decision forbids."""
    pursued = {s.option for s in view.stances if s.stance == "pursue"}
    return [
        (c.id, option) for c in context.constraints for option in sorted(pursued & set(c.forbids))
    ]


def binding_points(
    view: SolutionView, context: DecisionContext, points: Sequence[CritiquePoint] = ()
) -> tuple[CritiquePoint, ...]:
    """The critique ``points`` with a decisive contradiction first for every forbidden option
    the target pursues, citing the constraint (unless the critic already made that point)."""
    made = {(p.citation, p.option) for p in points if p.kind == "contradiction"}
    texts = {c.id: c.text for c in context.constraints}
    added = []
    for constraint_id, option in forbidden_pursued(view, context):
        if (constraint_id, option) in made:
            continue
        label = context.options[option] if option < len(context.options) else f"option {option}"
        claim = f"A binding constraint rules out {label!r}: {texts[constraint_id]}"
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
