"""The offline theory agents on an open question (no options named): critique and revision.

With no options, each agent proposes its own course of action from its evidence (the
``course`` field of its proposal). Critics then weigh the target's course against their own, from their own evidence, and a
target adopts a peer's course when the distinct evidence behind it clears its stubbornness —
so agents can come to agree, as they do on given options (before, nobody ever revised and an
open question never converged).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from hivemind_lab.agents.policy.phrasing import CLEAR, SEQUENCE_MARGIN, fit_text, quoting, shorten
from hivemind_lab.agents.policy.reading import Judgement, judge, relevant_fact
from hivemind_lab.agents.schemas import (
    MAX_POINTS,
    CritiquePoint,
    DecisionContext,
    Evidence,
    OwnCourse,
    ReviseTask,
    RevisionOutput,
    SolutionView,
)

OWN = "Own option: "
"""How a recommendation shows an own course to readers (agents read ``course``, not this)."""
NO_EVIDENCE = "No evidence in my slice of the knowledge base bears on "
"""How a course that admits missing evidence begins (for readers: agents read ``backed``)."""
ANOTHER = "My evidence favours another course: "
"""How a critic's claim names the course it favours (agents read the point's ``course``)."""


def course_of(view: SolutionView) -> str | None:
    """The course of action an open-ended solution proposes (None for any other solution)."""
    return view.course.action if view.course is not None else None


def backed_course(view: SolutionView) -> str | None:
    """The solution's course when evidence backs it (a course that admits it has none is no
    course to argue for)."""
    return view.course.action if view.course is not None and view.course.backed else None


def _strength(x: float) -> int:
    return max(1, min(5, 1 + round(4 * min(1.0, abs(x)))))


def critique_own(
    ctx: DecisionContext, position: SolutionView, target: SolutionView, evidence: Sequence[Evidence]
) -> tuple[list[CritiquePoint], str]:
    """Weigh the target's course against the critic's own, from the critic's evidence."""
    # a critic without evidence of its own only weighs the target's course
    theirs, mine = course_of(target), backed_course(position)
    if theirs is None:
        return [], "The solution proposes no course of action to weigh."
    if mine is None or mine == theirs:
        (j,) = judge((theirs,), evidence, ctx.facts)
        if j.score <= CLEAR:
            return [], "My evidence says little about this course."
        point = _point("support", "Agreed on this course: my evidence backs it.", j.score, j)
        return [point], "1 course supported by my evidence."
    j_theirs, j_mine = judge((theirs, mine), evidence, ctx.facts)
    lead = j_mine.score - j_theirs.score
    if lead > SEQUENCE_MARGIN:
        claim = fit_text(f"{ANOTHER}{mine}")
        point = _point("contradiction", claim, lead, j_mine, course=mine)
        return [point], "My evidence favours another course."
    if j_theirs.score > CLEAR:
        point = _point(
            "support", "This course is backed by my evidence too.", j_theirs.score, j_theirs
        )
        return [point], "1 course supported by my evidence."
    return [], "My evidence neither backs nor contradicts this course."


def _point(
    kind: str, claim: str, weight: float, j: Judgement, *, course: str | None = None
) -> CritiquePoint:
    support = j.support
    return CritiquePoint.model_validate(
        {
            "kind": kind,
            "claim": fit_text(claim),
            "strength": _strength(weight),
            "citation": support[0] if support else None,
            "course": course,
        }
    )


def revise_own(task: ReviseTask) -> RevisionOutput:
    """Adopt the peer course whose distinct evidence weighs most, if the engine listed a point
    proposing it (to answer or to weigh: stubbornness is the engine's).

    A passage cited by several critics counts once. Between two lone proposers the one whose
    course sorts first yields, so two agents never swap courses round after round."""
    current = task.current
    mine = course_of(current.view()) or ""
    evidenceless = current.course is not None and not current.course.backed
    backing: dict[str, dict[str, float]] = {}
    critics: dict[str, set[str]] = {}
    listed = {(r.critic_id, r.point) for r in (*task.must_answer, *task.may_weigh)}
    cleared: set[str] = set()
    for received in task.critiques:
        for index, point in enumerate(received.points):
            course = (point.course or "").strip()
            if point.kind != "contradiction" or not course or course == mine:
                continue
            if (received.critic_id, index) in listed:
                cleared.add(course)
            source = point.citation or f"uncited:{received.critic_id}"
            weight = point.strength / 5 * (1.0 if point.citation else 0.5)
            group = backing.setdefault(course, {})
            group[source] = max(group.get(source, 0.0), weight)
            critics.setdefault(course, set()).add(received.critic_id)
    ranked = sorted(
        backing,
        key=lambda c: (
            -len(critics[c]),
            -(1 - math.prod(1 - 0.75 * w for w in backing[c].values())),
            c,
        ),
    )
    claims = [f"{ANOTHER}{c}" for c in ranked]
    for course in ranked:
        weight = 1 - math.prod(1 - 0.75 * w for w in backing[course].values())
        lone = len(critics[course]) == 1 and course > mine and not evidenceless
        if course in cleared and not lone:  # a course with evidence beats none
            recs = [fit_text(f"{OWN}{course}")]
            fact = relevant_fact(course, (course,), list(task.facts))
            if fact is not None:
                recs.append(quoting("Fit it to the client's position: ", fact))
            adopted = [fit_text(f"{ANOTHER}{course}")]
            return RevisionOutput(
                title=shorten(f"{OWN}{course}", 150),
                course=OwnCourse(action=course),
                recommendations=recs,
                rationale=fit_text(
                    f"The problem names no options; adopted a peer's course backed by "
                    f"{len(critics[course])} critic(s) with evidence weight {weight:.2f}."
                ),
                citations=[c for c in backing[course] if not c.startswith("uncited:")][:8],
                facts_used=[fact.id] if fact else [],
                adopted=adopted,
                rejected=[fit_text(c) for c in claims if c not in adopted][:MAX_POINTS],
            )
    return RevisionOutput(
        **current.model_dump(), adopted=[], rejected=[fit_text(c) for c in claims][:MAX_POINTS]
    )
