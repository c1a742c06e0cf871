"""Prompts laid out for prefix reuse, and the caller's slot pinning and reuse accounting.

A server that caches prompt prefixes (llama-server's slots, hosted prefix caches) re-reads only
what follows the longest prefix a request shares with the one before it. The pure tests render
one agent's propose, critique and revise tasks and check that their text is the same up to the
part particular to each call: the system text, the decision (problem, options, facts,
constraints) and its rules, the role's text and rules and the agent's evidence; and that tasks
of different roles share the system text and the decision. The caller tests watch requests on
a function model. What a real llama-server reuses is read from a real local run in
tests/test_local_llm.py (test_real_deliberation_on_the_bundled_model).
"""

from __future__ import annotations

import json

from hivemind_lab.agents.caller import AgentCaller
from hivemind_lab.agents.prompts import parse_task, render, split_task_block
from hivemind_lab.agents.schemas import (
    BatchCritiqueTask,
    BindingConstraint,
    CritiqueOutput,
    CritiqueTarget,
    CritiqueTask,
    DecisionContext,
    Evidence,
    OptionStance,
    ProposalOutput,
    ProposeTask,
    ReceivedCritique,
    ReviseTask,
    RevisionOutput,
    ScoreOutput,
    ScoreTask,
    SolutionView,
    SynthesizeTask,
)
from hivemind_lab.agents.testing import TestModel
from hivemind_lab.agents.usage import CallKind, CallPlan, CallRecord
from hivemind_lab.llm.base import ChatRequest, ChatResponse
from hivemind_lab.problems.model import Fact

CONTEXT = DecisionContext(
    problem="A regional grocer faces a hard discounter entering its towns. Match or not?",
    options=("Match the discounter's prices", "Build a loyalty programme", "Sell the chain"),
    facts=(
        Fact(id="client.1", text="Margins are 2.1% of sales.", source="client"),
        Fact(id="market.1", text="The discounter opened 14 stores last year.", source="market"),
    ),
    exclusive=True,
    constraints=(
        BindingConstraint(
            id="constraint.1", text="Below-cost pricing is unlawful.", kind="legal", forbids=(0,)
        ),
    ),
)


def _evidence(agent: str) -> tuple[Evidence, ...]:
    return tuple(
        Evidence(
            id=f"{agent}-p{i}",
            document_id=f"{agent}-doc",
            text=f"Passage {i} of {agent}: incumbents that avoid price wars keep their margins.",
            title=f"Evidence of {agent}",
            about=(i % 3,),
        )
        for i in range(4)
    )


def _view(title: str) -> SolutionView:
    return SolutionView(
        title=title,
        recommendations=(f"{title} now.",),
        stances=(OptionStance(option=1, stance="pursue"), OptionStance(option=0, stance="avoid")),
    )


def _tasks(agent: str, peer: str) -> dict[str, ProposeTask | CritiqueTask | ReviseTask]:
    own = _evidence(agent)
    current = ProposalOutput(
        title="Loyalty first",
        stances=[OptionStance(option=1, stance="pursue")],
        recommendations=["Build a loyalty programme."],
        rationale="From the evidence.",
    )
    return {
        "propose": ProposeTask(**dict(CONTEXT), agent_id=agent, evidence=own),
        "critique": CritiqueTask(
            **dict(CONTEXT),
            critic_id=agent,
            critic_position=_view("Loyalty first"),
            target_id=peer,
            target=_view("Sell the chain"),
            evidence=own,
        ),
        "critique_batch": BatchCritiqueTask(
            **dict(CONTEXT),
            critic_id=agent,
            critic_position=_view("Loyalty first"),
            targets=(CritiqueTarget(target_id=peer, target=_view("Sell the chain")),),
            evidence=own,
        ),
        "revise": ReviseTask(
            **dict(CONTEXT),
            agent_id=agent,
            current=current,
            critiques=(ReceivedCritique(critic_id=peer, points=()),),
            stubbornness=0.5,
            evidence=own,
        ),
    }


def _text(request: ChatRequest) -> str:
    """The messages in order, as a chat template lays them out (one prefix)."""
    return "\n".join(f"<{m.role}>\n{m.content}" for m in request.messages)


def _common(a: str, b: str) -> int:
    """Length of the longest common prefix of two texts."""
    pairs = zip(a, b, strict=False)
    return next((i for i, (x, y) in enumerate(pairs) if x != y), min(len(a), len(b)))


def _end_of(text: str, part: str) -> int:
    at = text.index(part)
    return at + len(part)


