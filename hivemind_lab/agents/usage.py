"""What agent calls consumed: counted by the caller, reported in a run's result.

Apart from the caller so that the result types can name it without importing the caller and the
language-model backends behind it.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


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
