"""The one interface every language-model backend implements."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import Field

from hivemind_lab.canonical import canonical_json
from hivemind_lab.models import Frozen


class ChatMessage(Frozen):
    """One chat turn."""

    role: Literal["system", "user", "assistant"]
    content: str


class ResponseFormat(Frozen):
    """A JSON schema the reply must follow (sent as OpenAI ``json_schema`` response format)."""

    name: str
    json_schema: dict[str, Any]


class ChatRequest(Frozen):
    """Everything that determines a model's reply; its hash is the cache key."""

    messages: tuple[ChatMessage, ...] = Field(min_length=1)
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    max_tokens: int | None = Field(default=None, gt=0)
    seed: int | None = None
    response_format: ResponseFormat | None = None
    affinity: str | None = Field(default=None, exclude=True)
    """Routing hint, not content: requests with the same key (one agent's calls) go to one
    server slot, where they extend one cached prompt prefix. Left out of the cache key."""

    def cache_key(self, *, backend: str, model: str) -> str:
        """Content address of this request for a given backend and model."""
        body = {"backend": backend, "model": model, "request": self.model_dump(mode="json")}
        return hashlib.sha256(canonical_json(body).encode("utf-8")).hexdigest()


class Usage(Frozen):
    """Token and cost accounting for one call."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_prompt_tokens: int = 0
    """Prompt tokens the endpoint reused from its prefix cache (included in ``prompt_tokens``;
    the rest were processed)."""
    cost_usd: float = 0.0

    @property
    def total_tokens(self) -> int:
        """Prompt plus completion tokens."""
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            cached_prompt_tokens=self.cached_prompt_tokens + other.cached_prompt_tokens,
            cost_usd=round(self.cost_usd + other.cost_usd, 10),
        )


class ChatResponse(Frozen):
    """A model's reply."""

    content: str
    usage: Usage = Usage()
    model: str
    """The model that answered."""
    cached: bool = False
    """True when served from the response cache (no call was made)."""
    finish_reason: str | None = None
    """Why generation stopped, as the endpoint says (``length``: cut at ``max_tokens``)."""


@runtime_checkable
class ChatModel(Protocol):
    """An async chat-completion backend.

    ``backend`` names the implementation (``openai``, ``offline``) and ``model`` the model id;
    both enter the cache key, so a cached reply is never served for another model.
    """

    backend: str
    model: str

    async def complete(self, request: ChatRequest) -> ChatResponse: ...


def layers(model: ChatModel) -> Iterator[object]:
    """``model`` and the models it wraps (cache, latency …), outermost first: what the backend
    underneath has (an endpoint, a description, an HTTP client) is looked up through them."""
    seen: object = model
    while seen is not None:
        yield seen
        seen = getattr(seen, "inner", None)


async def close_model(model: ChatModel) -> None:
    """Close the HTTP client of the backend under ``model``'s wrappers (cache, latency), if it
    has one, on the event loop that used it. Left open, its connections are closed when it is
    garbage-collected, after that loop has ended, and asyncio prints "Event loop is closed"
    tracebacks (seen after every local-model run of a sweep). Only for the model's owner: a
    closed client cannot send again."""
    for layer in layers(model):
        aclose = getattr(layer, "aclose", None)
        if callable(aclose):
            await aclose()
            return


def describe_model(model: ChatModel) -> str:
    """``backend/model at URL`` for error messages; the URL is looked up through wrappers
    (cache, latency) on the backend that has one."""
    for layer in layers(model):
        endpoint = getattr(layer, "endpoint", None)
        if isinstance(endpoint, str):
            return f"{model.backend}/{model.model} at {endpoint}"
    return f"{model.backend}/{model.model}"


def model_name(model: ChatModel) -> str:
    """``backend:model``: the name a run gives the model behind an agent (its usage line, its
    share of the result, the graph's source model of what the agent concluded)."""
    return f"{model.backend}:{model.model}"
