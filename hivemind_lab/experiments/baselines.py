"""Baselines at equal compute ("Debate or Vote", "Stop Overvaluing MAD"): the same number of
theory-model calls as the deliberation spent, without critique rounds.

- vote: every agent proposes independently, repeatedly (different seeds) until the budget is
  spent; the monitor clusters all proposals and the largest clusters win (majority vote).
- single_agent: one agent holding the whole knowledge base proposes repeatedly; the largest
  clusters of its own proposals win (self-consistency).
Both then face the same practicality network and veto rule.
"""

from __future__ import annotations

import asyncio
import math

from hivemind_lab import monitor, practicality, theory
from hivemind_lab.agents.caller import AgentCaller
from hivemind_lab.agents.schemas import ProposalOutput, ProposeTask
from hivemind_lab.deliberation import Knowledge
from hivemind_lab.inputs import Calibrations, DeliberationRequest
from hivemind_lab.knowledge.slicing import Slice
from hivemind_lab.monitor import Embedder
from hivemind_lab.results import (
    DeliberationResult,
    RoundMetrics,
    Solution,
)


def single_agent_knowledge(
    knowledge: Knowledge, request: DeliberationRequest
) -> list[theory.TheoryAgent]:
    """One agent whose slice is the whole knowledge base."""
    docs = sorted(knowledge.documents.values(), key=lambda d: d.id)
    whole = Slice(
        index=0,
        document_ids=tuple(d.id for d in docs),
        tokens=sum(d.tokens for d in docs),
        deviation=0,
        topics=tuple(sorted({d.school for d in docs})),
    )
    return theory.build_agents(
        [whole], knowledge.documents, (*request.client_data, *request.market_data)
    )


async def run_baseline(
    strategy: str,
    request: DeliberationRequest,
    calibrations: Calibrations,
    *,
    knowledge: Knowledge,
    caller: AgentCaller,
    budget: int,
    seed: int,
    embedder: Embedder,
) -> DeliberationResult:
    """Spend ``budget`` proposal calls, cluster, majority-vote, and face the practicality network."""
    agents = (
        single_agent_knowledge(knowledge, request)
        if strategy == "single_agent"
        else knowledge.theory_agents
    )
    per_agent = max(1, math.ceil(budget / len(agents)))

    async def one(agent: theory.TheoryAgent, k: int) -> Solution:
        task = ProposeTask(
            agent_id=agent.id, problem=request.problem, evidence=agent.evidence(request.problem)
        )
        out = await caller.ask(agent.id, task, ProposalOutput, seed=seed * 1000 + k)
        return Solution(
            id=f"{strategy}.s{k}.{agent.id}",
            agent_id=agent.id,
            regeneration=0,
            round=0,
            title=out.title,
            recommendations=tuple(out.recommendations),
            rationale=out.rationale,
            citations=tuple(out.citations),
        )

    jobs = [one(agent, k) for k in range(per_agent) for agent in agents][:budget]
    solutions = list(await asyncio.gather(*jobs))
    report = monitor.observe(
        solutions,
        threshold=calibrations.similarity_threshold,
        sufficiency=request.sufficiency,
        embedder=embedder,
        regeneration=0,
        round=0,
    )
    # Majority vote: the `sufficiency` largest clusters are the conclusions.
    kept = sorted(report.clusters, key=lambda c: (-len(c.solution_ids), c.index))[
        : request.sufficiency
    ]
    kept_ids = {i for c in kept for i in c.solution_ids}
    report = report.model_copy(
        update={"clusters": tuple(kept), "distinct_conclusions": len(report.clusters)}
    )
    finalists = [s for s in solutions if s.id in kept_ids]
    theory_calls = caller.usage.calls
    _, expanded = await practicality.score_set(
        caller,
        knowledge.constraint_agents,
        [(s.id, s.view()) for s in finalists],
        severity=calibrations.severity,
    )
    verdict = practicality.judge(
        expanded, feasibility=request.feasibility, severity=calibrations.severity, regeneration=0
    )
    conclusions = monitor.aggregate(report, finalists, verdict) if not verdict.vetoed else ()
    return DeliberationResult(
        status="vetoed_out" if verdict.vetoed else "converged",
        problem_id=request.problem_id,
        rounds=0,
        total_rounds=0,
        regenerations=0,
        n_agents=len(agents),
        conclusions=conclusions,
        vetoes=(verdict,),
        monitor=(report,),
        metrics=(
            RoundMetrics(
                regeneration=0,
                round=0,
                agents=len(agents),
                distinct_conclusions=report.distinct_conclusions,
                revision_magnitude=0.0,
                diversity=monitor.diversity(solutions, embedder),
                adopted_points=0,
                refused_repeats=0,
                calls=theory_calls,
                tokens=caller.usage.tokens,
            ),
        ),
        usage=caller.usage,
        wall_time_s=0.0,
    )


__all__ = ["run_baseline", "single_agent_knowledge"]