def test_an_agents_calls_share_their_prefix_through_its_evidence():
    prompts = {kind: _text(render(task)) for kind, task in _tasks("agent-0", "agent-1").items()}
    last_passage = _evidence("agent-0")[-1].text
    for kind, text in prompts.items():
        shared = _common(prompts["propose"], text)
        # The whole decision and the agent's evidence lie inside the shared prefix …
        for part in (
            CONTEXT.problem,
            *CONTEXT.options,
            *(f.text for f in CONTEXT.facts),
            CONTEXT.constraints[0].text,
            last_passage,
        ):
            assert _end_of(prompts["propose"], part) <= shared, (kind, part)
        # … and the prompts part only after it: the rest is the call's own.
        if kind != "propose":
            assert shared < len(text)


def test_agents_share_the_decision_but_not_each_others_evidence():
    mine = _text(render(_tasks("agent-0", "agent-1")["propose"]))
    theirs = _text(render(_tasks("agent-1", "agent-0")["propose"]))
    shared = _common(mine, theirs)
    assert _end_of(mine, CONTEXT.constraints[0].text) <= shared
    assert shared < mine.index(_evidence("agent-0")[0].text)


def test_a_constraint_agents_scores_share_their_prefix_through_the_constraint():
    first, second = _text(render(_score("s1", "l1"))), _text(render(_score("s2", "l2")))
    shared = _common(first, second)
    assert _end_of(first, "counsel review") <= shared
    assert _end_of(first, CONTEXT.constraints[0].text) <= shared


def _score(solution: str, passage: str) -> ScoreTask:
    return ScoreTask(
        **dict(CONTEXT),
        constraint="legal",
        solution_id=solution,
        solution=_view(solution),
        evidence=(Evidence(id=passage, document_id="legal", text=f"Law {passage}."),),
        red_flags=("below-cost pricing",),
        mitigations=("counsel review",),
    )


def test_every_role_shares_the_decision_and_parts_after_it():
    # A constraint agent's or the monitor's first call on a slot a theory agent used last
    # re-reads only what follows the decision.
    prompts = {
        "theory": _text(render(_tasks("agent-0", "agent-1")["revise"])),
        "practicality": _text(render(_score("s1", "l1"))),
        "monitor": _text(render(SynthesizeTask(**dict(CONTEXT), cluster_index=0, members=()))),
    }
    decision_end = _end_of(prompts["theory"], CONTEXT.constraints[0].text)
    for role, text in prompts.items():
        for other, other_text in prompts.items():
            if other == role:
                continue
            shared = _common(text, other_text)
            assert decision_end <= shared, (role, other)
            # The roles part right after the decision and its rules, before any evidence.
            assert shared < text.index("<task>"), (role, other)


def test_a_recorded_prompt_splits_and_joins_back_unchanged():
    for task in (*_tasks("agent-0", "agent-1").values(), _score("s1", "l1")):
        content = render(task).messages[-1].content
        block = split_task_block(content)
        assert block is not None
        assert block.join(block.data) == content
        # What a reader edits (the chat export's redaction) lands in the decision block.
        edited = json.loads(block.data) | {"problem": "[redacted]"}
        rejoined = block.join(json.dumps(edited))
        assert rejoined.index("[redacted]") < rejoined.index("</decision>")
        again = split_task_block(rejoined)
        assert again is not None and json.loads(again.data) == edited


def test_a_prompt_of_the_one_block_layout_still_reads():
    task = _tasks("agent-0", "agent-1")["propose"]
    content = f"Rules.\n\n<task>\n{task.model_dump_json(indent=1)}\n</task>\n\nPropose."
    block = split_task_block(content)
    assert block is not None and block.between is None
    assert ProposeTask.model_validate_json(block.data) == task
    assert block.join(block.data) == content


def test_every_task_reads_back_from_its_reordered_block():
    tasks = [
        *_tasks("agent-0", "agent-1").values(),
        SynthesizeTask(**dict(CONTEXT), cluster_index=0, members=()),
    ]
    for task in tasks:
        assert parse_task(render(task)) == task


# -- the caller ------------------------------------------------------------------------------


class ReusingModel(TestModel):
    """The content-free model, reporting the prompt's first 40 tokens as reused from cache."""

    async def complete(self, request: ChatRequest) -> ChatResponse:
        response = await super().complete(request)
        usage = response.usage.model_copy(update={"cached_prompt_tokens": 40})
        return response.model_copy(update={"usage": usage})


