"""The theory network: one agent per knowledge slice; propose, critique every peer, revise.

Calls within a phase run concurrently (bounded by the caller); results are always processed in
agent order, so a run's outcome does not depend on which call finished first.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from hivemind_lab.agents.caller import AgentCaller
from hivemind_lab.agents.schemas import (
    BatchCritiqueOutput,
    BatchCritiqueTask,
    CritiqueOutput,
    CritiqueTarget,
    CritiqueTask,
    DecisionContext,
    Evidence,
    ProposalOutput,
    ProposeTask,
    ReceivedCritique,
    ReviseTask,
    RevisionOutput,
    SolutionView,
)
from hivemind_lab.deliberation.binding import binding_points
from hivemind_lab.knowledge.documents import Document
from hivemind_lab.knowledge.retrieval import RetrievalIndex, split_passages
from hivemind_lab.knowledge.slicing import Slice
from hivemind_lab.problems import AttachedDocument
from hivemind_lab.runs.results import Critique, Solution

SHARED_TOPIC = "client-data"
"""Topic given to client-cleared and market data passages."""
MAX_ATTEMPTS = 3
"""Proposals an agent may make per phase before it abstains for refusing to stop repeating."""
EVIDENCE_K = 6
SHARED_K = 2
OPTION_K = 3
"""Passages an agent retrieves per option."""


@dataclass(frozen=True)
class TheoryAgent:
    """A theory agent: retrieval over its own slice, and over the client and market data."""

    id: str
    slice: Slice
    index: RetrievalIndex
    shared: RetrievalIndex
    titles: Mapping[str, str] = field(default_factory=dict)
    _memo: dict[tuple[str, tuple[str, ...]], tuple[Evidence, ...]] = field(
        default_factory=dict, compare=False, repr=False
    )

    def _hits(self, query: str, k: int, *, about: tuple[int, ...] = ()) -> list[Evidence]:
        return [
            Evidence.of(hit, title=self.titles.get(hit.passage.document_id, ""), about=about)
            for hit in self.index.search(query, k)
        ]

    def evidence(self, query: str, k: int = EVIDENCE_K) -> tuple[Evidence, ...]:
        """Top-k passages of the agent's own slice, then the best client/market passages."""
        shared = [Evidence.of(hit) for hit in self.shared.search(query, SHARED_K)]
        return (*self._hits(query, k), *shared)

    def option_evidence(self, problem: str, options: Sequence[str]) -> tuple[Evidence, ...]:
        """The agent's own passages on each option (problem + option as the query), each
        passage once with the options it was retrieved for. Memoised: the same evidence serves
        the agent's proposal, its critiques of every peer and its revisions."""
        key = (problem, tuple(options))
        if key in self._memo:
            return self._memo[key]
        if not options:
            found = self.evidence(problem)
        else:
            about: dict[str, list[int]] = {}
            best: dict[str, Evidence] = {}
            for i, option in enumerate(options):
                for ev in self._hits(f"{option}. {option}. {problem}", OPTION_K):
                    about.setdefault(ev.id, []).append(i)
                    if ev.id not in best or ev.score > best[ev.id].score:
                        best[ev.id] = ev
            found = tuple(best[pid].model_copy(update={"about": tuple(about[pid])}) for pid in best)
        self._memo[key] = found
        return found


def build_agents(
    slices: Sequence[Slice],
    documents: Mapping[str, Document],
    shared: Sequence[AttachedDocument] = (),
) -> list[TheoryAgent]:
    """One agent per slice; client-cleared and market data join every agent's index."""
    shared_index = RetrievalIndex(
        p for d in shared for p in split_passages(d.id, d.text, topics=(SHARED_TOPIC,))
    )
    agents = []
    for s in slices:
        passages = [
            p
            for doc_id in s.document_ids
            for p in split_passages(doc_id, documents[doc_id].text, topics=documents[doc_id].topics)
        ]
        agents.append(
            TheoryAgent(
                id=f"theory-{s.index:02d}",
                slice=s,
                index=RetrievalIndex(passages),
                shared=shared_index,
                titles={doc_id: documents[doc_id].title for doc_id in s.document_ids},
            )
        )
    return agents


RepeatCheck = Callable[[SolutionView], bool]


def _solution(
    agent_id: str, out: ProposalOutput, *, regeneration: int, round: int, n_options: int
) -> Solution:
    """The engine's record of a reply; stances on options the problem does not have (a model
    can name index 5 of three options: the schema's enum is fixed) are dropped, last word wins."""
    stances = {st.option: st for st in out.stances if st.option < n_options}
    return Solution(
        id=f"g{regeneration}.r{round}.{agent_id}",
        agent_id=agent_id,
        regeneration=regeneration,
        round=round,
        title=out.title,
        recommendations=tuple(out.recommendations),
        rationale=out.rationale,
        citations=tuple(out.citations),
        adopted=tuple(out.adopted) if isinstance(out, RevisionOutput) else (),
        stances=tuple(stances.values()),
        facts_used=tuple(out.facts_used),
        course=out.course,
    )


@dataclass(frozen=True)
class ProposalRound:
    solutions: dict[str, Solution]
    refused: tuple[str, ...]
    """Ids of proposals refused as repeats of vetoed solutions."""
    abstained: tuple[str, ...]
    """Agents that produced only repeats."""


