"""Baselines at equal compute ("Debate or Vote", "Stop Overvaluing MAD"): no critique rounds,
the same model-call and token budget as the deliberation beside them, the same regeneration rule.

- vote: every theory agent proposes independently, in waves (a new seed each wave), until the
  generation's share of the budget is spent; the monitor clusters all proposals and the
  ``sufficiency`` largest clusters win. Clusters tied in size at the cut all win, and the result
  says it was a tie (no index decides a majority).
- single_agent: one agent holding the whole knowledge base, retrieving as many passages as the
  whole theory network does, proposes in waves; its largest clusters win (self-consistency).

A baseline is the deliberation's phase plan with its own generation step (waves and a vote, then
straight to scoring): the winners face the same practicality network, a veto regenerates with no
repeats up to ``max_regenerations`` exactly as in the deliberation, and the run ends in the same
result, checkpointed phase by phase on the same engine. Each generation spends what is left but
the calls scoring its winners needs; a baseline vetoed with its budget spent stops as
``budget_exhausted``. Where a strategy's calls cost more tokens (the single agent's
whole-knowledge retrieval), the token budget binds first; `compare.compute_table` puts calls and
tokens side by side and flags every mismatch.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from hivemind_lab.agents.caller import AgentCaller
from hivemind_lab.agents.schemas import DecisionContext, Evidence, SolutionView
from hivemind_lab.agents.usage import scoring_calls
from hivemind_lab.deliberation import monitor, theory
from hivemind_lab.deliberation.embedders import Embedder
from hivemind_lab.deliberation.engine import Engine
from hivemind_lab.deliberation.state import Knowledge, Phase, RunState
from hivemind_lab.deliberation.strategies.deliberation import DeliberationStrategy
from hivemind_lab.inputs import DeliberationRequest
from hivemind_lab.knowledge.slicing import Slice
from hivemind_lab.runs import events
from hivemind_lab.runs.manifest import Budget, RunManifest
from hivemind_lab.runs.results import Cluster, RoundMetrics, Solution


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
class BaselineStrategy(DeliberationStrategy):
    """A vote or single-agent baseline: proposals in waves and a vote, then the deliberation's
    scoring, veto, regeneration and result."""

    single: bool
    """The single-agent baseline (else the vote of the theory network)."""
    budget: Budget
    """The deliberation's spend beside it (`hivemind_lab.runs.manifest.Budget`)."""
    seed: int

    @classmethod
    def of(
        cls, manifest: RunManifest, knowledge: Knowledge, embedder: Embedder
    ) -> BaselineStrategy:
        """The baseline a manifest describes (its strategy and budget)."""
        return cls(
            manifest.request,
            manifest.calibrations,
            manifest.limits,
            knowledge,
            embedder,
            single=manifest.strategy == "single_agent",
            budget=manifest.budget or Budget(calls=1, tokens=0),
            seed=manifest.seed,
        )

    @functools.cached_property
    def agents(self) -> list[theory.TheoryAgent]:
        if self.single:
            return [single_agent(self.knowledge, self.request)]
        return list(self.knowledge.theory_agents)

    async def _generate(self, e: Engine, s: RunState) -> RunState:
        """Waves of independent proposals, clustered and voted on: the winners go to scoring."""
        request, generation = self.request, s.regeneration
        # Spend the budget now, keeping what scoring the winners needs: the deliberation, too,
        # could only regenerate on what it had not spent.
        keep = scoring_calls(
            len(self.knowledge.constraint_agents), request.sufficiency, request.score_mode
        )
        if generation and e.caller.usage.calls + len(self.agents) + keep > self.budget.calls:
            e.record(("engine", events.BudgetSpent(generation=generation)))
            return s.model_copy(update={"phase": "done", "status": "budget_exhausted"})
        gen = await _propose_waves(
            e.caller,
            self.agents,
            self.context,
            regeneration=generation,
            excluded=s.excluded,
            is_repeat=self._repeat_check(s.excluded),
            budget=self.budget,
            keep_calls=keep,
            seed=self.seed,
        )
        e.record(*((sol.agent_id, events.Proposal.of(sol)) for sol in gen.solutions))
        if not gen.solutions:
            e.record(("monitor", events.Abstained(agents=[a.id for a in self.agents])))
            return s.model_copy(update={"phase": "done", "solutions": {}, "status": "abstained"})
        threshold = self.calibrations.similarity_threshold
        report = monitor.observe(
            gen.solutions,
            threshold=threshold,
            sufficiency=request.sufficiency,
            embedder=self.embedder,
            regeneration=generation,
            round=0,
        )
        winners, tie = vote(report.clusters, request.sufficiency)
        e.record(
            (
                "monitor",
                events.Vote(
                    clusters=[len(c.solution_ids) for c in report.clusters],
                    winners=[c.index for c in winners],
                    tie=tie,
                ),
            )
        )
        metrics = RoundMetrics(
            regeneration=generation,
            round=0,
            agents=len(self.agents),
            distinct_conclusions=report.distinct_conclusions,
            revision_magnitude=0.0,
            diversity=monitor.diversity(gen.solutions, self.embedder),
            adopted_points=0,
            refused_repeats=gen.refused,
            calls=gen.calls,
            tokens=gen.tokens,
        )
        return s.model_copy(
            update={
                "phase": "score",
                "solutions": {sol.id: sol for sol in gen.solutions},
                # Every member stays in its cluster (the vote's count); a cluster is scored
                # through its representative.
                "monitor": (
                    *s.monitor,
                    report.model_copy(update={"clusters": winners, "halted": True}),
                ),
                "metrics": (*s.metrics, metrics),
            }
        )

    def _finalists(self, s: RunState) -> list[Solution]:
        """Each winning cluster's representative."""
        return [s.solutions[c.representative_id] for c in s.monitor[-1].clusters]

    def _vetoed(self, s: RunState, finalists: list[Solution]) -> list[SolutionView]:
        """Every member of the winning clusters: a regeneration repeats none of them."""
        winning = {i for c in s.monitor[-1].clusters for i in c.solution_ids}
        return [s.solutions[i].view() for i in sorted(winning)]

    def _after_pass(self) -> Phase:
        return "done"  # no synthesis: a vote writes no combined rationale

    def _tie(self, s: RunState) -> bool:
        """The last vote kept more clusters than the seats (tied at the cut)."""
        return bool(s.monitor) and len(s.monitor[-1].clusters) > self.request.sufficiency
