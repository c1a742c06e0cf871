"""What agent calls consumed: counted by the caller, reported in a run's result.

Apart from the caller so that the result types can name it without importing the caller and the
language-model backends behind it.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from hivemind_lab.agents.schemas import (
    MAX_SCORED,
    MAX_TARGETS,
    BatchCritiqueOutput,
    BatchScoreOutput,
    CritiqueOutput,
    ProposalOutput,
    RationaleOutput,
    RevisionOutput,
    ScoreOutput,
)
from hivemind_lab.llm.base import ChatModel, ChatRequest, ChatResponse, Usage
from hivemind_lab.models import Frozen


class UsageSummary(Frozen):
    """What a run consumed."""

    calls: int = 0
    """Agent calls, including those served from cache."""
    model_calls: int = 0
    """Calls that reached the backend (calls - cache_hits)."""
    cache_hits: int = 0
    prompt_tokens: int = 0
    """Prompt tokens of every call, whether the endpoint read them or reused them."""
    cached_prompt_tokens: int = 0
    """Prompt tokens the endpoint reused from its prefix cache (part of ``prompt_tokens``):
    llama-server's cached prompt of a slot, a hosted provider's cached tokens."""
    completion_tokens: int = 0
    tokens: int = 0
    cost_usd: float = 0.0

    @property
    def processed_prompt_tokens(self) -> int:
        """Prompt tokens the endpoint had to read (what prompt processing time goes on)."""
        return self.prompt_tokens - self.cached_prompt_tokens


CallKind = Literal[
    "propose", "critique", "critique_batch", "revise", "score", "score_batch", "synthesize"
]

KIND_OF_FORMAT: dict[str, CallKind] = {
    ProposalOutput.__name__: "propose",
    CritiqueOutput.__name__: "critique",
    BatchCritiqueOutput.__name__: "critique_batch",
    RevisionOutput.__name__: "revise",
    ScoreOutput.__name__: "score",
    BatchScoreOutput.__name__: "score_batch",
    RationaleOutput.__name__: "synthesize",
}
"""The kind of agent call a request is, read from its response format's name (the meter sees
requests, not tasks)."""


@dataclass(frozen=True)
class CallPlan:
    """The shape of a run that fixes which calls it makes."""

    n_agents: int
    n_constraints: int
    max_rounds: int
    critique_mode: Literal["pairwise", "batched"] = "pairwise"
    score_mode: Literal["per_solution", "batched"] = "per_solution"


@dataclass(frozen=True)
class CallRecord:
    """One finished call as the estimate needs it: the tokens the endpoint had to work on."""

    kind: CallKind | None
    processed: int
    """Prompt tokens read, i.e. not reused from the endpoint's prefix cache."""
    generated: int
    reused: int = 0
    """Prompt tokens reused from the endpoint's prefix cache (no work)."""

    @property
    def work(self) -> int:
        return self.processed + self.generated

    @classmethod
    def of(cls, request: ChatRequest, usage: Usage) -> CallRecord:
        name = request.response_format.name if request.response_format else ""
        return cls(
            kind=KIND_OF_FORMAT.get(name),
            processed=usage.prompt_tokens - usage.cached_prompt_tokens,
            generated=usage.completion_tokens,
            reused=usage.cached_prompt_tokens,
        )


