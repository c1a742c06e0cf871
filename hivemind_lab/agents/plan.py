"""A run's bill before its first call: calls, prompt and completion tokens and cost.

Beside the agents, not in the deliberation package: it changes no rule of a run, so it is no
part of the engine's fingerprint (`hivemind_lab.deliberation.rules`).

The plan reads what the run would be given (the problem's decision, the slicing, the
constraint agents, the limits and the critique mode) and calls no model. Prompt tokens start
from the real requests the first phase sends: every agent's proposal task and every constraint
agent's score task are rendered as the engine renders them and counted with the run's token
counter. What later calls add to those (the peers' solutions a critique reads, the critiques a
revision answers) and what a reply costs are typical sizes of a capable model's replies,
measured on the recorded runs of 2026-12-03 (`tests/fixtures/recorded/`): the model decides
those, so they are an estimate.

The expected run halts after ``min_rounds`` rounds (at least one) with no veto, and
synthesises one rationale per conclusion the sufficiency allows; the most a run may make is
every round of every attempt (``max_rounds`` and ``max_regenerations``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hivemind_lab.agents.prompts import render
from hivemind_lab.agents.schemas import (
    MAX_SCORED,
    MAX_TARGETS,
    ProposeTask,
    ScoreTask,
    SolutionView,
)
from hivemind_lab.agents.usage import CallKind
from hivemind_lab.inputs import DeliberationRequest, Limits
from hivemind_lab.llm.endpoint import Prices
from hivemind_lab.models import Frozen
from hivemind_lab.tokens import default_counter

if TYPE_CHECKING:  # the runner's knowledge, read here, never built
    from hivemind_lab.deliberation.state import Knowledge

REPLY_TOKENS: dict[str, int] = {
    "propose": 930,
    "critique": 780,
    "critique_target": 640,
    "revise": 1300,
    "score": 760,
    "synthesize": 730,
}
"""Completion tokens of one reply (a batched critique: per target), as a capable model wrote
them on the recorded runs."""
SOLUTION_TOKENS = 700
"""Prompt tokens a peer's solution adds to a critique or revision task (its title, stances,
recommendations and rationale as the task shows them)."""
CRITIQUE_TOKENS = 850
"""Prompt tokens one received critique adds to a revision task."""
SOLUTION_VIEW_TOKENS = 250
BATCH_SOLUTION_TOKENS = SOLUTION_VIEW_TOKENS + 300
"""Prompt tokens each further solution adds to a batched score task: its view, its passage ids
and the passages no earlier solution of the batch retrieved."""
"""Prompt tokens a solution's recommendations add to a score task beyond the rendered stand-in."""


class KindPlan(Frozen):
    """The planned calls of one kind."""

    kind: CallKind
    calls: int
    prompt_tokens: int
    completion_tokens: int


class RunPlan(Frozen):
    """What a run is expected to cost before it starts (`plan_run`)."""

    calls: int
    """Expected calls: ``min_rounds`` rounds (at least one), no veto."""
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float | None = None
    """At the prices given (None: no price given)."""
    most_calls: int
    """Every round of every attempt: ``max_rounds`` × (1 + ``max_regenerations``)."""
    most_tokens: int
    rounds: int
    """Critique-and-revise rounds the expected run makes."""
    agents: int
    constraints: int
    critique_mode: str
    score_mode: str = "per_solution"
    by_kind: tuple[KindPlan, ...]

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def lines(self) -> list[str]:
        """The plan in words, one line each (the CLI prints them)."""
        cost = f", ${self.cost_usd:,.2f}" if self.cost_usd is not None else " (no price given)"
        out = [
            f"plan: {self.calls} calls, {self.prompt_tokens:,} prompt and "
            f"{self.completion_tokens:,} completion tokens{cost}",
            f"  {self.agents} theory agents, {self.constraints} constraint agents, "
            f"{self.rounds} round(s), {self.critique_mode} critique, "
            f"{self.score_mode.replace('_', ' ')} scoring, no veto",
        ]
        out += [
            f"  {k.kind:<15} {k.calls:>4} calls  {k.prompt_tokens:>9,} prompt  "
            f"{k.completion_tokens:>8,} completion"
            for k in self.by_kind
        ]
        out.append(
            f"  at most {self.most_calls} calls and {self.most_tokens:,} tokens (every round of "
            "every attempt)"
        )
        return out


