"""What agent calls consumed: counted by the caller, reported in a run's result.

Apart from the caller so that the result types can name it without importing the caller and the
language-model backends behind it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Literal

from pydantic import BaseModel, ConfigDict

from hivemind_lab.agents.schemas import MAX_TARGETS
from hivemind_lab.llm.base import ChatModel, ChatRequest, ChatResponse, Usage


class UsageSummary(BaseModel):
    """What a run consumed."""

    model_config = ConfigDict(frozen=True)

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


def planned_calls(
    n_agents: int,
    n_constraints: int,
    *,
    max_rounds: int,
    critique_mode: Literal["pairwise", "batched"] = "pairwise",
) -> int:
    """The calls of one generation that runs every round: proposals, each round's critiques
    and revisions, every constraint agent scoring every solution, one rationale per cluster
    (at most one per agent). An estimate for a progress display: a run that converges early
    makes fewer, a regeneration more."""
    peers = n_agents - 1
    batches = -(-peers // MAX_TARGETS) if peers else 0  # a batched reply critiques <= MAX_TARGETS
    critiques = n_agents * (peers if critique_mode == "pairwise" else batches)
    return n_agents + max_rounds * (critiques + n_agents) + n_constraints * n_agents + n_agents


class CallMeter:
    """A `ChatModel` wrapper that counts the calls and tokens of ``inner`` as they finish and
    tells ``on_call`` (a live progress display: calls done, tokens/s, time left)."""

    def __init__(self, inner: ChatModel, on_call: Callable[[CallMeter], None]) -> None:
        self.inner = inner
        self.backend = inner.backend
        self.model = inner.model
        self.calls = 0
        self.usage = Usage()
        self._on_call = on_call
        self._started: float | None = None

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """Forward one call, then count it."""
        if self._started is None:
            self._started = time.monotonic()
        response = await self.inner.complete(request)
        self.calls += 1
        self.usage = self.usage + response.usage
        self._on_call(self)
        return response

    def tokens_per_second(self) -> float:
        """Prompt and completion tokens per second since the first call began."""
        if self._started is None:
            return 0.0
        return self.usage.total_tokens / max(time.monotonic() - self._started, 1e-9)
