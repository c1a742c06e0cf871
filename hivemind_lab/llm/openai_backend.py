"""Any OpenAI-compatible chat endpoint (OpenAI, vLLM, Ollama, llama.cpp server) via the openai SDK.

``http_client`` is passed to the SDK as is (an ``openai.DefaultAsyncHttpxClient`` with a custom
transport is how tests inject a local HTTP test transport). The SDK's own retries are switched
off so that retry policy (tenacity: exponential backoff with full jitter on 429, 5xx, timeouts
and connection errors), concurrency bounds, the rate gate (`hivemind_lab.llm.ratelimit`, shared
by a sweep's workers) and cost accounting are ours and visible in tests.

Prompt-prefix reuse: a request's ``affinity`` key pins it to one llama-server slot (``id_slot``)
when the config names the server's slot count, so an agent's calls extend one cached prefix; the
tokens the endpoint reused are read back into ``Usage.cached_prompt_tokens``.
"""

from __future__ import annotations

import asyncio
import hashlib
import random
from typing import Any, Literal

import openai
from pydantic import AliasChoices, Field
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt

from hivemind_lab.envconfig import EnvSettings
from hivemind_lab.errors import HivemindError
from hivemind_lab.llm.base import ChatRequest, ChatResponse, Usage
from hivemind_lab.llm.ratelimit import RateGate


class LLMError(HivemindError):
    """The endpoint refused the request or kept failing after retries."""


class OpenAIConfig(EnvSettings):
    """Connection and accounting settings for an OpenAI-compatible endpoint (a field's alias is
    its environment variable)."""

    model: str = Field(
        min_length=1, validation_alias=AliasChoices("HIVEMIND_MODEL", "OPENAI_MODEL")
    )
    """Model id as the endpoint knows it."""
    base_url: str | None = Field(default=None, validation_alias="OPENAI_BASE_URL")
    """Endpoint root, e.g. http://localhost:11434/v1 for Ollama; None means api.openai.com."""
    api_key: str = Field(default="not-needed", repr=False, validation_alias="OPENAI_API_KEY")
    """Secret; local servers usually accept any value."""
    timeout_s: float = Field(default=120.0, gt=0)
    max_retries: int = Field(default=5, ge=0, le=20)
    backoff_base_s: float = Field(default=0.5, ge=0)
    backoff_max_s: float = Field(default=30.0, gt=0)
    max_concurrency: int = Field(default=8, ge=1, le=1024)
    input_usd_per_mtok: float = Field(default=0.0, ge=0)
    """Price of a million prompt tokens, for cost accounting."""
    output_usd_per_mtok: float = Field(default=0.0, ge=0)
    """Price of a million completion tokens."""
    cached_input_usd_per_mtok: float | None = Field(default=None, ge=0)
    """Price of a million prompt tokens the endpoint served from its prefix cache (hosted
    providers discount them); None charges them as ``input_usd_per_mtok``."""
    server_slots: int | None = Field(default=None, ge=1, le=1024)
    """llama-server's slot count (``-np``): requests with an ``affinity`` key are pinned to one
    slot (``id_slot``). None for endpoints without slots, which would refuse the field."""
    response_format: Literal["json_schema", "json_object", "none"] = "json_schema"
    """How to ask for JSON: servers without schema support accept json_object or none."""


_RETRY_STATUS = frozenset({408, 409})
"""Statuses worth retrying besides 429 and 5xx: request timeout and lock conflict."""
_RETRYABLE = (
    openai.RateLimitError,
    openai.InternalServerError,
    openai.APITimeoutError,
    openai.APIConnectionError,
)


def _transient(error: BaseException) -> bool:
    """Worth another attempt: rate limits, 5xx, timeouts, lost connections, 408 and 409."""
    if isinstance(error, _RETRYABLE):
        return True
    return isinstance(error, openai.APIStatusError) and error.status_code in _RETRY_STATUS


def slot_for(affinity: str, taken: list[int]) -> int:
    """The slot for a new affinity key, given how many keys each slot already holds.

    The least-loaded slot wins, ties going to the first one at or after the key's own hashed
    slot: keys spread evenly within one client, and clients that share a server (sweep
    workers) start from different slots when their keys differ.
    """
    n = len(taken)
    home = int.from_bytes(hashlib.sha256(affinity.encode("utf-8")).digest()[:8], "big") % n
    return min(range(n), key=lambda slot: (taken[slot], (slot - home) % n))


def _cached_prompt_tokens(completion: Any) -> int:
    """Prompt tokens served from the endpoint's prefix cache: OpenAI-style
    ``usage.prompt_tokens_details.cached_tokens``, else llama-server's ``timings.cache_n``."""
    usage = completion.usage
    details = getattr(usage, "prompt_tokens_details", None) if usage else None
    if details is not None and details.cached_tokens is not None:
        return int(details.cached_tokens)
    timings = (completion.model_extra or {}).get("timings")
    if isinstance(timings, dict) and isinstance(timings.get("cache_n"), int):
        return int(timings["cache_n"])
    return 0


def _describe(error: BaseException) -> str:
    """A transport error in words: the SDK's "Connection error." hides the refused connection."""
    if isinstance(error, openai.APIConnectionError) and not isinstance(
        error, openai.APITimeoutError
    ):
        cause = error.__cause__
        return f"server unreachable: {cause or error}"
    return str(error)


