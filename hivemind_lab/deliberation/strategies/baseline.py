"""Baselines at equal compute ("Debate or Vote", "Stop Overvaluing MAD"): no critique rounds,
the same model-call and token budget as the deliberation beside them, the same regeneration rule.

- vote: every theory agent proposes independently, in waves (a new seed each wave), until the
  generation's share of the budget is spent; the monitor clusters all proposals and the
  ``sufficiency`` largest clusters win. Clusters tied in size at the cut all win, and the result
  says it was a tie (no index decides a majority).
- single_agent: one agent holding the whole knowledge base, retrieving as many passages as the
  whole theory network does, proposes in waves; its largest clusters win (self-consistency).

The winners face the same practicality network. A veto regenerates from scratch with no repeats,
up to ``max_regenerations``, exactly as in the deliberation, as long as the budget lasts: each
generation spends what is left but the calls scoring its winners needs; a baseline vetoed with
its budget spent stops as ``budget_exhausted``. Where a strategy's calls cost more tokens (the
single agent's whole-knowledge retrieval), the token budget binds first; `compare.compute_table`
puts calls and tokens side by side and flags every mismatch.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from hivemind_lab.agents.caller import AgentCaller
from hivemind_lab.agents.schemas import DecisionContext, Evidence, SolutionView
from hivemind_lab.deliberation import monitor, practicality, theory
from hivemind_lab.deliberation.embedders import Embedder
from hivemind_lab.deliberation.engine import Engine
from hivemind_lab.deliberation.state import Knowledge
from hivemind_lab.inputs import DeliberationRequest
from hivemind_lab.knowledge.slicing import Slice
from hivemind_lab.runs import events
from hivemind_lab.runs.manifest import Budget, RunManifest
from hivemind_lab.runs.results import (
    Cluster,
    DeliberationResult,
    MonitorReport,
    PracticalityVerdict,
    RoundMetrics,
    Solution,
    Status,
)


@dataclass(frozen=True)
class WholeKnowledgeAgent(theory.TheoryAgent):
    """A theory agent over the whole knowledge base that retrieves ``k`` passages a call."""

    k: int = theory.EVIDENCE_K

    def evidence(self, query: str, k: int = theory.EVIDENCE_K) -> tuple[Evidence, ...]:
        return super().evidence(query, max(k, self.k))


def single_agent(knowledge: Knowledge, request: DeliberationRequest) -> WholeKnowledgeAgent:
    """One agent whose slice is the whole knowledge base, retrieving as many passages as the
    whole theory network retrieves (``EVIDENCE_K`` per agent)."""
    docs = sorted(knowledge.documents.values(), key=lambda d: d.id)
    whole = Slice(
        index=0,
        document_ids=tuple(d.id for d in docs),
        tokens=sum(d.tokens for d in docs),
        deviation=0,
        topics=tuple(sorted({d.school for d in docs})),
    )
    (agent,) = theory.build_agents(
        [whole], knowledge.documents, (*request.client_data, *request.market_data)
    )
    return WholeKnowledgeAgent(
        id=agent.id,
        slice=agent.slice,
        index=agent.index,
        shared=agent.shared,
        k=theory.EVIDENCE_K * max(1, len(knowledge.theory_agents)),
    )


def vote(clusters: tuple[Cluster, ...], seats: int) -> tuple[tuple[Cluster, ...], bool]:
    """The ``seats`` largest clusters, plus every cluster tied in size with the last of them.

    Returns the winners and whether a tie at the cut widened them.
    """
    ranked = sorted(clusters, key=lambda c: -len(c.solution_ids))
    if len(ranked) <= seats:
        return tuple(ranked), False
    cut = len(ranked[seats - 1].solution_ids)
    winners = tuple(c for c in ranked if len(c.solution_ids) >= cut)
    return winners, len(winners) > seats


@dataclass
class _Generation:
    solutions: list[Solution]
    refused: int
    calls: int
    tokens: int


async def _propose_waves(
    caller: AgentCaller,
    agents: list[theory.TheoryAgent],
    problem: DecisionContext,
    *,
    regeneration: int,
    excluded: tuple[SolutionView, ...],
    is_repeat: theory.RepeatCheck,
    budget: Budget,
    keep_calls: int,
    seed: int,
) -> _Generation:
    """Independent proposals in waves (one call per agent) while a further wave, at the mean cost
    per call so far, still leaves ``keep_calls`` scoring calls in the budget; the last wave may
    hold only the first agents, so the budget is spent to the call."""
    start = caller.usage
    solutions: list[Solution] = []
    refused = 0
    wave = 0
    while True:
        used = caller.usage
        spent = used.calls - start.calls
        per_call = (used.tokens - start.tokens) / spent if spent else 0.0
        size = len(agents)
        if wave:
            size = min(size, budget.calls - keep_calls - used.calls)
            if budget.tokens and per_call:
                left = budget.tokens - keep_calls * budget.tokens_per_score - used.tokens
                size = min(size, int(left // per_call))
            if size < 1:
                break
        caller.seed = seed * 1000 + regeneration * 100 + wave  # an independent sample
        out = await theory.propose(
            caller,
            agents[:size],
            problem,
            regeneration=regeneration,
            excluded=excluded,
            is_repeat=is_repeat,
        )
        refused += len(out.refused)
        for agent_id in sorted(out.solutions):
            sol = out.solutions[agent_id]
            solutions.append(sol.model_copy(update={"id": f"g{regeneration}.w{wave}.{agent_id}"}))
        wave += 1
        if not out.solutions:  # every agent abstains: more waves cannot help
            break
    caller.seed = seed
    return _Generation(
        solutions,
        refused,
        caller.usage.calls - start.calls,
        caller.usage.tokens - start.tokens,
    )


@dataclass(frozen=True)
class BaselineStrategy:
    """A vote or single-agent baseline: proposals in waves, a vote, the practicality veto.

    A baseline has no phases worth keeping: an unfinished one restarts whole from its manifest.
    """

    manifest: RunManifest
    knowledge: Knowledge
    embedder: Embedder

    async def run(self, engine: Engine) -> DeliberationResult:
        """Run the baseline the manifest describes (strategy and budget); writes result.json."""
        started = time.perf_counter()
        engine.record(
            (
                "client",
                events.BaselineRequested(manifest=self.manifest.model_dump(mode="json")),
            )
        )
        result = await self._generations(engine)
        result = result.model_copy(update={"wall_time_s": round(time.perf_counter() - started, 6)})
        return engine.finish(result)

    async def _generations(self, engine: Engine) -> DeliberationResult:
        manifest, knowledge, embedder, caller = (
            self.manifest,
            self.knowledge,
            self.embedder,
            engine.caller,
        )
        request, cal, limits = manifest.request, manifest.calibrations, manifest.limits
        budget = manifest.budget or Budget(calls=1, tokens=0)
        agents: list[theory.TheoryAgent] = (
            [single_agent(knowledge, request)]
            if manifest.strategy == "single_agent"
            else list(knowledge.theory_agents)
        )
        n_constraints = len(knowledge.constraint_agents)
        excluded: tuple[SolutionView, ...] = ()
        verdicts: list[PracticalityVerdict] = []
        reports: list[MonitorReport] = []
        metrics: list[RoundMetrics] = []
        status: Status = "vetoed_out"
        conclusions: tuple = ()
        tie = False
        generation = 0
        for generation in range(limits.max_regenerations + 1):
            # Spend the budget now, keeping what scoring the winners needs: the deliberation,
            # too, could only regenerate on what it had not spent.
            score_calls = n_constraints * request.sufficiency
            keep = score_calls
            if generation and caller.usage.calls + len(agents) + score_calls > budget.calls:
                engine.record(("engine", events.BudgetSpent(generation=generation)))
                status = "budget_exhausted"
                break

            def is_repeat(
                view: SolutionView, vetoed: tuple[SolutionView, ...] = tuple(excluded)
            ) -> bool:
                return monitor.is_repeat(view, vetoed, cal.similarity_threshold, embedder)

            gen = await _propose_waves(
                caller,
                agents,
                request.context(),
                regeneration=generation,
                excluded=excluded,
                is_repeat=is_repeat,
                budget=budget,
                keep_calls=keep,
                seed=manifest.seed,
            )
            engine.record(*((s.agent_id, events.Proposal.of(s)) for s in gen.solutions))
            if not gen.solutions:
                engine.record(("monitor", events.Abstained(agents=[a.id for a in agents])))
                status = "abstained"
                break
            report = monitor.observe(
                gen.solutions,
                threshold=cal.similarity_threshold,
                sufficiency=request.sufficiency,
                embedder=embedder,
                regeneration=generation,
                round=0,
            )
            winners, tie = vote(report.clusters, request.sufficiency)
            engine.record(
                (
                    "monitor",
                    events.Vote(
                        clusters=[len(c.solution_ids) for c in report.clusters],
                        winners=[c.index for c in winners],
                        tie=tie,
                    ),
                )
            )
            reports.append(report.model_copy(update={"clusters": winners, "halted": True}))
            metrics.append(
                RoundMetrics(
                    regeneration=generation,
                    round=0,
                    agents=len(agents),
                    distinct_conclusions=report.distinct_conclusions,
                    revision_magnitude=0.0,
                    diversity=monitor.diversity(gen.solutions, embedder),
                    adopted_points=0,
                    refused_repeats=gen.refused,
                    calls=gen.calls,
                    tokens=gen.tokens,
                )
            )
            by_id = {s.id: s for s in gen.solutions}
            finalists = [by_id[c.representative_id] for c in winners]
            scored = await engine.score(
                knowledge.constraint_agents,
                [(s.id, s.view()) for s in finalists],
                severity=cal.severity,
                context=request.context(),
                mode=request.score_mode,
            )
            verdict = practicality.judge(
                scored.per_solution,
                feasibility=request.feasibility,
                severity=cal.severity,
                regeneration=generation,
            )
            verdicts.append(verdict)
            if not verdict.vetoed:
                engine.record(
                    (
                        "practicality",
                        events.Pass(mean_score=verdict.mean_score, feasibility=verdict.feasibility),
                    )
                )
                status = "converged"
                # Every member stays in its cluster (the vote's count); the representative's
                # scores are the cluster's.
                conclusions = monitor.aggregate(reports[-1], gen.solutions, verdict)
                break
            winning = {i for c in winners for i in c.solution_ids}
            engine.record(
                (
                    "practicality",
                    events.Veto(
                        mean_score=verdict.mean_score,
                        feasibility=verdict.feasibility,
                        regeneration=generation,
                        vetoed_solutions=[s.id for s in finalists],
                    ),
                )
            )
            excluded = (*excluded, *(by_id[i].view() for i in sorted(winning)))
        return DeliberationResult(
            status=status,
            problem_id=request.problem_id,
            options=request.options,
            options_source=request.options_source,
            exclusive=request.exclusive,
            exclusive_source=request.exclusive_source,
            rounds=0,
            total_rounds=0,
            regenerations=generation,
            n_agents=len(agents),
            conclusions=conclusions,
            vetoes=tuple(verdicts),
            monitor=tuple(reports),
            metrics=tuple(metrics),
            usage=caller.usage,
            wall_time_s=0.0,
            tie=tie,
        )
