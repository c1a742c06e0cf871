"""Resources, prompts and contest subscriptions with real SDK client sessions: a handshake-era
client over stdio, token clients over streamable HTTP (one subscribes, others' votes settle the
contest), a 2026-07-28 client listening on a `subscriptions/listen` stream, and the life cycle
of a subscription (repeated, ended, bounded, dropped with its session) in process."""

from __future__ import annotations

import json
from urllib.parse import quote

import anyio
import pytest
from mcp import Client
from mcp.server.mcpserver import MCPServer
from mcp.server.subscriptions import InMemorySubscriptionBus
from mcp.types import ResourceUpdatedNotification

from hivemind_lab.graph import GraphConfig, HivemindGraph, open_store
from hivemind_lab.mcp_server import catalog
from hivemind_lab.mcp_server.resources import add_resources, conflict_uri
from hivemind_lab.mcp_server.tokens import add_token
from tests.mcp_support import T, data, served, stdio_params

pytestmark = [  # what handshake-era clients (most today) call
    pytest.mark.filterwarnings("ignore:resources/subscribe is removed"),
    pytest.mark.filterwarnings("ignore:resources/unsubscribe is removed"),
]
CLAIM = {"subject": "Pricing power", "predicate": "is", "obj": "durable", "confidence": 0.9}


def _updates(into: list[str]):
    async def handler(message) -> None:
        if isinstance(message, ResourceUpdatedNotification):
            into.append(str(message.params.uri))

    return handler


async def _wait_for(seen: list[str], uri: str) -> None:
    with anyio.fail_after(60):
        while uri not in seen:
            await anyio.sleep(0.05)


async def test_stdio_client_reads_resources_gets_prompts_and_hears_its_contest_settle(tmp_path):
    env = {
        "SOURCE_MODEL": "claude",
        "HIVEMIND_DB_PATH": str(tmp_path / "g.lbdb"),
        "CONFLICT_THRESHOLD": "1",
    }
    seen: list[str] = []
    async with Client(stdio_params(env), mode="legacy", message_handler=_updates(seen)) as client:
        templates = {
            t.uri_template for t in (await client.list_resource_templates()).resource_templates
        }
        assert templates == set(catalog.RESOURCE_TEMPLATES)  # what `serve --help` counts
        assert {p.name for p in (await client.list_prompts()).prompts} == set(catalog.PROMPTS)
        first = data(
            await client.call_tool("hivemind_assert", {**CLAIM, "domain": T, "evidence": "margins"})
        )
        second = data(
            await client.call_tool("hivemind_assert", {**CLAIM, "obj": "fragile", "domain": T})
        )
        (hit,) = second["conflicts_detected"]
        uri = conflict_uri(hit["conflict_id"])
        contest = json.loads((await client.read_resource(uri)).contents[0].text)
        assert contest["status"] == "unresolved"
        await client.subscribe_resource(uri)
        vote = data(
            await client.call_tool(
                "hivemind_resolve", {"conflict_id": hit["conflict_id"], "resolution": "accept_a"}
            )
        )
        assert vote["consensus_reached"] is True
        await _wait_for(seen, uri)
        settled = json.loads((await client.read_resource(uri)).contents[0].text)
        assert settled["status"] == "resolved"

        claims = json.loads(
            (await client.read_resource("hivemind://entities/pricing%20power/assertions"))
            .contents[0]
            .text
        )
        assert {c["id"] for c in claims} == {first["assertion_id"], second["assertion_id"]}
        assert {c["source_model"] for c in claims} == {"claude"}
        record = json.loads(
            (await client.read_resource(f"hivemind://models/claude/track-record/{T}"))
            .contents[0]
            .text
        )
        assert record["model"] == "claude" and record["domain"] == T

        prompt = await client.get_prompt("summarise_subject", {"subject": "pricing power"})
        text = prompt.messages[0].content.text
        assert first["assertion_id"] in text and "claude" in text and "margins" in text
        review = await client.get_prompt("review_conflict", {"conflict_id": hit["conflict_id"]})
        assert "fragile" in review.messages[0].content.text


async def test_an_unknown_conflict_is_a_clean_resource_error(tmp_path):
    env = {"SOURCE_MODEL": "claude", "HIVEMIND_DB_PATH": str(tmp_path / "g.lbdb")}
    async with Client(stdio_params(env), mode="legacy") as client:
        with pytest.raises(Exception, match="unknown conflict") as caught:
            await client.read_resource(conflict_uri("x" * 5_000))
        assert len(str(caught.value)) < 1_000
        with pytest.raises(Exception, match="uri: 50,021 characters, at most") as caught:
            await client.read_resource(conflict_uri("x" * 50_000))  # refused before any lookup
        assert len(str(caught.value)) < 1_000


