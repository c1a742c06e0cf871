"""The wire a capable model reads (prompt version 2026-12-03.1): options by letter, never by an
engine index; reply schemas sized to the task; a refused proposal told why; the synthesis told
the practicality network's unanswered concerns. Inside the engine options stay 0-based ints, so
result.json and the audit of earlier runs still read."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import jsonschema
import pytest
from pydantic import ValidationError

from hivemind_lab import Limits
from hivemind_lab.agents.prompts import parse_task, render, split_task_block
from hivemind_lab.agents.schemas import (
    BindingConstraint,
    ClusterMember,
    Concern,
    CritiquePoint,
    CritiqueTask,
    DecisionContext,
    Evidence,
    Objection,
    OptionStance,
    PointRef,
    ProposalOutput,
    ProposeTask,
    ReceivedCritique,
    ReviseTask,
    ScoreOutput,
    ScoreTask,
    SolutionView,
    SynthesizeTask,
    Violation,
)
from hivemind_lab.deliberation import theory
from hivemind_lab.deliberation.monitor import standing_concerns, synthesis_task
from hivemind_lab.problems.model import Fact
from hivemind_lab.runs import events
from hivemind_lab.runs.audit import read_records
from hivemind_lab.runs.results import Cluster, ConstraintScore, Solution
from hivemind_lab.wire import OPTION_LETTERS
from tests.support import run_free

OPTIONS = ("Match prices", "Build loyalty", "Sell the chain")
OPTION_KEYS = {"option", "instead", "forbids", "limits", "not_first", "after", "about"}
"""Every field of a task that names options."""
BAN = BindingConstraint(id="constraint.1", text="No sale.", kind="legal", forbids=(2,))
CAP = BindingConstraint(id="constraint.2", text="Capped.", kind="financial", limits=(0,))


def _facts(n: int) -> tuple[Fact, ...]:
    return tuple(Fact(id=f"f.{i}", text=f"Figure {i}.", source="client") for i in range(n))


CONTEXT = DecisionContext(
    problem="What should the grocer do?", options=OPTIONS, facts=_facts(3), constraints=(BAN, CAP)
)
VIEW = SolutionView(
    title="Loyalty",
    recommendations=("Build loyalty.",),
    stances=(
        OptionStance(option=0, stance="avoid"),
        OptionStance(option=1, stance="pursue"),
        OptionStance(option=2, stance="avoid"),
    ),
)
POINT = CritiquePoint(
    kind="contradiction", option=1, claim="Loyalty costs.", strength=3, instead=0, stance="avoid"
)
EVIDENCE = (Evidence(id="kb.1", document_id="d1", text="Loyalty works.", about=(1, 2)),)


def _tasks() -> list[Any]:
    current = ProposalOutput(
        title="Loyalty", stances=list(VIEW.stances), recommendations=["Build."], rationale=""
    )
    return [
        ProposeTask(**dict(CONTEXT), agent_id="t0", evidence=EVIDENCE),
        CritiqueTask(
            **dict(CONTEXT),
            critic_id="t1",
            critic_position=VIEW,
            target_id="t0",
            target=VIEW,
            evidence=EVIDENCE,
        ),
        ReviseTask(
            **dict(CONTEXT),
            agent_id="t0",
            current=current,
            critiques=(ReceivedCritique(critic_id="t1", points=(POINT,)),),
            stubbornness=0.5,
            must_answer=(PointRef(critic_id="t1", point=0, option=1, weight=0.5),),
            evidence=EVIDENCE,
        ),
        ScoreTask(
            **dict(CONTEXT), constraint="legal", solution_id="s0", solution=VIEW, evidence=EVIDENCE
        ),
        SynthesizeTask(
            **dict(CONTEXT),
            cluster_index=0,
            members=(
                ClusterMember(
                    agent_id="t0",
                    title="Loyalty",
                    stances=VIEW.stances,
                    recommendations=("Build.",),
                    rationale="",
                ),
            ),
            objections=(
                Objection(critic_id="t1", target_id="t0", option=1, claim="Costs.", strength=3),
            ),
        ),
    ]


def _option_refs(node: Any, key: str | None = None) -> list[Any]:
    """Every value the task JSON gives an option field (lists flattened)."""
    found: list[Any] = []
    if isinstance(node, dict):
        for k, value in node.items():
            found += _option_refs(value, k)
    elif isinstance(node, list):
        for value in node:
            found += _option_refs(value, key) if key in OPTION_KEYS else _option_refs(value)
    elif key in OPTION_KEYS and node is not None:
        found.append(node)
    return found


def _task_data(content: str) -> dict[str, Any]:
    block = split_task_block(content)
    assert block is not None
    data: dict[str, Any] = json.loads(block.data)
    return data


@pytest.mark.parametrize("task", _tasks(), ids=lambda t: t.task)
def test_a_rendered_request_names_options_by_letter_and_reads_back(task: Any) -> None:
    request = render(task)
    data = _task_data(request.messages[-1].content)
    assert data["options"] == [{"id": k, "label": o} for k, o in zip("ABC", OPTIONS, strict=True)]
    refs = _option_refs(data)
    assert refs, "the task names options"
    assert all(isinstance(r, str) and r in OPTION_LETTERS[: len(OPTIONS)] for r in refs), refs
    assert parse_task(request) == task, "the engine reads its own request back to ints"
    assert task.model_dump(mode="json")["options"] == list(OPTIONS), "results keep labels"


def test_every_option_a_deliberation_sends_is_a_letter_and_the_audit_keeps_ints(
    tmp_path, grocer
) -> None:
    run_free(tmp_path / "r", grocer, sufficiency=1, limits=Limits(max_rounds=2))
    records = list(read_records(tmp_path / "r" / "audit.jsonl"))
    calls = [r for r in records if isinstance(r.event, events.ModelCall)]
    kinds = {c.kind for c in calls}
    assert {"llm.propose", "llm.critique", "llm.revise", "llm.score"} <= kinds
    for call in calls:
        user = next(m for m in call.payload["prompt"] if m["role"] == "user")["content"]
        refs = _option_refs(_task_data(user))
        assert refs, call.kind
        assert all(isinstance(r, str) and r in OPTION_LETTERS for r in refs), (call.kind, refs)
        assert "0-based index" not in user and "option index" not in user
    stances = [
        s for r in records if type(r.event) is events.Proposal for s in r.payload.get("stances", [])
    ]
    assert stances and all(isinstance(s["option"], int) for s in stances), "the audit keeps ints"


@pytest.mark.parametrize(
    ("model", "reply", "field"),
    [
        (OptionStance, {"option": "C", "stance": "avoid"}, "option"),
        (
            CritiquePoint,
            {"kind": "contradiction", "option": "B", "instead": "A", "claim": "x", "strength": 2},
            "option",
        ),
        (Concern, {"option": "C", "grade": "major", "text": "x"}, "option"),
        (Violation, {"constraint": "constraint.1", "option": "C"}, "option"),
    ],
)
def test_a_letter_reply_validates_to_its_index(model: Any, reply: dict, field: str) -> None:
    value = model.model_validate_json(json.dumps(reply))
    assert getattr(value, field) == OPTION_LETTERS.index(reply[field])
    old = model.model_validate({**reply, field: OPTION_LETTERS.index(reply[field])})
    assert old == value, "an earlier run's int reads the same"
    for wrong in ("Z", "AB", 8, -1, True):
        with pytest.raises(ValidationError):
            model.model_validate({**reply, field: wrong})


def test_a_critique_points_instead_letter_is_the_right_option() -> None:
    point = CritiquePoint.model_validate_json(
        '{"kind": "contradiction", "option": "B", "instead": "C", "claim": "x", "strength": 2}'
    )
    assert (point.option, point.instead) == (1, 2)


def _proposal(**fields: Any) -> dict[str, Any]:
    stances = [{"option": letter, "stance": "avoid"} for letter in "ABC"]
    return {"title": "T", "stances": stances, "recommendations": ["R."], "rationale": "", **fields}


def test_the_reply_schema_admits_every_fact_and_constraint_and_no_other() -> None:
    context = CONTEXT.model_copy(update={"facts": _facts(10)})
    task = ProposeTask(**dict(context), agent_id="t0", evidence=())
    schema = render(task).response_format.json_schema  # type: ignore[union-attr]
    every = _proposal(
        facts_used=[f.id for f in context.facts], constraints_used=["constraint.1", "constraint.2"]
    )
    jsonschema.validate(every, schema)
    assert ProposalOutput.model_validate(every).facts_used == [f.id for f in context.facts]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(_proposal(facts_used=["f.99"]), schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(_proposal(constraints_used=["f.1"]), schema)


def test_a_score_reply_has_room_for_strengths() -> None:
    out = ScoreOutput.model_validate(
        {"score": 75, "reason": "r", "strengths": ["Cash covers it.", "A pilot first."]}
    )
    assert out.strengths == ["Cash covers it.", "A pilot first."]
    assert "strengths" in render(_tasks()[3]).messages[-1].content


class _Caller:
    """Answers every proposal with the same reply and keeps the tasks it was asked."""

    def __init__(self, reply: ProposalOutput) -> None:
        self.reply = reply
        self.tasks: list[ProposeTask] = []

    async def ask(self, agent_id: str, task: ProposeTask, output_type: type) -> ProposalOutput:
        self.tasks.append(task)
        return self.reply


class _Agent:
    id = "t0"

    def option_evidence(self, problem: str, options: tuple[str, ...]) -> tuple[Evidence, ...]:
        return ()


def test_a_repeat_proposal_is_told_which_proposal_was_refused_and_why() -> None:
    reply = ProposalOutput(
        title="Loyalty again", stances=list(VIEW.stances), recommendations=["B."], rationale=""
    )
    caller = _Caller(reply)
    out = asyncio.run(
        theory.propose(
            caller,  # type: ignore[arg-type]
            [_Agent()],  # type: ignore[list-item]
            CONTEXT,
            regeneration=1,
            excluded=[VIEW],
            is_repeat=lambda view: True,
        )
    )
    assert out.abstained == ("t0",)
    first, second, *_ = caller.tasks
    assert first.refused == ()
    assert [r.title for r in second.refused] == ["Loyalty again"]
    assert "'Loyalty'" in second.refused[0].reason, "names the vetoed solution it repeats"
    assert '"refused"' in render(second).messages[-1].content


def _score(solution_id: str, *concerns: Concern) -> ConstraintScore:
    return ConstraintScore(
        constraint="financial", solution_id=solution_id, score=70, reason="r", concerns=concerns
    )


def test_the_synthesis_carries_the_unanswered_major_concerns_of_its_members() -> None:
    solution = Solution(
        id="s0",
        agent_id="t0",
        regeneration=0,
        round=1,
        title="Loyalty",
        stances=VIEW.stances,
        recommendations=("Build.",),
        rationale="",
    )
    cluster = Cluster(
        index=0, solution_ids=("s0",), agent_ids=("t0",), representative_id="s0", cohesion=1.0
    )
    major = Concern(option=1, grade="major", text="Cash runs out in month four.")
    scores = [
        _score("s0", major, Concern(grade="minor", text="A cost.")),
        _score("s0", Concern(grade="critical", mitigated=True, text="Answered.")),
        _score("other", Concern(grade="critical", text="Not this cluster's.")),
    ]
    task = synthesis_task(CONTEXT, cluster, {"t0": solution}, [], scores=scores)
    assert [(c.text, c.constraint, c.agent_id, c.option) for c in task.concerns] == [
        (major.text, "financial", "t0", 1)
    ]
    data = _task_data(render(task).messages[-1].content)
    assert data["concerns"][0]["option"] == "B"
    assert "`concerns`" in render(task).messages[-1].content
    assert standing_concerns([], {"s0": "t0"}) == ()


def test_a_constraint_score_of_an_earlier_run_reads_without_concerns() -> None:
    old = {"constraint": "legal", "solution_id": "s0", "score": 80, "reason": "r", "flags": []}
    assert ConstraintScore.model_validate(old).concerns == ()
