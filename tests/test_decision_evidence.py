"""A run whose plans cite no evidence ends ``no_evidence``, decided from the solutions'
citations (structured fields), never from their wording; the same run with citations does not."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from hivemind_lab.agents.prompts import Task
from hivemind_lab.agents.schemas import OwnCourse, ProposalOutput
from hivemind_lab.agents.testing import FunctionModel, answer
from hivemind_lab.deliberation.evidence import (
    recommends_without_evidence,
    rests_on_evidence,
    without_evidence,
)
from hivemind_lab.inputs import Limits
from hivemind_lab.problems import Problem
from hivemind_lab.runs.results import Conclusion, Solution
from tests.support import run


def _uncited(task: Task, seed: int | None) -> BaseModel:
    out = answer(task, seed)
    if isinstance(out, ProposalOutput):  # proposals and revisions
        return out.model_copy(update={"citations": []})
    return out


def test_plans_that_cite_nothing_end_no_evidence(tmp_path: Path, grocer: Problem) -> None:
    limits = Limits(max_rounds=2, max_regenerations=0)
    bare = run(tmp_path / "bare", grocer, model=FunctionModel(_uncited), limits=limits)
    cited = run(tmp_path / "cited", grocer, model=FunctionModel(answer), limits=limits)
    assert bare.status == "no_evidence"
    assert cited.status != "no_evidence"


def _solution(**fields: object) -> Solution:
    values: dict[str, object] = {
        "id": "s",
        "agent_id": "a",
        "regeneration": 0,
        "round": 0,
        "title": "t",
        "recommendations": ("r",),
        "rationale": "",
        **fields,
    }
    return Solution.model_validate(values)


def test_an_own_course_marked_unbacked_is_no_evidence_even_with_citations() -> None:
    backed = _solution(citations=("kb.1",), course=OwnCourse(action="Do x."))
    unbacked = _solution(citations=("kb.1",), course=OwnCourse(action="Do x.", backed=False))
    assert rests_on_evidence(backed) and not rests_on_evidence(unbacked)
    assert without_evidence([unbacked, _solution()]) and not without_evidence([unbacked, backed])
    assert not without_evidence([])


def _conclusion(rank: int, *solution_ids: str) -> Conclusion:
    return Conclusion(
        rank=rank,
        title="t",
        recommendations=("r",),
        agents=solution_ids,
        solution_ids=solution_ids,
        justifications=(),
        combined_rationale="",
        scores={},
        mean_score=0.0,
    )


def test_a_recommended_conclusion_without_evidence_is_no_evidence_whatever_a_minority_found() -> (
    None
):
    """Most agents found nothing (their own course is unbacked) and one agent's maxim is backed:
    the conclusion the run would recommend rests on nothing, so the run has no plan."""
    maxim = _solution(id="m", citations=("kb.1",), course=OwnCourse(action="Do x."))
    nothing = [
        _solution(
            id=f"n{k}", citations=(), course=OwnCourse(action="Gather evidence.", backed=False)
        )
        for k in range(3)
    ]
    solutions = [maxim, *nothing]
    assert not without_evidence(solutions)  # one solution rests on evidence
    unbacked_first = [_conclusion(1, "n0", "n1", "n2"), _conclusion(2, "m")]
    backed_first = [_conclusion(1, "m", "n0"), _conclusion(2, "n1", "n2")]
    assert recommends_without_evidence(unbacked_first, solutions)
    assert not recommends_without_evidence(backed_first, solutions)
    assert not recommends_without_evidence([], solutions)
