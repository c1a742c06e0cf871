"""The content-addressed response cache and replay mode."""

from __future__ import annotations

from pathlib import Path

import pytest

from hivemind_lab.errors import CacheMissError, InputError
from hivemind_lab.llm.base import (
    ChatMessage,
    ChatModel,
    ChatRequest,
    ChatResponse,
    ResponseFormat,
    Usage,
)
from hivemind_lab.llm.cache import CachingChatModel, ResponseCache


class FakeChatModel:
    """A real ChatModel: answers with a numbered reply and counts its calls."""

    def __init__(self, backend: str = "fake", model: str = "fake-1") -> None:
        self.backend = backend
        self.model = model
        self.calls = 0
        self.requests: list[ChatRequest] = []

    async def complete(self, request: ChatRequest) -> ChatResponse:
        self.calls += 1
        self.requests.append(request)
        return ChatResponse(
            content=f"reply {self.calls} from {self.model} to {request.messages[-1].content}",
            model=self.model,
            usage=Usage(prompt_tokens=11, completion_tokens=7, cost_usd=0.0025),
        )


def _request(text: str = "Which price should we set?", **params: object) -> ChatRequest:
    return ChatRequest(
        messages=(
            ChatMessage(role="system", content="You are a strategist."),
            ChatMessage(role="user", content=text),
        ),
        **params,
    )


@pytest.fixture
def cache(tmp_path: Path):
    cache = ResponseCache(tmp_path / "cache" / "responses.sqlite")
    yield cache
    cache.close()


def test_fake_model_implements_the_protocol() -> None:
    assert isinstance(FakeChatModel(), ChatModel)


async def test_miss_then_hit(cache: ResponseCache) -> None:
    inner = FakeChatModel()
    model = CachingChatModel(inner, cache)
    assert (model.backend, model.model) == ("fake", "fake-1")

    first = await model.complete(_request(temperature=0.7, seed=1))
    assert not first.cached
    assert inner.calls == 1
    assert (model.hits, model.misses) == (0, 1)
    assert len(cache) == 1

    # An equal request built afresh is served from the cache.
    second = await model.complete(_request(temperature=0.7, seed=1))
    assert second.cached
    assert inner.calls == 1
    assert (model.hits, model.misses) == (1, 1)
    assert second.content == first.content
    assert second.usage == first.usage
    assert second.model == first.model
    assert len(cache) == 1
    assert len(model.keys_used) == 1


@pytest.mark.parametrize(
    "variant",
    [
        _request("A different question?"),
        ChatRequest(messages=(ChatMessage(role="user", content="Which price should we set?"),)),
        ChatRequest(
            messages=(
                ChatMessage(role="user", content="You are a strategist."),
                ChatMessage(role="user", content="Which price should we set?"),
            )
        ),
        _request(temperature=0.2),
        _request(seed=7),
        _request(max_tokens=64),
        _request(response_format=ResponseFormat(name="Verdict", json_schema={"type": "object"})),
    ],
    ids=["message", "fewer-messages", "role", "temperature", "seed", "max-tokens", "format"],
)
async def test_any_request_difference_changes_the_key(
    cache: ResponseCache, variant: ChatRequest
) -> None:
    base = _request()
    assert variant != base
    assert variant.cache_key(backend="fake", model="fake-1") != base.cache_key(
        backend="fake", model="fake-1"
    )
    inner = FakeChatModel()
    model = CachingChatModel(inner, cache)
    await model.complete(base)
    response = await model.complete(variant)
    assert not response.cached
    assert inner.calls == 2
    assert len(cache) == 2


async def test_seed_values_are_distinguished(cache: ResponseCache) -> None:
    inner = FakeChatModel()
    model = CachingChatModel(inner, cache)
    await model.complete(_request(seed=1))
    assert not (await model.complete(_request(seed=2))).cached
    assert not (await model.complete(_request())).cached  # no seed at all
    assert (await model.complete(_request(seed=1))).cached
    assert inner.calls == 3


async def test_another_model_is_never_served_a_cached_reply(cache: ResponseCache) -> None:
    one = FakeChatModel(model="fake-1")
    two = FakeChatModel(model="fake-2")
    await CachingChatModel(one, cache).complete(_request())
    response = await CachingChatModel(two, cache).complete(_request())
    assert not response.cached
    assert "fake-2" in response.content
    assert two.calls == 1


async def test_another_backend_is_never_served_a_cached_reply(cache: ResponseCache) -> None:
    local = FakeChatModel(backend="local", model="same")
    remote = FakeChatModel(backend="remote", model="same")
    await CachingChatModel(local, cache).complete(_request())
    response = await CachingChatModel(remote, cache).complete(_request())
    assert not response.cached
    assert remote.calls == 1
    assert len(cache) == 2


async def test_explicit_backend_and_model_override_the_inner_names(cache: ResponseCache) -> None:
    inner = FakeChatModel()
    model = CachingChatModel(inner, cache, backend="openai", model="gpt-x")
    assert (model.backend, model.model) == ("openai", "gpt-x")
    await model.complete(_request())
    assert model.keys_used == {_request().cache_key(backend="openai", model="gpt-x")}