def scoring_calls(
    constraints: int, solutions: int, mode: Literal["per_solution", "batched"]
) -> int:
    """The calls scoring ``solutions`` solutions takes: one per constraint agent and solution,
    or one per constraint agent for every `MAX_SCORED` of them when scoring is batched (a
    baseline keeps these back from its budget: counting per solution left a batched run's
    baselines a wave short of the deliberation's compute)."""
    if mode == "batched":
        return constraints * -(-solutions // MAX_SCORED)
    return constraints * solutions


def calls_left(
    plan: CallPlan, phase: str, round: int, distinct: int | None = None
) -> dict[CallKind, int]:
    """The calls still to come, by kind, when the run's next phase is ``phase`` (what a
    checkpoint reports). Rounds run to ``max_rounds`` (the monitor may halt sooner, and then
    the next report drops them); a run that is done, vetoed out included, makes no more calls,
    and the rationales are one per cluster once the clusters are known. A regeneration after a
    veto is planned when it starts (its phase is ``generate`` again)."""
    n = plan.n_agents
    peers = n - 1
    if plan.critique_mode == "pairwise":
        critique: CallKind = "critique"
        per_round = n * peers
    else:
        critique = "critique_batch"
        per_round = n * (-(-peers // MAX_TARGETS) if peers else 0)  # <= MAX_TARGETS a reply
    clusters = n if distinct is None else min(distinct, n)
    kind: CallKind = "score" if plan.score_mode == "per_solution" else "score_batch"
    scores: dict[CallKind, int] = {kind: scoring_calls(plan.n_constraints, n, plan.score_mode)}
    end: dict[CallKind, int] = {**scores, "synthesize": clusters}
    rounds = max(plan.max_rounds - round, 0)
    if phase == "done":
        return {}
    if phase == "synthesize":
        return {"synthesize": clusters}
    if phase == "score":
        return end
    if phase == "revise":  # this round's critiques are in
        return {critique: per_round * max(rounds - 1, 0), "revise": n * rounds, **end}
    if phase in ("monitor", "critique"):
        return {critique: per_round * rounds, "revise": n * rounds, **end}
    # generate: a whole generation (synthesize at most one rationale per agent)
    rounds = plan.max_rounds
    return {
        "propose": n,
        critique: per_round * rounds,
        "revise": n * rounds,
        **end,
        "synthesize": n,
    }


def planned_calls(
    n_agents: int,
    n_constraints: int,
    *,
    max_rounds: int,
    critique_mode: Literal["pairwise", "batched"] = "pairwise",
    score_mode: Literal["per_solution", "batched"] = "per_solution",
) -> int:
    """The calls of one generation that runs every round: proposals, each round's critiques
    and revisions, every constraint agent scoring every solution, one rationale per cluster
    (at most one per agent). An estimate for a progress display: a run that converges early
    makes fewer, a regeneration more."""
    plan = CallPlan(n_agents, n_constraints, max_rounds, critique_mode, score_mode)
    return sum(calls_left(plan, "generate", 0).values())


def still_to_come(
    left: Mapping[CallKind, int], finished: Sequence[CallRecord]
) -> dict[CallKind, int]:
    """``left`` as planned at the last phase, less the calls of each kind finished since (a
    retried reply is one call more than planned, never fewer than none left)."""
    done = Counter(r.kind for r in finished)
    return {k: max(n - done[k], 0) for k, n in left.items()}


def token_rate(records: Sequence[CallRecord], elapsed_s: float) -> float:
    """Tokens the endpoint worked on per second: prompt tokens it read plus tokens it
    generated. Reused prompt tokens cost next to nothing and are left out, or a cached prefix
    would make the server look twice as fast as it is."""
    if elapsed_s <= 0:
        return 0.0
    return sum(r.work for r in records) / elapsed_s


def seconds_left(
    records: Sequence[CallRecord], left: Mapping[CallKind, int], elapsed_s: float
) -> float | None:
    """Time left: the expected tokens of the calls still to come over the observed rate.

    A call is expected to cost what the finished calls of its kind cost on average (a
    proposal reads its agent's whole evidence, a critique mostly reuses it: ~10x apart). While
    none of its kind has finished it costs the mean of the finished calls that reused a cached
    prefix, as every kind after the proposals extends a prefix already read (of every finished
    call when none reused one: an endpoint without a prefix cache). Counting calls per second
    instead swings with the mix of kinds finished so far. None before any work."""
    rate = token_rate(records, elapsed_s)
    if rate <= 0:
        return None
    by_kind: dict[CallKind | None, list[int]] = {}
    for r in records:
        by_kind.setdefault(r.kind, []).append(r.work)
    extending = [r.work for r in records if r.reused] or [r.work for r in records]
    unseen = sum(extending) / len(extending)
    expected = sum(
        n * (sum(by_kind[k]) / len(by_kind[k]) if k in by_kind else unseen) for k, n in left.items()
    )
    return expected / rate


def format_left(seconds: float | None) -> str:
    """``0:03:12`` as rich's own time column shows it; ``-:--:--`` before an estimate."""
    if seconds is None:
        return "-:--:--"
    s = round(seconds)
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


class ProgressEstimate:
    """Calls done and still to come, the endpoint's token rate and the time left, for a live
    progress display: fed by a `CallMeter` as calls finish and by the run's phase reports."""

    def __init__(self, plan: CallPlan, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.plan = plan
        self.records: list[CallRecord] = []
        self._clock = clock
        self._started: float | None = None
        self._left = calls_left(plan, "generate", 0)
        self._since = 0

    def began(self) -> None:
        """A call started (the clock runs from the first)."""
        if self._started is None:
            self._started = self._clock()

    def finished(self, record: CallRecord) -> None:
        self.records.append(record)

    def reached(self, phase: str, round: int, distinct: int | None = None) -> None:
        """The run checkpointed; ``phase`` comes next. Replans the calls left."""
        self._left = calls_left(self.plan, phase, round, distinct)
        self._since = len(self.records)

    def left(self) -> dict[CallKind, int]:
        return still_to_come(self._left, self.records[self._since :])

    @property
    def total(self) -> int:
        """Calls done plus calls still to come."""
        return len(self.records) + sum(self.left().values())

    def elapsed_s(self) -> float:
        return 0.0 if self._started is None else self._clock() - self._started

    def tokens_per_second(self) -> float:
        return token_rate(self.records, self.elapsed_s())

    def seconds_left(self) -> float | None:
        return seconds_left(self.records, self.left(), self.elapsed_s())


class CallMeter:
    """A `ChatModel` wrapper that counts the calls and tokens of ``inner`` as they finish and
    tells ``on_call`` (a live progress display: calls done, tokens/s, time left)."""

    def __init__(
        self,
        inner: ChatModel,
        on_call: Callable[[CallMeter], None],
        estimate: ProgressEstimate | None = None,
    ) -> None:
        self.inner = inner
        self.backend = inner.backend
        self.model = inner.model
        self.calls = 0
        self.usage = Usage()
        self.estimate = estimate or ProgressEstimate(CallPlan(0, 0, 0))
        self._on_call = on_call

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """Forward one call, then count it."""
        return await self.count(self.inner, request)

    def over(self, inner: ChatModel) -> ChatModel:
        """``inner``, its calls counted by this meter (a roster's models, one progress line)."""
        return _Counted(inner, self)

    async def count(self, inner: ChatModel, request: ChatRequest) -> ChatResponse:
        """Forward one call to ``inner``, then count it."""
        self.estimate.began()
        response = await inner.complete(request)
        self.calls += 1
        self.usage = self.usage + response.usage
        self.estimate.finished(CallRecord.of(request, response.usage))
        self._on_call(self)
        return response

    def tokens_per_second(self) -> float:
        """Tokens the endpoint read or generated per second since the first call began
        (prompt tokens reused from its cache left out)."""
        return self.estimate.tokens_per_second()


class _Counted:
    """A model whose calls a `CallMeter` counts (`CallMeter.over`)."""

    def __init__(self, inner: ChatModel, meter: CallMeter) -> None:
        self.inner = inner
        self.backend = inner.backend
        self.model = inner.model
        self._meter = meter

    async def complete(self, request: ChatRequest) -> ChatResponse:
        return await self._meter.count(self.inner, request)
