"""The OpenAI-compatible backend and structured outputs, over a local HTTP test transport."""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Callable
from typing import Any

import httpx2
import openai
import pytest
from pydantic import BaseModel, Field

from hivemind_lab.errors import InputError
from hivemind_lab.llm.base import ChatMessage, ChatRequest, ChatResponse, Usage
from hivemind_lab.llm.cache import ResponseCache
from hivemind_lab.llm.openai_backend import LLMError, OpenAIChatModel, OpenAIConfig, slot_for
from hivemind_lab.llm.structured import StructuredOutputError, complete_structured

BASE_URL = "http://llm.test/v1"


def completion(
    content: str = "ok",
    *,
    model: str = "served-model",
    usage: dict[str, int] | None = None,
    choices: bool = True,
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ]
        if choices
        else [],
    }
    if usage is not None:
        body["usage"] = {**usage, "total_tokens": sum(usage.values())}
    return body


def error(status: int) -> httpx2.Response:
    return httpx2.Response(status, json={"error": {"message": f"status {status}", "type": "x"}})


Reply = httpx2.Response | dict[str, Any] | Exception


class FakeServer:
    """Answers requests from a script, in order, and records what it was sent."""

    def __init__(self, *script: Reply, delay: float = 0.0) -> None:
        self.script = list(script)
        self.delay = delay
        self.requests: list[httpx2.Request] = []
        self.in_flight = 0
        self.max_in_flight = 0

    @property
    def bodies(self) -> list[dict[str, Any]]:
        return [json.loads(r.content) for r in self.requests]

    async def handler(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if self.delay:
                await asyncio.sleep(self.delay)
            reply = self.script.pop(0) if len(self.script) > 1 else self.script[0]
        finally:
            self.in_flight -= 1
        if isinstance(reply, Exception):
            raise reply
        if isinstance(reply, dict):
            return httpx2.Response(200, json=reply)
        return reply


class FakeSleep:
    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


class UpperBoundRng(random.Random):
    """Draws the top of every range, so the backoff cap itself is observable."""

    def __init__(self) -> None:
        super().__init__(0)
        self.bounds: list[tuple[float, float]] = []

    def uniform(self, a: float, b: float) -> float:
        self.bounds.append((a, b))
        return b


@pytest.fixture
async def make_model():
    models: list[OpenAIChatModel] = []

    def make(
        server: FakeServer, sleep: Callable[[float], Any] | None = None, **config: Any
    ) -> OpenAIChatModel:
        rng = config.pop("rng", None)
        settings = {"model": "test-model", "base_url": BASE_URL, "api_key": "sk-test", **config}
        client = openai.DefaultAsyncHttpxClient(transport=httpx2.MockTransport(server.handler))
        model = OpenAIChatModel(
            OpenAIConfig(**settings), http_client=client, sleep=sleep or FakeSleep(), rng=rng
        )
        models.append(model)
        return model

    yield make
    for model in models:
        await model.aclose()


class Verdict(BaseModel):
    decision: str
    score: int = Field(ge=0, le=10)


def _request(**params: Any) -> ChatRequest:
    return ChatRequest(
        messages=(
            ChatMessage(role="system", content="You judge strategies."),
            ChatMessage(role="user", content="Cut prices by 5%?"),
        ),
        **params,
    )


# --- request shape --------------------------------------------------------------------------


async def test_request_shape_with_json_schema(make_model) -> None:
    server = FakeServer(completion("hello"))
    model = make_model(server)
    fmt_request = _request(
        temperature=0.3,
        seed=42,
        max_tokens=200,
        response_format={"name": "Verdict", "json_schema": Verdict.model_json_schema()},
    )
    response = await model.complete(fmt_request)
    assert response.content == "hello"

    [sent] = server.requests
    assert sent.method == "POST"
    assert str(sent.url) == f"{BASE_URL}/chat/completions"
    assert sent.headers["authorization"] == "Bearer sk-test"
    body = json.loads(sent.content)
    assert body["model"] == "test-model"
    assert body["messages"] == [
        {"role": "system", "content": "You judge strategies."},
        {"role": "user", "content": "Cut prices by 5%?"},
    ]
    assert body["temperature"] == 0.3
    assert body["seed"] == 42
    assert body["max_tokens"] == 200
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["name"] == "Verdict"
    assert body["response_format"]["json_schema"]["schema"] == Verdict.model_json_schema()


async def test_optional_parameters_are_omitted(make_model) -> None:
    server = FakeServer(completion())
    await make_model(server).complete(_request())
    body = server.bodies[0]
    assert body["temperature"] == 0.0
    assert "seed" not in body
    assert "max_tokens" not in body
    assert "response_format" not in body


async def test_json_object_mode(make_model) -> None:
    server = FakeServer(completion())
    model = make_model(server, response_format="json_object")
    await model.complete(_request(response_format={"name": "V", "json_schema": {}}))
    assert server.bodies[0]["response_format"] == {"type": "json_object"}


async def test_no_response_format_mode(make_model) -> None:
    server = FakeServer(completion())
    model = make_model(server, response_format="none")
    await model.complete(_request(response_format={"name": "V", "json_schema": {}}))
    assert "response_format" not in server.bodies[0]


# --- usage and cost -------------------------------------------------------------------------


async def test_usage_and_cost_from_the_response(make_model) -> None:
    server = FakeServer(
        completion(usage={"prompt_tokens": 1200, "completion_tokens": 300}, model="gpt-served")
    )
    model = make_model(server, input_usd_per_mtok=2.5, output_usd_per_mtok=10.0)
    response = await model.complete(_request())
    assert response.usage.prompt_tokens == 1200
    assert response.usage.completion_tokens == 300
    assert response.usage.total_tokens == 1500
    assert response.usage.cost_usd == pytest.approx((1200 * 2.5 + 300 * 10.0) / 1e6)
    assert response.model == "gpt-served"
    assert not response.cached


async def test_missing_usage_counts_as_zero(make_model) -> None:
    server = FakeServer(completion())
    model = make_model(server, input_usd_per_mtok=2.5, output_usd_per_mtok=10.0)
    response = await model.complete(_request())
    assert response.usage.total_tokens == 0
    assert response.usage.cost_usd == 0.0


async def test_no_choices_is_an_error(make_model) -> None:
    model = make_model(FakeServer(completion(choices=False)))
    with pytest.raises(LLMError, match="no choices"):
        await model.complete(_request())


def _with_cache_report(
    *, prompt: int, output: int, details: int | None = None, cache_n: int | None = None
) -> dict[str, Any]:
    """A completion whose usage says how much of the prompt the endpoint reused: OpenAI's
    ``prompt_tokens_details.cached_tokens`` and/or llama-server's ``timings.cache_n``."""
    body = completion(usage={"prompt_tokens": prompt, "completion_tokens": output})
    if details is not None:
        body["usage"]["prompt_tokens_details"] = {"cached_tokens": details}
    if cache_n is not None:
        body["timings"] = {"cache_n": cache_n, "prompt_n": prompt - cache_n}
    return body


async def test_reused_prompt_tokens_from_the_usage_details(make_model) -> None:
    server = FakeServer(_with_cache_report(prompt=1000, output=50, details=800, cache_n=1))
    model = make_model(
        server, input_usd_per_mtok=2.0, cached_input_usd_per_mtok=0.5, output_usd_per_mtok=8.0
    )
    usage = (await model.complete(_request())).usage
    assert (usage.prompt_tokens, usage.cached_prompt_tokens) == (1000, 800)
    assert usage.cost_usd == pytest.approx((200 * 2.0 + 800 * 0.5 + 50 * 8.0) / 1e6)


async def test_reused_prompt_tokens_from_llama_server_timings(make_model) -> None:
    server = FakeServer(_with_cache_report(prompt=600, output=20, cache_n=450))
    model = make_model(server, input_usd_per_mtok=1.0)
    usage = (await model.complete(_request())).usage
    assert usage.cached_prompt_tokens == 450
    # Without a cached-token price, reused tokens cost what processed ones do.
    assert usage.cost_usd == pytest.approx(600 * 1.0 / 1e6)


async def test_no_cache_report_counts_nothing_reused(make_model) -> None:
    server = FakeServer(completion(usage={"prompt_tokens": 10, "completion_tokens": 2}))
    assert (await make_model(server).complete(_request())).usage.cached_prompt_tokens == 0


def test_reused_tokens_add_up_and_survive_the_response_cache(tmp_path) -> None:
    one = Usage(prompt_tokens=100, completion_tokens=5, cached_prompt_tokens=60)
    two = Usage(prompt_tokens=120, completion_tokens=7, cached_prompt_tokens=90)
    assert (one + two).cached_prompt_tokens == 150
    cache = ResponseCache(tmp_path / "cache.sqlite")
    request = _request()
    key = request.cache_key(backend="openai", model="m")
    cache.put(
        key,
        backend="openai",
        model="m",
        request=request,
        response=ChatResponse(content="ok", model="m", usage=one),
    )
    again = cache.get(key)
    cache.close()
    assert again is not None and again.usage == one


# --- retries --------------------------------------------------------------------------------


@pytest.mark.parametrize("status", [408, 409, 429, 500, 502, 503])
async def test_retries_transient_errors_then_succeeds(make_model, status: int) -> None:
    server = FakeServer(error(status), error(status), completion("finally"))
    sleep = FakeSleep()
    model = make_model(
        server, sleep, max_retries=5, backoff_base_s=0.5, backoff_max_s=30, rng=random.Random(7)
    )
    response = await model.complete(_request())
    assert response.content == "finally"
    assert len(server.requests) == 3
    assert (model.calls, model.retries) == (3, 2)
    assert len(sleep.delays) == 2
    for attempt, delay in enumerate(sleep.delays):
        assert 0 <= delay <= 0.5 * 2**attempt


async def test_retries_connection_errors(make_model) -> None:
    server = FakeServer(httpx2.ConnectError("connection refused"), completion("back"))
    sleep = FakeSleep()
    model = make_model(server, sleep)
    assert (await model.complete(_request())).content == "back"
    assert len(server.requests) == 2
    assert len(sleep.delays) == 1


async def test_backoff_caps_grow_exponentially_up_to_the_maximum(make_model) -> None:
    server = FakeServer(*[error(503)] * 6, completion())
    sleep = FakeSleep()
    rng = UpperBoundRng()
    model = make_model(server, sleep, max_retries=6, backoff_base_s=0.5, backoff_max_s=5.0, rng=rng)
    await model.complete(_request())
    assert sleep.delays == [0.5, 1.0, 2.0, 4.0, 5.0, 5.0]
    assert all(low == 0 for low, _ in rng.bounds)


async def test_backoff_delays_are_jittered_within_the_cap(make_model) -> None:
    server = FakeServer(*[error(429)] * 8, completion())
    sleep = FakeSleep()
    model = make_model(
        server, sleep, max_retries=8, backoff_base_s=1.0, backoff_max_s=8.0, rng=random.Random(3)
    )
    await model.complete(_request())
    caps = [min(8.0, 1.0 * 2**attempt) for attempt in range(8)]
    assert len(sleep.delays) == 8
    assert all(0 <= d <= cap for d, cap in zip(sleep.delays, caps, strict=True))
    assert len(set(sleep.delays)) > 1  # full jitter, not a fixed schedule


async def test_gives_up_after_max_retries(make_model) -> None:
    server = FakeServer(error(503))
    sleep = FakeSleep()
    model = make_model(server, sleep, max_retries=3)
    with pytest.raises(LLMError, match="gave up after 4 attempts"):
        await model.complete(_request())
    assert len(server.requests) == 4
    assert len(sleep.delays) == 3


async def test_zero_retries_fails_on_first_transient_error(make_model) -> None:
    server = FakeServer(error(429))
    sleep = FakeSleep()
    model = make_model(server, sleep, max_retries=0)
    with pytest.raises(LLMError):
        await model.complete(_request())
    assert len(server.requests) == 1
    assert sleep.delays == []


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
async def test_client_errors_are_not_retried(make_model, status: int) -> None:
    server = FakeServer(error(status), completion("never reached"))
    sleep = FakeSleep()
    model = make_model(server, sleep)
    with pytest.raises(LLMError) as info:
        await model.complete(_request())
    assert f"HTTP {status}" in str(info.value)
    assert len(server.requests) == 1
    assert sleep.delays == []


# --- concurrency ----------------------------------------------------------------------------


async def test_concurrency_is_bounded(make_model) -> None:
    server = FakeServer(completion(), delay=0.02)
    model = make_model(server, max_concurrency=2)
    responses = await asyncio.gather(*(model.complete(_request(seed=i)) for i in range(6)))
    assert len(responses) == 6
    assert len(server.requests) == 6
    assert server.max_in_flight == 2


# --- slot pinning ---------------------------------------------------------------------------


async def test_each_affinity_key_keeps_its_own_server_slot(make_model) -> None:
    server = FakeServer(completion())
    model = make_model(server, server_slots=3)
    keys = ["theory-1", "theory-2", "legal", "theory-1", "legal", "theory-2", "theory-1"]
    for key in keys:
        await model.complete(_request(affinity=key))
    slots = [body["id_slot"] for body in server.bodies]
    by_key: dict[str, set[int]] = {}
    for key, slot in zip(keys, slots, strict=True):
        by_key.setdefault(key, set()).add(slot)
    assert all(len(seen) == 1 for seen in by_key.values())  # stable per key
    assert {next(iter(seen)) for seen in by_key.values()} == {0, 1, 2}  # spread over -np
    # Another client given the keys in the same order pins them the same way.
    again = FakeServer(completion())
    other = make_model(again, server_slots=3)
    for key in keys:
        await other.complete(_request(affinity=key))
    assert [body["id_slot"] for body in again.bodies] == slots


async def test_no_slot_field_without_a_key_or_for_endpoints_without_slots(make_model) -> None:
    server = FakeServer(completion())
    await make_model(server, server_slots=2).complete(_request())
    await make_model(server).complete(_request(affinity="theory-1"))
    assert all("id_slot" not in body for body in server.bodies)


def test_slots_fill_evenly_before_any_is_shared() -> None:
    taken = [0, 0, 0, 0]
    for n in range(12):
        taken[slot_for(f"agent-{n}", taken)] += 1
        assert max(taken) - min(taken) <= 1


def test_affinity_is_not_part_of_the_cache_key() -> None:
    plain = _request().cache_key(backend="local", model="m.gguf")
    assert _request(affinity="theory-1").cache_key(backend="local", model="m.gguf") == plain


# --- configuration --------------------------------------------------------------------------


def test_config_from_env() -> None:
    env = {
        "HIVEMIND_MODEL": "llama3.1:8b",
        "OPENAI_BASE_URL": "http://localhost:11434/v1",
        "OPENAI_API_KEY": "sk-secret-value",
    }
    config = OpenAIConfig.from_env(env)
    assert config.model == "llama3.1:8b"
    assert config.base_url == "http://localhost:11434/v1"
    assert config.api_key == "sk-secret-value"
    assert "sk-secret-value" not in repr(config)


def test_config_from_env_defaults_and_overrides() -> None:
    config = OpenAIConfig.from_env({"OPENAI_MODEL": "gpt-fallback"})
    assert config.model == "gpt-fallback"
    assert config.base_url is None
    assert config.api_key == "not-needed"

    env = {"HIVEMIND_MODEL": "from-env", "OPENAI_MODEL": "ignored"}
    assert OpenAIConfig.from_env(env).model == "from-env"
    overridden = OpenAIConfig.from_env(env, model="from-flag", base_url=None, max_retries=2)
    assert overridden.model == "from-flag"
    assert overridden.max_retries == 2


def test_config_from_env_without_model_names_the_field(monkeypatch: pytest.MonkeyPatch) -> None:
    # The given mapping is used instead of the process environment.
    monkeypatch.setenv("HIVEMIND_MODEL", "from-process-env")
    with pytest.raises(InputError) as info:
        OpenAIConfig.from_env({"OPENAI_API_KEY": "sk-x"})
    assert info.value.field == "model"
    assert "model" in str(info.value)


# --- structured outputs ---------------------------------------------------------------------


async def test_structured_output_sends_the_schema(make_model) -> None:
    server = FakeServer(completion('{"decision": "hold", "score": 7}'))
    result = await complete_structured(make_model(server), _request(), Verdict)
    assert result.value == Verdict(decision="hold", score=7)
    assert len(result.responses) == 1
    fmt = server.bodies[0]["response_format"]
    assert fmt["json_schema"]["name"] == "Verdict"
    assert fmt["json_schema"]["schema"] == Verdict.model_json_schema()


async def test_structured_output_repairs_malformed_json(make_model) -> None:
    bad = "I think we should hold prices, score seven."
    server = FakeServer(completion(bad), completion('{"decision": "hold", "score": 7}'))
    result = await complete_structured(make_model(server), _request(), Verdict)
    assert result.value == Verdict(decision="hold", score=7)
    assert [r.content for r in result.responses] == [bad, '{"decision": "hold", "score": 7}']

    first, second = server.bodies
    assert second["messages"][: len(first["messages"])] == first["messages"]
    assistant, repair = second["messages"][len(first["messages"]) :]
    assert assistant == {"role": "assistant", "content": bad}
    assert repair["role"] == "user"
    assert "not valid JSON" in repair["content"]
    assert second["response_format"] == first["response_format"]


async def test_structured_output_repairs_schema_violations(make_model) -> None:
    server = FakeServer(
        completion('{"decision": "hold", "score": 70}'),
        completion('{"decision": "hold", "score": 7}'),
    )
    result = await complete_structured(make_model(server), _request(), Verdict)
    assert result.value.score == 7
    assert "score" in server.bodies[1]["messages"][-1]["content"]


async def test_structured_output_gives_up_after_the_repair_budget(make_model) -> None:
    server = FakeServer(completion("still not json"))
    with pytest.raises(StructuredOutputError, match="Verdict"):
        await complete_structured(make_model(server), _request(), Verdict, max_repairs=2)
    assert len(server.requests) == 3
    # Each repair round carries the whole conversation so far.
    assert [len(b["messages"]) for b in server.bodies] == [2, 4, 6]


@pytest.mark.parametrize(
    "reply",
    [
        '```json\n{"decision": "cut", "score": 3}\n```',
        'Here is my verdict:\n```json\n{"decision": "cut", "score": 3}\n```\nThanks.',
        '```\n{"decision": "cut", "score": 3}\n```',
        'Sure! {"decision": "cut", "score": 3}',
    ],
)
async def test_structured_output_accepts_fenced_json(make_model, reply: str) -> None:
    server = FakeServer(completion(reply))
    result = await complete_structured(make_model(server), _request(), Verdict)
    assert result.value == Verdict(decision="cut", score=3)
    assert len(server.requests) == 1