async def test_replay_serves_cached_responses_without_a_backend(cache: ResponseCache) -> None:
    recorder = CachingChatModel(FakeChatModel(), cache)
    recorded = [await recorder.complete(_request(f"question {i}")) for i in range(3)]

    replay = CachingChatModel(None, cache, mode="replay", backend="fake", model="fake-1")
    replayed = [await replay.complete(_request(f"question {i}")) for i in range(3)]
    assert [r.content for r in replayed] == [r.content for r in recorded]
    assert all(r.cached for r in replayed)
    assert (replay.hits, replay.misses) == (3, 0)

    with pytest.raises(CacheMissError):
        await replay.complete(_request("a question never asked"))


async def test_replay_never_calls_the_backend_even_when_given_one(cache: ResponseCache) -> None:
    inner = FakeChatModel()
    replay = CachingChatModel(inner, cache, mode="replay")
    with pytest.raises(CacheMissError):
        await replay.complete(_request())
    assert inner.calls == 0
    assert len(cache) == 0


async def test_replay_for_another_model_misses(cache: ResponseCache) -> None:
    await CachingChatModel(FakeChatModel(), cache).complete(_request())
    replay = CachingChatModel(None, cache, mode="replay", backend="fake", model="fake-2")
    with pytest.raises(CacheMissError):
        await replay.complete(_request())


@pytest.mark.parametrize(
    "kwargs",
    [
        {"mode": "read_write", "backend": "fake", "model": "fake-1"},
        {"mode": "replay", "model": "fake-1"},
        {"mode": "replay", "backend": "fake"},
    ],
)
def test_a_backend_is_required_unless_replaying(cache: ResponseCache, kwargs: dict) -> None:
    with pytest.raises(InputError) as info:
        CachingChatModel(None, cache, **kwargs)
    assert info.value.field == "inner"


async def test_write_only_always_calls_and_first_writer_wins(cache: ResponseCache) -> None:
    inner = FakeChatModel()
    model = CachingChatModel(inner, cache, mode="write_only")
    first = await model.complete(_request())
    second = await model.complete(_request())
    assert inner.calls == 2
    assert not second.cached
    assert first.content != second.content
    assert len(cache) == 1
    hit = await CachingChatModel(inner, cache).complete(_request())
    assert hit.cached
    assert hit.content == first.content


async def test_cache_persists_across_reopen(tmp_path: Path) -> None:
    path = tmp_path / "responses.sqlite"
    first_cache = ResponseCache(path)
    recorded = await CachingChatModel(FakeChatModel(), first_cache).complete(_request())
    first_cache.close()

    reopened = ResponseCache(path)
    try:
        assert len(reopened) == 1
        inner = FakeChatModel()
        response = await CachingChatModel(inner, reopened).complete(_request())
        assert response.cached
        assert response.content == recorded.content
        assert response.usage == recorded.usage
        assert inner.calls == 0
    finally:
        reopened.close()


async def test_copy_to_copies_all_entries(cache: ResponseCache, tmp_path: Path) -> None:
    model = CachingChatModel(FakeChatModel(), cache)
    recorded = [await model.complete(_request(f"q{i}")) for i in range(3)]
    target = ResponseCache(tmp_path / "copy.sqlite")
    try:
        assert cache.copy_to(target) == 3
        assert len(target) == 3
        cache.copy_to(target)  # copying again adds nothing
        assert len(target) == 3
        replay = CachingChatModel(None, target, mode="replay", backend="fake", model="fake-1")
        replayed = [await replay.complete(_request(f"q{i}")) for i in range(3)]
        assert [r.content for r in replayed] == [r.content for r in recorded]
    finally:
        target.close()


async def test_copy_to_copies_only_the_selected_keys(cache: ResponseCache, tmp_path: Path) -> None:
    await CachingChatModel(FakeChatModel(), cache).complete(_request("unused"))
    run = CachingChatModel(FakeChatModel(), cache)
    await run.complete(_request("used 1"))
    await run.complete(_request("used 2"))
    assert len(cache) == 3

    target = ResponseCache(tmp_path / "run-cache.sqlite")
    try:
        assert cache.copy_to(target, keys=run.keys_used) == 2
        assert len(target) == 2
        replay = CachingChatModel(None, target, mode="replay", backend="fake", model="fake-1")
        assert (await replay.complete(_request("used 2"))).cached
        with pytest.raises(CacheMissError):
            await replay.complete(_request("unused"))
    finally:
        target.close()


def test_cached_flag_is_not_stored(cache: ResponseCache) -> None:
    request = _request()
    key = request.cache_key(backend="fake", model="fake-1")
    response = ChatResponse(content="x", model="fake-1", cached=True)
    cache.put(key, backend="fake", model="fake-1", request=request, response=response)
    stored = cache.get(key)
    assert stored is not None
    assert not stored.cached
    assert cache.get("0" * 64) is None
