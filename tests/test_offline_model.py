"""The offline agent model: deterministic, evidence-driven behaviour of each agent task."""

from __future__ import annotations

import json

import pytest

from hivemind_lab.agents.prompts import parse_task, render
from hivemind_lab.agents.schemas import (
    BatchCritiqueTask,
    CritiquePoint,
    CritiqueTarget,
    CritiqueTask,
    Evidence,
    ProposalOutput,
    ProposeTask,
    ReceivedCritique,
    ReviseTask,
    ScoreTask,
    SolutionView,
)
from hivemind_lab.llm.base import ChatMessage, ChatRequest
from hivemind_lab.llm.offline import OfflineAgentModel

PROBLEM = "How should a regional grocer respond to a hard discounter cutting prices?"

PRICING = Evidence(
    id="pricing#0",
    document_id="pricing",
    score=9.0,
    topics=("pricing",),
    text=(
        "Incumbents should not match a discounter's price across the whole range when their "
        "advantage rests on service. Grocers facing a discounter should cut prices only on the "
        "few hundred lines shoppers compare."
    ),
)
SCALE = Evidence(
    id="scale#0",
    document_id="scale",
    score=8.0,
    topics=("cost-leadership",),
    text=(
        "A grocer facing a discounter must lower its cost base through scale purchasing before "
        "any price response. Retail chains should close unprofitable stores to fund lower prices."
    ),
)
CLIENT = Evidence(
    id="cd-1#0",
    document_id="cd-1",
    score=20.0,
    topics=("client-data",),
    text="Stores near discounter openings lost 7.8 percent of sales in the first year of competition.",
)


async def ask(task, seed: int | None = 0) -> dict:
    response = await OfflineAgentModel().complete(render(task, seed=seed))
    return json.loads(response.content)


async def test_same_request_gives_byte_identical_reply():
    task = ProposeTask(agent_id="a", problem=PROBLEM, evidence=(PRICING, SCALE, CLIENT))
    model = OfflineAgentModel()
    first = await model.complete(render(task, seed=3))
    second = await model.complete(render(task, seed=3))
    assert first.content == second.content
    assert first.usage == second.usage
    assert first.usage.prompt_tokens > 100


async def test_proposals_come_from_the_agents_own_evidence_not_client_data():
    a = await ask(ProposeTask(agent_id="a", problem=PROBLEM, evidence=(PRICING, CLIENT)))
    b = await ask(ProposeTask(agent_id="b", problem=PROBLEM, evidence=(SCALE, CLIENT)))
    assert a["recommendations"] != b["recommendations"]
    assert all(r in PRICING.text for r in a["recommendations"])
    assert all(r in SCALE.text for r in b["recommendations"])
    assert a["citations"] == ["pricing#0"]
    assert a["title"].startswith("Pricing plan")


async def test_excluded_solutions_are_not_proposed_again():
    first = await ask(ProposeTask(agent_id="a", problem=PROBLEM, evidence=(PRICING, SCALE)))
    vetoed = SolutionView(title=first["title"], recommendations=tuple(first["recommendations"]))
    again = await ask(
        ProposeTask(agent_id="a", problem=PROBLEM, evidence=(PRICING, SCALE), excluded=(vetoed,))
    )
    assert not set(again["recommendations"]) & set(first["recommendations"])


async def test_critique_cites_the_critics_evidence_and_finds_contradiction_and_gaps():
    target = SolutionView(
        title="t",
        recommendations=("Incumbents should match a discounter's price across the whole range.",),
    )
    position = SolutionView(
        title="mine",
        recommendations=("Retail chains should close unprofitable stores to fund lower prices.",),
    )
    out = await ask(
        CritiqueTask(
            critic_id="c",
            problem=PROBLEM,
            critic_position=position,
            target_id="t",
            target=target,
            evidence=(PRICING,),
        )
    )
    kinds = {p["kind"]: p for p in out["points"]}
    assert kinds["contradiction"]["citation"] == "pricing#0"
    assert kinds["contradiction"]["recommendation"] == 0
    assert kinds["gap"]["claim"] == position.recommendations[0]
    assert all(0 <= p["strength"] <= 1 for p in out["points"])


async def test_batched_critique_says_the_same_as_pairwise():
    position = SolutionView(title="mine", recommendations=(SCALE.text.split(". ")[0] + ".",))
    targets = [
        SolutionView(
            title="t1", recommendations=("Incumbents should match a discounter's price.",)
        ),
        SolutionView(title="t2", recommendations=("Grocers should cut prices on compared lines.",)),
    ]
    pairwise = [
        await ask(
            CritiqueTask(
                critic_id="c",
                problem=PROBLEM,
                critic_position=position,
                target_id=f"t{i}",
                target=t,
                evidence=(PRICING,),
            )
        )
        for i, t in enumerate(targets)
    ]
    batched = await ask(
        BatchCritiqueTask(
            critic_id="c",
            problem=PROBLEM,
            critic_position=position,
            targets=tuple(
                CritiqueTarget(target_id=f"t{i}", target=t, evidence=(PRICING,))
                for i, t in enumerate(targets)
            ),
        )
    )
    assert [c["points"] for c in batched["critiques"]] == [p["points"] for p in pairwise]


def _revise_task(stubbornness: float) -> ReviseTask:
    current = ProposalOutput(
        title="Pricing plan: x",
        recommendations=["Own idea one is kept.", "Own idea two is kept."],
        rationale="because",
        citations=["pricing#0"],
    )
    points = [
        CritiquePoint(kind="gap", claim=f"Critic idea number {i} should be adopted.", strength=0.9)
        for i in range(4)
    ]
    weak = CritiquePoint(kind="gap", claim="A weak idea should be ignored.", strength=0.1)
    return ReviseTask(
        agent_id="a",
        problem=PROBLEM,
        current=current,
        stubbornness=stubbornness,
        critiques=(ReceivedCritique(critic_id="c1", points=(*points, weak)),),
    )


@pytest.mark.parametrize(("stubbornness", "adopted"), [(0.0, 4), (0.5, 2), (1.0, 0)])
async def test_stubbornness_sets_how_many_points_are_adopted(stubbornness, adopted):
    out = await ask(_revise_task(stubbornness))
    assert len(out["adopted"]) == adopted
    assert "A weak idea should be ignored." not in out["recommendations"]
    if stubbornness == 1.0:
        assert out["recommendations"] == ["Own idea one is kept.", "Own idea two is kept."]


async def test_severity_lowers_feasibility_scores_and_red_flags_are_found():
    view = SolutionView(title="t", recommendations=("Launch a price war with below-cost pricing.",))
    scores = []
    for severity in (0.0, 0.5, 1.0):
        out = await ask(
            ScoreTask(
                constraint="legal",
                severity=severity,
                solution_id="s",
                solution=view,
                evidence=(),
                red_flags=("below-cost pricing", "tying"),
                mitigations=(),
            )
        )
        scores.append(out["score"])
        assert out["flags"] == ["below-cost pricing"]
    assert scores[0] > scores[1] > scores[2]


async def test_offline_model_refuses_prompts_that_are_not_agent_tasks():
    request = ChatRequest(messages=(ChatMessage(role="user", content="Tell me a joke"),))
    with pytest.raises(ValueError, match="only answers hivemind agent task"):
        await OfflineAgentModel().complete(request)


def test_task_round_trips_through_the_prompt():
    task = ProposeTask(agent_id="a", problem=PROBLEM, evidence=(PRICING,))
    assert parse_task(render(task)) == task