class OpenAIChatModel:
    """ChatModel over the openai SDK's async client."""

    backend = "openai"

    def __init__(
        self,
        config: OpenAIConfig,
        *,
        http_client: Any = None,
        sleep: Any = asyncio.sleep,
        rng: random.Random | None = None,
        gate: RateGate | None = None,
    ) -> None:
        self.config = config
        self.gate = gate
        """Spaces this model's requests (retries too) by a rate shared with other callers."""
        self.model = config.model
        self._client = openai.AsyncOpenAI(
            base_url=config.base_url,
            api_key=config.api_key,
            timeout=config.timeout_s,
            max_retries=0,
            http_client=http_client,
        )
        self._semaphore = asyncio.Semaphore(config.max_concurrency)
        self._sleep = sleep
        self._rng = rng or random.Random()
        self._slots: dict[str, int] = {}
        self.calls = 0
        self.retries = 0

    @property
    def endpoint(self) -> str:
        """The base URL requests go to (named in every error)."""
        return self.config.base_url or "https://api.openai.com/v1"

    def slot(self, affinity: str) -> int:
        """The server slot pinned to ``affinity`` (chosen on first use, then fixed)."""
        n = self.config.server_slots
        if n is None:
            raise ValueError(f"{self.endpoint} has no server slots to pin {affinity!r} to")
        if affinity not in self._slots:
            taken = [0] * n
            for used in self._slots.values():
                taken[used] += 1
            self._slots[affinity] = slot_for(affinity, taken)
        return self._slots[affinity]

    def _payload(self, request: ChatRequest) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "model": self.config.model,
            "messages": [m.model_dump() for m in request.messages],
            "temperature": request.temperature,
        }
        if request.max_tokens is not None:
            payload["max_tokens"] = request.max_tokens
        if request.seed is not None:
            payload["seed"] = request.seed
        fmt = request.response_format
        if fmt is not None and self.config.response_format == "json_schema":
            payload["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": fmt.name, "schema": fmt.json_schema, "strict": False},
            }
        elif fmt is not None and self.config.response_format == "json_object":
            payload["response_format"] = {"type": "json_object"}
        if request.affinity is not None and self.config.server_slots is not None:
            # Not an OpenAI parameter: the SDK sends extra_body fields as they are.
            payload["extra_body"] = {"id_slot": self.slot(request.affinity)}
        return payload

    def _backoff(self, attempt: int) -> float:
        """Full jitter: uniform in [0, min(max, base * 2**attempt)]."""
        cap = min(self.config.backoff_max_s, self.config.backoff_base_s * 2**attempt)
        return self._rng.uniform(0, cap)

    def _wait(self, state: RetryCallState) -> float:
        return self._backoff(state.attempt_number - 1)

    def _count_retry(self, state: RetryCallState) -> None:
        self.retries += 1

    def _retrying(self) -> AsyncRetrying:
        return AsyncRetrying(
            stop=stop_after_attempt(self.config.max_retries + 1),
            wait=self._wait,
            retry=retry_if_exception(_transient),
            sleep=self._sleep,
            before_sleep=self._count_retry,
            reraise=True,
        )

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """One chat completion with bounded concurrency and retries."""
        payload = self._payload(request)
        retrying = self._retrying()
        try:
            async for attempt in retrying:
                with attempt:
                    # A concurrency slot is held for the request only, not while backing off.
                    async with self._semaphore:
                        if self.gate is not None:  # in the slot: a start time granted
                            await self.gate.wait()  # while queued for one would pass unused
                        self.calls += 1
                        completion = await self._client.chat.completions.create(**payload)
        except (openai.APIStatusError, openai.APIConnectionError) as exc:
            if isinstance(exc, openai.APIStatusError) and not _transient(exc):
                raise LLMError(
                    f"{self.config.model} at {self.endpoint}: the endpoint refused the "
                    f"request (HTTP {exc.status_code}): {exc.message}"
                ) from exc
            attempts = retrying.statistics.get("attempt_number", 1)
            raise LLMError(
                f"{self.config.model} at {self.endpoint}: gave up after {attempts} "
                f"attempts ({_describe(exc)})"
            ) from exc
        if not completion.choices:
            raise LLMError(
                f"{self.config.model} at {self.endpoint}: the endpoint returned no choices"
            )
        choice = completion.choices[0]
        content = choice.message.content or ""
        prompt = completion.usage.prompt_tokens if completion.usage else 0
        output = completion.usage.completion_tokens if completion.usage else 0
        cached = min(_cached_prompt_tokens(completion), prompt)
        return ChatResponse(
            content=content,
            model=completion.model or self.config.model,
            usage=Usage(
                prompt_tokens=prompt,
                completion_tokens=output,
                cached_prompt_tokens=cached,
                cost_usd=round(self._cost(prompt, cached, output), 10),
            ),
            finish_reason=choice.finish_reason,
        )

    def _cost(self, prompt: int, cached: int, output: int) -> float:
        c = self.config
        cached_price = c.cached_input_usd_per_mtok
        if cached_price is None:
            cached_price = c.input_usd_per_mtok
        return (
            (prompt - cached) * c.input_usd_per_mtok
            + cached * cached_price
            + output * c.output_usd_per_mtok
        ) / 1e6

    async def aclose(self) -> None:
        """Close the underlying HTTP client."""
        await self._client.close()