def plan_run(
    request: DeliberationRequest,
    limits: Limits,
    knowledge: Knowledge,
    *,
    prices: Prices | None = None,
) -> RunPlan:
    """The expected calls, tokens and cost of a deliberation on ``knowledge``; no model call."""
    counter = default_counter()
    context = request.context()
    agents = knowledge.theory_agents
    n, c = len(agents), len(knowledge.constraint_agents)

    def tokens(task: ProposeTask | ScoreTask) -> int:
        return sum(counter.count(m.content) for m in render(task).messages)

    proposals = [
        tokens(
            ProposeTask(
                **dict(context),
                agent_id=a.id,
                evidence=a.option_evidence(context.problem, context.options),
            )
        )
        for a in agents
    ]
    stand_in = SolutionView(title=context.problem[:120], recommendations=context.options)
    scores = []
    for agent in knowledge.constraint_agents:
        evidence = agent.evidence(stand_in.text() or context.problem)
        red_flags, mitigations = agent.signals(evidence)
        task = ScoreTask(
            **dict(context),
            constraint=agent.constraint,
            solution_id="plan",
            solution=stand_in,
            evidence=evidence,
            red_flags=red_flags,
            mitigations=mitigations,
        )
        scores.append(tokens(task) + SOLUTION_VIEW_TOKENS)
    rounds = min(max(limits.min_rounds, 1), limits.max_rounds)
    clusters = min(request.sufficiency, n)
    kinds = _kinds(proposals, scores, rounds, clusters, request.critique_mode, request.score_mode)
    most = _kinds(
        proposals, scores, limits.max_rounds, n, request.critique_mode, request.score_mode
    )
    attempts = 1 + limits.max_regenerations
    prompt = sum(k.prompt_tokens for k in kinds)
    completion = sum(k.completion_tokens for k in kinds)
    return RunPlan(
        calls=sum(k.calls for k in kinds),
        prompt_tokens=prompt,
        completion_tokens=completion,
        cost_usd=round(prices.cost(prompt, completion), 4) if prices and prices.priced else None,
        most_calls=attempts * sum(k.calls for k in most),
        most_tokens=attempts * sum(k.prompt_tokens + k.completion_tokens for k in most),
        rounds=rounds,
        agents=n,
        constraints=c,
        critique_mode=request.critique_mode,
        score_mode=request.score_mode,
        by_kind=tuple(k for k in kinds if k.calls),
    )


def _scoring(scores: list[int], n: int, mode: str) -> KindPlan:
    """Every constraint agent scores the set's (at most ``n``) solutions: a call each, or one
    call per `MAX_SCORED` of them carrying each solution's view and passages once."""
    if mode == "per_solution":
        return KindPlan(
            kind="score",
            calls=len(scores) * n,
            prompt_tokens=n * sum(scores),
            completion_tokens=len(scores) * n * REPLY_TOKENS["score"],
        )
    batches = -(-n // MAX_SCORED) if n else 0
    return KindPlan(
        kind="score_batch",
        calls=len(scores) * batches,
        prompt_tokens=sum(batches * s + (n - batches) * BATCH_SOLUTION_TOKENS for s in scores),
        completion_tokens=len(scores) * n * REPLY_TOKENS["score"],
    )


def _kinds(
    proposals: list[int],
    scores: list[int],
    rounds: int,
    clusters: int,
    mode: str,
    score_mode: str = "per_solution",
) -> list[KindPlan]:
    n = len(proposals)
    peers = n - 1
    mean = sum(proposals) // max(n, 1)
    if mode == "pairwise":
        critique = KindPlan(
            kind="critique",
            calls=n * peers * rounds,
            prompt_tokens=rounds * sum(peers * (p + SOLUTION_TOKENS) for p in proposals),
            completion_tokens=n * peers * rounds * REPLY_TOKENS["critique"],
        )
    else:
        batches = -(-peers // MAX_TARGETS) if peers else 0
        critique = KindPlan(
            kind="critique_batch",
            calls=n * batches * rounds,
            prompt_tokens=rounds * sum(batches * p + peers * SOLUTION_TOKENS for p in proposals),
            completion_tokens=n * peers * rounds * REPLY_TOKENS["critique_target"],
        )
    revise = SOLUTION_TOKENS + peers * CRITIQUE_TOKENS
    return [
        KindPlan(
            kind="propose",
            calls=n,
            prompt_tokens=sum(proposals),
            completion_tokens=n * REPLY_TOKENS["propose"],
        ),
        critique,
        KindPlan(
            kind="revise",
            calls=n * rounds,
            prompt_tokens=rounds * sum(p + revise for p in proposals),
            completion_tokens=n * rounds * REPLY_TOKENS["revise"],
        ),
        _scoring(scores, n, score_mode),
        KindPlan(
            kind="synthesize",
            calls=clusters,
            prompt_tokens=clusters * (mean + -(-n // max(clusters, 1)) * SOLUTION_TOKENS),
            completion_tokens=clusters * REPLY_TOKENS["synthesize"],
        ),
    ]