async def test_http_subscribers_hear_a_contest_settled_by_another_clients_vote(tmp_path):
    tokens_file = tmp_path / "tokens.json"
    tokens = {m: add_token(tokens_file, m) for m in ("claude", "grok", "gemini")}
    env = {"HIVEMIND_DB_PATH": str(tmp_path / "g.lbdb"), "CONFLICT_THRESHOLD": "3"}
    seen: list[str] = []
    unsubscribed: list[str] = []
    listened: list[str] = []
    with served(tmp_path, "http", env, "--token-file", str(tokens_file)) as port:
        url = f"http://127.0.0.1:{port}/mcp"

        def client(model: str, **options) -> Client:
            import httpx2
            from mcp.client.streamable_http import streamable_http_client

            http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {tokens[model]}"})
            return Client(streamable_http_client(url, http_client=http), **options)

        async with (
            client("claude", mode="legacy", message_handler=_updates(seen)) as claude,
            client("grok", mode="legacy", message_handler=_updates(unsubscribed)) as grok,
            client("gemini", mode="2026-07-28") as gemini,
        ):
            data(await claude.call_tool("hivemind_assert", {**CLAIM, "domain": T}))
            hit = data(
                await grok.call_tool("hivemind_assert", {**CLAIM, "obj": "fragile", "domain": T})
            )["conflicts_detected"][0]
            uri = conflict_uri(hit["conflict_id"])
            await claude.subscribe_resource(uri)
            async with gemini.listen(resource_subscriptions=[uri]) as stream:

                async def listen() -> None:
                    async for event in stream:
                        listened.append(str(event.uri))
                        return

                async with anyio.create_task_group() as group:
                    group.start_soon(listen)
                    for voter in (claude, grok, gemini):  # gemini's vote settles it
                        result = data(
                            await voter.call_tool(
                                "hivemind_resolve",
                                {"conflict_id": hit["conflict_id"], "resolution": "accept_b"},
                            )
                        )
                        assert result["consensus_reached"] is (voter is gemini)
                    with anyio.fail_after(60):
                        while not listened:
                            await anyio.sleep(0.05)
            await _wait_for(seen, uri)
    assert listened == [uri]
    assert seen.count(uri) == 1  # once, at settlement: not for the votes before it
    assert unsubscribed == []  # grok voted but never subscribed


async def test_subscriptions_end_repeat_as_one_are_bounded_and_go_with_their_session(tmp_path):
    # In process, to see the subscription table itself.
    config = GraphConfig(db_path=tmp_path / "g.lbdb", conflict_threshold=1)
    store = open_store(config)
    graph = HivemindGraph(store, config)
    server = MCPServer("t")
    subscribers = add_resources(server, graph, InMemorySubscriptionBus())
    subscribers.per_session = 5
    ids = []
    for subject in ("pricing power", "switching costs"):
        graph.assert_claim(subject, "is", "durable", 0.9, T, model="claude")
        hit = graph.assert_claim(subject, "is", "fragile", 0.8, T, model="grok")
        ids.append(hit.conflicts_detected[0].conflict_id)
    kept, ended = (conflict_uri(i) for i in ids)
    seen: list[str] = []
    try:
        async with Client(server, mode="legacy", message_handler=_updates(seen)) as client:
            for _ in range(3):
                await client.subscribe_resource(kept)  # one subscription, not three
            await client.subscribe_resource(ended)
            assert len(subscribers) == 2
            await client.unsubscribe_resource(ended)
            assert len(subscribers) == 1
            for conflict_id in ids:  # both holders vote: the contest is decided
                for model in ("claude", "grok"):
                    await anyio.to_thread.run_sync(
                        lambda c=conflict_id, m=model: graph.resolve(c, "accept_a", model=m)
                    )
            await _wait_for(seen, kept)
            await anyio.sleep(0.5)  # time for any further notification to arrive
            assert seen == [kept]
            for n in range(4):
                await client.subscribe_resource(conflict_uri(f"other-{n}"))
            with pytest.raises(Exception, match="holds 5 subscriptions, the most allowed"):
                await client.subscribe_resource(conflict_uri("one-too-many"))
            await client.subscribe_resource(kept)  # held already: not a sixth
            assert len(subscribers) == 5
        assert len(subscribers) == 0  # the session ended: its subscriptions are gone
    finally:
        store.close()


async def test_the_entity_resource_and_prompt_key_subjects_as_writes_do(tmp_path):
    config = GraphConfig(db_path=tmp_path / "g.lbdb")
    store = open_store(config)
    graph = HivemindGraph(store, config)
    server = MCPServer("t")
    add_resources(server, graph, InMemorySubscriptionBus())
    paris = graph.assert_claim("Paris", "is", "capital", 0.9, T, model="claude").assertion_id
    cat = graph.assert_claim("кот", "is", "a cat", 0.9, T, model="claude").assertion_id
    name = graph.assert_claim("kot", "is", "a surname", 0.9, T, model="claude").assertion_id

    async def about(subject: str) -> set[str]:
        uri = f"hivemind://entities/{quote(subject, safe='')}/assertions"
        return {c["id"] for c in json.loads((await client.read_resource(uri)).contents[0].text)}

    try:
        async with Client(server, mode="legacy") as client:
            for spelling in ("paris", "P\u0430ris", "Pa\u200bris", "ＰＡＲＩＳ"):
                assert await about(spelling) == {paris}, spelling
            assert await about("кот") == {cat}  # Russian: another word than Latin kot
            assert await about("kot") == {name}
            assert await about("k\u043et") == {name}  # Latin with one Cyrillic о
            prompt = await client.get_prompt("summarise_subject", {"subject": "P\u0430ri\u200bs"})
            assert paris in prompt.messages[0].content.text
    finally:
        store.close()
