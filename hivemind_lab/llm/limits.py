"""What one request to a model may hold: its context window and its output limit.

A model that is sent more than its window refuses the request (llama-server answers 400 "the
request exceeds the available context size"; hosted endpoints likewise), so the agents pack each
task's evidence to these limits (`hivemind_lab.agents.budget`) instead of overflowing. Limits are
declared data, recorded in the run manifest, so a replay packs exactly as the run did.
"""

from __future__ import annotations

from pydantic import Field

from hivemind_lab.llm.base import ChatModel, ChatRequest, ChatResponse, layers
from hivemind_lab.models import Frozen

DEFAULT_TOKENIZER_RATIO = 1.25
"""Model tokens per token of the project's counter for a model nobody measured: cl100k_base is
among the denser tokenizers, and 32k-49k-vocabulary models (Llama 2, Mistral, SmolLM2) spend
up to about a fifth more tokens on the same English text."""


class ModelLimits(Frozen):
    """The token limits of one model as the run uses it."""

    context_window: int = Field(ge=256, le=10_000_000)
    """Tokens of prompt plus reply in one request (a local server: its context per slot)."""
    output_limit: int | None = Field(default=None, gt=0)
    """Most tokens one reply may have (None: only the window bounds it)."""
    tokenizer_ratio: float = Field(default=DEFAULT_TOKENIZER_RATIO, ge=0.5, le=4.0)
    """The model's tokens per token of the project's counter (`hivemind_lab.tokens`): budgets
    are counted with the project's counter and converted with this ratio, rounded up."""

    def completion_budget(self, wanted: int) -> int:
        """The reply tokens a request may ask for: ``wanted``, at most the output limit."""
        return wanted if self.output_limit is None else min(wanted, self.output_limit)


def model_limits(model: ChatModel) -> ModelLimits | None:
    """The limits the backend under ``model``'s wrappers (cache, latency) declares, if any."""
    for layer in layers(model):
        limits = getattr(layer, "limits", None)
        if isinstance(limits, ModelLimits):
            return limits
    return None


class LimitedChatModel:
    """``inner`` with declared `ModelLimits` (a roster entry's window for an endpoint that
    states none itself); calls pass through unchanged: the limits only tell the agents how to
    pack what they send."""

    def __init__(self, inner: ChatModel, limits: ModelLimits) -> None:
        self.inner = inner
        self.limits = limits
        self.backend = inner.backend
        self.model = inner.model

    async def complete(self, request: ChatRequest) -> ChatResponse:
        return await self.inner.complete(request)