async def test_the_caller_pins_each_actor_and_sums_what_was_reused():
    model = ReusingModel()
    caller = AgentCaller(model)
    tasks = _tasks("agent-0", "agent-1")
    await caller.ask("agent-0", tasks["propose"], ProposalOutput)
    await caller.ask("agent-0", tasks["critique"], CritiqueOutput)
    await caller.ask("agent-1", _tasks("agent-1", "agent-0")["revise"], RevisionOutput)
    score = ScoreTask(
        **dict(CONTEXT),
        constraint="legal",
        solution_id="s1",
        solution=_view("s1"),
        evidence=(),
    )
    await caller.ask("constraint-legal", score, ScoreOutput)
    assert [r.affinity for r in model.requests] == [
        "agent-0",
        "agent-0",
        "agent-1",
        "constraint-legal",
    ]
    # The key routes; it is no part of what the model reads or of the response cache's key.
    pinned = model.requests[0]
    assert pinned.cache_key(backend="b", model="m") == pinned.model_copy(
        update={"affinity": None}
    ).cache_key(backend="b", model="m")
    usage = caller.usage
    assert usage.calls == 4
    assert usage.cached_prompt_tokens == 4 * 40
    assert usage.processed_prompt_tokens == usage.prompt_tokens - 4 * 40


async def test_the_call_meter_counts_calls_and_tokens_as_they_finish():
    from hivemind_lab.agents.usage import CallMeter

    seen: list[tuple[int, int]] = []
    meter = CallMeter(TestModel(), lambda m: seen.append((m.calls, m.usage.total_tokens)))
    caller = AgentCaller(meter)
    tasks = _tasks("agent-0", "agent-1")
    await caller.ask("agent-0", tasks["propose"], ProposalOutput)
    await caller.ask("agent-0", tasks["critique"], CritiqueOutput)
    assert [calls for calls, _ in seen] == [1, 2]
    assert seen[-1][1] == caller.usage.tokens > seen[0][1]
    assert meter.tokens_per_second() > 0


def test_planned_calls_of_a_generation():
    from hivemind_lab.agents.usage import planned_calls

    # 2 proposals, a round of 2 critiques and 2 revisions, 2 x 2 scores, 2 rationales at most.
    assert planned_calls(2, 2, max_rounds=1) == 12
    assert planned_calls(6, 5, max_rounds=2, critique_mode="batched") == 6 + 2 * 12 + 30 + 6


def test_usage_reads_a_result_written_before_reuse_was_counted():
    from hivemind_lab.agents.usage import UsageSummary

    old = UsageSummary.model_validate({"calls": 2, "prompt_tokens": 100, "tokens": 120})
    assert old.cached_prompt_tokens == 0
    assert old.processed_prompt_tokens == 100


# -- the progress estimate ----------------------------------------------------------------------


def _simulated_run(
    plan: CallPlan, cost: dict[CallKind, int], rate: float, *, vetoed: int = 0
) -> list[tuple[tuple[str, int] | None, CallRecord, float]]:
    """The calls of a run in phase order, ``vetoed`` generations regenerated after a veto and
    then one that converges, each call finishing after its tokens at ``rate`` tokens/s:
    (the phase reached just before it or None, its record, the time it finishes)."""
    n, pairs = plan.n_agents, plan.n_agents * (plan.n_agents - 1)
    rounds: list[tuple[CallKind, int, tuple[str, int]]] = []
    for r in range(plan.max_rounds):
        rounds += [("critique", pairs, ("revise", r)), ("revise", n, ("monitor", r + 1))]
    order: list[tuple[CallKind, int, tuple[str, int]]] = []
    for g in range(vetoed + 1):
        order += [("propose", n, ("monitor", 0)), *rounds]
        after_score = ("generate", 0) if g < vetoed else ("synthesize", 0)
        order.append(("score", plan.n_constraints * n, after_score))
    order.append(("synthesize", n, ("done", 0)))
    steps: list[tuple[tuple[str, int] | None, CallRecord, float]] = []
    clock, reached = 0.0, ("generate", 0)
    for kind, calls, next_phase in order:
        for i in range(calls):
            clock += cost[kind] / rate
            steps.append((reached if i == 0 else None, CallRecord(kind, cost[kind], 0), clock))
        reached = next_phase
    return steps


