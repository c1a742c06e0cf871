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
    completion_tokens: int = 0
    tokens: int = 0
    cost_usd: float = 0.0