async def propose(
    caller: AgentCaller,
    agents: Sequence[TheoryAgent],
    context: DecisionContext,
    *,
    regeneration: int,
    excluded: Sequence[SolutionView],
    is_repeat: RepeatCheck,
) -> ProposalRound:
    """Every agent proposes from its own slice; repeats of vetoed solutions are refused."""

    async def one(agent: TheoryAgent) -> tuple[Solution | None, list[str]]:
        refused: list[str] = []
        for attempt in range(MAX_ATTEMPTS):
            task = ProposeTask(
                **dict(context),
                agent_id=agent.id,
                evidence=agent.option_evidence(context.problem, context.options),
                excluded=tuple(excluded),
                attempt=attempt,
            )
            out = await caller.ask(agent.id, task, ProposalOutput)
            solution = _solution(
                agent.id,
                out,
                regeneration=regeneration,
                round=0,
                n_options=len(context.options),
            )
            if not is_repeat(solution.view()):
                return solution, refused
            refused.append(f"{solution.id}#attempt{attempt}")
        return None, refused

    results = await asyncio.gather(*(one(a) for a in agents))
    solutions = {a.id: s for a, (s, _) in zip(agents, results, strict=True) if s is not None}
    return ProposalRound(
        solutions=solutions,
        refused=tuple(r for _, refused in results for r in refused),
        abstained=tuple(a.id for a, (s, _) in zip(agents, results, strict=True) if s is None),
    )


async def critique(
    caller: AgentCaller,
    agents: Sequence[TheoryAgent],
    solutions: Mapping[str, Solution],
    context: DecisionContext,
    *,
    mode: str = "pairwise",
) -> list[Critique]:
    """Each agent critiques every other agent's current solution with its own evidence.

    ``pairwise`` makes N(N-1) calls; ``batched`` makes N calls carrying the same information.
    """
    active = [a for a in agents if a.id in solutions]

    def make(critic: TheoryAgent, target: TheoryAgent, points: Sequence, summary: str) -> Critique:
        sol = solutions[target.id]
        return Critique(
            critic_id=critic.id,
            target_id=target.id,
            target_solution_id=sol.id,
            regeneration=sol.regeneration,
            round=sol.round,
            points=binding_points(sol.view(), context, points),
            summary=summary,
        )

    if mode == "batched":

        async def batch(critic: TheoryAgent) -> list[Critique]:
            peers = [t for t in active if t.id != critic.id]
            if not peers:
                return []
            task = BatchCritiqueTask(
                **dict(context),
                critic_id=critic.id,
                critic_position=solutions[critic.id].view(),
                targets=tuple(
                    CritiqueTarget(target_id=t.id, target=solutions[t.id].view()) for t in peers
                ),
                evidence=critic.option_evidence(context.problem, context.options),
            )
            out = await caller.ask(critic.id, task, BatchCritiqueOutput)
            by_target = {c.target_id: c for c in out.critiques}
            return [
                make(critic, t, by_target[t.id].points, by_target[t.id].summary)
                for t in peers
                if t.id in by_target
            ]

        nested = await asyncio.gather(*(batch(c) for c in active))
        return [c for group in nested for c in group]

    async def pair(critic: TheoryAgent, target: TheoryAgent) -> Critique:
        task = CritiqueTask(
            **dict(context),
            critic_id=critic.id,
            critic_position=solutions[critic.id].view(),
            target_id=target.id,
            target=solutions[target.id].view(),
            evidence=critic.option_evidence(context.problem, context.options),
        )
        out = await caller.ask(critic.id, task, CritiqueOutput)
        return make(critic, target, out.points, out.summary)

    pairs = [(c, t) for c in active for t in active if c.id != t.id]
    return list(await asyncio.gather(*(pair(c, t) for c, t in pairs)))


@dataclass(frozen=True)
class RevisionRound:
    solutions: dict[str, Solution]
    refused: tuple[str, ...]
    """Revisions refused as repeats of vetoed solutions (the agent keeps its solution)."""


async def revise(
    caller: AgentCaller,
    agents: Sequence[TheoryAgent],
    solutions: Mapping[str, Solution],
    critiques: Sequence[Critique],
    context: DecisionContext,
    *,
    stubbornness: float,
    round: int,
    is_repeat: RepeatCheck,
) -> RevisionRound:
    """Each agent reads every critique of its solution and revises."""

    async def one(agent: TheoryAgent) -> tuple[Solution, str | None]:
        current = solutions[agent.id]
        received = tuple(
            ReceivedCritique(critic_id=c.critic_id, points=c.points)
            for c in sorted(critiques, key=lambda c: c.critic_id)
            if c.target_id == agent.id
        )
        task = ReviseTask(
            **dict(context),
            agent_id=agent.id,
            current=ProposalOutput(
                title=current.title,
                stances=list(current.stances),
                recommendations=list(current.recommendations),
                rationale=current.rationale,
                citations=list(current.citations),
                facts_used=list(current.facts_used),
            ),
            critiques=received,
            stubbornness=stubbornness,
            evidence=agent.option_evidence(context.problem, context.options),
        )
        out = await caller.ask(agent.id, task, RevisionOutput)
        revised = _solution(
            agent.id,
            out,
            regeneration=current.regeneration,
            round=round,
            n_options=len(context.options),
        )
        if is_repeat(revised.view()):
            kept = current.model_copy(update={"id": revised.id, "round": round, "adopted": ()})
            return kept, revised.id
        return revised, None

    active = [a for a in agents if a.id in solutions]
    results = await asyncio.gather(*(one(a) for a in active))
    return RevisionRound(
        solutions={a.id: s for a, (s, _) in zip(active, results, strict=True)},
        refused=tuple(r for _, r in results if r is not None),
    )
