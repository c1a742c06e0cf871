"""Batched scoring: one call per constraint agent for a whole solution set.

What must hold whatever model answers: every solution gets its own score (a reply that leaves
one out is asked again, never silently short), the arithmetic after the model is the one of
per-solution scoring, each agent reads the set in its own rotation, and the call count falls
from C x S to C.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from hivemind_lab import Limits
from hivemind_lab.agents.caller import AgentCaller
from hivemind_lab.agents.prompts import render
from hivemind_lab.agents.schemas import (
    BatchScoreOutput,
    BatchScoreTask,
    ScoreItem,
    ScoreOutput,
    ScoreTask,
    SolutionScore,
    SolutionView,
)
from hivemind_lab.agents.testing import FunctionModel
from hivemind_lab.agents.usage import planned_calls
from hivemind_lab.deliberation import practicality
from hivemind_lab.deliberation.practicality import rotation
from hivemind_lab.runs.audit import read_records
from hivemind_lab.runs.events import ModelCall
from hivemind_lab.runs.results import DeliberationResult
from tests.support import PRACTICALITY, run_free


def _view(title: str, option: int = 0) -> SolutionView:
    return SolutionView.model_validate(
        {
            "title": title,
            "recommendations": [f"{title}: do it."],
            "stances": [{"option": option, "stance": "pursue"}],
        }
    )


SOLUTIONS = [("s1", _view("Open the store", 0)), ("s2", _view("Cut prices", 1))]
CONTEXT = {"problem": "Which move?", "options": ("Open a store", "Cut prices")}


def _agents() -> list[practicality.ConstraintAgent]:
    names = practicality.resolve_constraints(PRACTICALITY, "enterprise")
    return practicality.build_constraint_agents(PRACTICALITY, names)


def _score_by_title(task: object, seed: int | None) -> ScoreOutput | BatchScoreOutput:
    """A model whose score depends only on the solution it judges: 80 for a store, 40 else."""

    def one(view: SolutionView) -> dict[str, object]:
        return {"score": 75 if "store" in view.title else 25, "reason": "Judged alone."}

    if isinstance(task, BatchScoreTask):
        return BatchScoreOutput(
            scores=[
                SolutionScore.model_validate({"solution_id": i.solution_id, **one(i.solution)})
                for i in task.solutions
            ]
        )
    assert isinstance(task, ScoreTask)
    return ScoreOutput.model_validate(one(task.solution))


def _scores(mode: str, model: object) -> list[tuple[str, str, int]]:
    from hivemind_lab.agents.schemas import DecisionContext

    caller = AgentCaller(model)  # type: ignore[arg-type]
    out = asyncio.run(
        practicality.score(
            caller,
            _agents(),
            SOLUTIONS,
            severity=0.5,
            context=DecisionContext.model_validate(CONTEXT),
            mode=mode,  # type: ignore[arg-type]
        )
    )
    return [(s.constraint, s.solution_id, s.score) for s in out]


def test_batched_scores_equal_per_solution_scores_in_the_same_order():
    model = FunctionModel(_score_by_title)
    per = _scores("per_solution", model)
    calls_after_per = model.calls
    batched = _scores("batched", model)
    assert batched == per
    n_agents = len(_agents())
    assert calls_after_per == n_agents * len(SOLUTIONS)
    assert model.calls - calls_after_per == n_agents


def test_a_reply_that_leaves_a_solution_out_is_asked_again_with_the_error():
    seen: list[str] = []

    def forgetful(task: object, seed: int | None) -> BatchScoreOutput:
        assert isinstance(task, BatchScoreTask)
        ids = [i.solution_id for i in task.solutions]
        keep = ids if seen.count(task.constraint) else ids[:1]
        seen.append(task.constraint)
        return BatchScoreOutput(
            scores=[SolutionScore(solution_id=i, score=50, reason="r") for i in keep]
        )

    model = FunctionModel(forgetful)
    scores = _scores("batched", model)
    assert {s[1] for s in scores} == {"s1", "s2"}
    n_agents = len(_agents())
    assert model.calls == 2 * n_agents  # each agent asked once more
    assert len(scores) == n_agents * 2


def test_the_batch_reply_schema_takes_each_solution_id_once():
    task = BatchScoreTask.model_validate(
        {
            **CONTEXT,
            "constraint": "legal",
            "solutions": [ScoreItem(solution_id=i, solution=v).model_dump() for i, v in SOLUTIONS],
            "evidence": [],
        }
    )
    schema = render(task).response_format.json_schema  # type: ignore[union-attr]
    scores = schema["properties"]["scores"]
    assert scores["minItems"] == scores["maxItems"] == 2
    ref = scores["items"]["$ref"].rsplit("/", 1)[-1]
    assert schema["$defs"][ref]["properties"]["solution_id"]["enum"] == ["s1", "s2"]
    with pytest.raises(ValueError, match="missing: s2"):
        BatchScoreOutput.model_validate(
            {"scores": [{"solution_id": "s1", "score": 50, "reason": "r"}]},
            context={"solution_ids": ["s1", "s2"]},
        )
    with pytest.raises(ValueError, match="repeated: s1"):
        BatchScoreOutput.model_validate(
            {"scores": [{"solution_id": "s1", "score": 50, "reason": "r"}] * 2},
            context={"solution_ids": ["s1", "s2"]},
        )


def test_each_constraint_agent_reads_the_set_in_its_own_rotation():
    firsts: list[str] = []

    def record(task: object, seed: int | None) -> BatchScoreOutput:
        assert isinstance(task, BatchScoreTask)
        firsts.append(task.solutions[0].solution_id)
        return _score_by_title(task, seed)  # type: ignore[return-value]

    _scores("batched", FunctionModel(record))
    assert firsts[:2] == ["s1", "s2"]
    assert set(firsts) == {"s1", "s2"}
    assert rotation([1, 2, 3], 4) == [2, 3, 1]
    assert rotation([], 3) == []


def test_a_batched_run_scores_each_set_in_one_call_per_constraint_agent(tmp_path, grocer):
    limits = Limits(max_rounds=1)
    per = run_free(tmp_path / "p", grocer, sufficiency=1, limits=limits)
    batch = run_free(
        tmp_path / "b",
        grocer,
        sufficiency=1,
        limits=limits,
        score_mode="batched",
    )

    def kinds(path: Path) -> list[str]:
        records = read_records(path / "audit.jsonl")
        return [r.kind for r in records if isinstance(r.event, ModelCall)]

    def calls_a_set(result: DeliberationResult) -> int:
        return sum(len(v.per_constraint) for v in result.vetoes)

    assert "llm.score_batch" not in kinds(tmp_path / "p")
    assert kinds(tmp_path / "b").count("llm.score") == 0
    assert kinds(tmp_path / "b").count("llm.score_batch") == calls_a_set(batch)
    assert kinds(tmp_path / "p").count("llm.score") > calls_a_set(per)  # several solutions
    manifest = json.loads((tmp_path / "b" / "manifest.json").read_text())
    assert manifest["request"]["score_mode"] == "batched"


def test_the_plan_counts_batched_scoring_calls():
    per = planned_calls(3, 5, max_rounds=2, critique_mode="batched")
    batched = planned_calls(3, 5, max_rounds=2, critique_mode="batched", score_mode="batched")
    assert per - batched == 5 * 3 - 5


def test_a_baseline_keeps_back_the_calls_scoring_its_winners_takes():
    from hivemind_lab.agents.usage import scoring_calls

    assert scoring_calls(5, 2, "per_solution") == 10
    assert scoring_calls(5, 2, "batched") == 5
    assert scoring_calls(5, 9, "batched") == 10  # more winners than one call holds