def test_time_left_follows_the_tokens_of_the_calls_to_come_not_the_calls_per_second():
    """On a server of steady speed whose calls differ ~10x in cost by kind, the estimate is
    the true time left once every kind still to come has been seen, and close to it while
    only the closing rationales are new (after a vetoed generation); calls per second (the old estimate) is off by over 2x on the same run."""
    from hivemind_lab.agents.usage import ProgressEstimate

    plan = CallPlan(n_agents=3, n_constraints=2, max_rounds=2)
    cost: dict[CallKind, int] = {
        "propose": 3000,
        "critique": 300,
        "revise": 1200,
        "score": 600,
        "synthesize": 400,
    }
    steps = _simulated_run(plan, cost, rate=100.0, vetoed=1)
    now = [0.0]
    estimate = ProgressEstimate(plan, clock=lambda: now[0])
    estimate.began()
    end = steps[-1][2]
    seen: set[str] = set()
    errors: list[float] = []
    old_errors: list[float] = []
    regenerated = False  # the veto is news to the estimate; the run after it is not
    for i, (reached, record, finished_at) in enumerate(steps):
        if reached is not None:
            estimate.reached(*reached)
            regenerated = regenerated or (i > 0 and reached[0] == "generate")
        now[0] = finished_at
        estimate.finished(record)
        seen.add(str(record.kind))
        true_left = end - finished_at
        left = estimate.left()
        assert estimate.total == len(estimate.records) + sum(left.values())
        if true_left <= 0 or not regenerated:
            continue
        got = estimate.seconds_left()
        assert got is not None
        errors.append(abs(got - true_left) / end)
        if "synthesize" in seen or all(k in seen for k, n in left.items() if n):
            assert abs(got - true_left) <= 1e-6 * true_left
        old = sum(left.values()) / (len(estimate.records) / finished_at)
        old_errors.append(abs(old - true_left) / end)
    assert len(errors) >= 10
    assert max(errors) < 0.05  # 0.0425: the closing rationales, costed at the mean of all calls
    assert max(old_errors) > 0.2  # 0.28 in the first round of the regenerated set


def test_tokens_per_second_count_what_the_server_read_or_wrote_not_what_it_reused():
    from hivemind_lab.agents.usage import ProgressEstimate
    from hivemind_lab.llm.base import Usage

    request = render(_tasks("agent-0", "agent-1")["critique"])
    record = CallRecord.of(
        request, Usage(prompt_tokens=1000, cached_prompt_tokens=800, completion_tokens=50)
    )
    assert (record.kind, record.processed, record.generated) == ("critique", 200, 50)
    now = [0.0]
    estimate = ProgressEstimate(CallPlan(2, 2, 1), clock=lambda: now[0])
    estimate.began()
    for _ in range(4):
        estimate.finished(record)
    now[0] = 10.0
    assert estimate.tokens_per_second() == 4 * 250 / 10  # not 4 * 1050 / 10


def test_the_planned_total_drops_calls_that_will_no_longer_happen():
    from hivemind_lab.agents.usage import ProgressEstimate

    plan = CallPlan(n_agents=2, n_constraints=2, max_rounds=3)
    estimate = ProgressEstimate(plan)
    assert estimate.total == 2 + 3 * (2 + 2) + 4 + 2
    kinds: tuple[CallKind, ...] = ("propose", "propose")
    for kind in kinds:
        estimate.finished(CallRecord(kind, 100, 10))
    estimate.reached("critique", 0)  # proposals done
    kinds = ("critique", "critique", "revise", "revise")
    for kind in kinds:
        estimate.finished(CallRecord(kind, 100, 10))
    # The monitor halts after round 1: rounds 2 and 3 are not made.
    estimate.reached("score", 1, distinct=1)
    assert estimate.left() == {"score": 4, "synthesize": 1}
    assert estimate.total == 6 + 4 + 1
    for _ in range(4):
        estimate.finished(CallRecord("score", 100, 10))
    assert estimate.total == 11
    # Vetoed out: no rationale is written, the bar ends full at 10 of 10.
    estimate.reached("done", 1, distinct=1)
    assert estimate.left() == {}
    assert estimate.total == len(estimate.records) == 10
    # A veto with a regeneration left plans a new generation instead.
    estimate.reached("generate", 0, distinct=1)
    assert estimate.total == 10 + 2 + 3 * 4 + 4 + 2


def test_a_kind_not_yet_seen_costs_what_the_calls_extending_a_prefix_cost():
    from hivemind_lab.agents.usage import seconds_left

    proposals = [CallRecord("propose", 3000, 200), CallRecord("propose", 3400, 200)]
    critiques = [CallRecord("critique", 400, 400, reused=2600)]
    # The revisions to come extend their agents' prefixes, as the critique did, rather than
    # re-read everything as the proposals did: 2 x 800 tokens at 100 tokens/s.
    records = proposals + critiques
    elapsed = sum(r.work for r in records) / 100
    assert seconds_left(records, {"revise": 2}, elapsed) == 2 * 800 / 100
    # Without a prefix cache every finished call counts.
    assert seconds_left(proposals, {"revise": 2}, 68.0) == 2 * 3400 / 100
