"""Whether a run's plans rest on evidence, read from structured fields only (never wording).

A plan rests on evidence when its solution cites passages of the agent's knowledge and, on an
open question, its own course is marked as backed by them (`OwnCourse.backed`). When no final
solution does, or when none of the solutions behind the recommended conclusion does, the run
ends ``no_evidence``: whatever most agents agreed on is their own maxim, not a conclusion from
the knowledge base, and a report must not say it converged on a plan.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from hivemind_lab.runs.results import Conclusion, Solution


def rests_on_evidence(solution: Solution) -> bool:
    """The solution cites passages, and an own course (open question) is backed by them."""
    if not solution.citations:
        return False
    return solution.course is None or solution.course.backed


def without_evidence(solutions: Iterable[Solution]) -> bool:
    """No solution of the set rests on evidence (an empty set is not judged here)."""
    listed = list(solutions)
    return bool(listed) and not any(rests_on_evidence(s) for s in listed)


def recommends_without_evidence(
    conclusions: Sequence[Conclusion], solutions: Iterable[Solution]
) -> bool:
    """The recommended conclusion (ranked first) rests on no evidence: none of its solutions
    does, so the run has no plan to recommend, whatever a smaller conclusion found."""
    if not conclusions:
        return False
    members = set(conclusions[0].solution_ids)
    return without_evidence(s for s in solutions if s.id in members)
