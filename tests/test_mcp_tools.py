"""The MCP tools in process (the SDK's in-memory client against `build_server`): strict argument
types and enums in the schemas, progress and log notifications on both protocol eras, and
read-only tools that do not write."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.server.mcpserver import MCPServer

from hivemind_lab.graph import GraphConfig, HivemindGraph, open_store
from hivemind_lab.mcp_server import ServerSettings, build_server, catalog
from hivemind_lab.mcp_server.app import INSTRUCTIONS

T = "theory"


class Clock:
    """A settable graph clock (auto-fork ages conflicts by it)."""

    def __init__(self) -> None:
        self.now = datetime(2026, 12, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def graph(tmp_path: Path, clock: Clock) -> Iterator[HivemindGraph]:
    config = GraphConfig(db_path=tmp_path / "g.lbdb", conflict_threshold=3)
    store = open_store(config)
    yield HivemindGraph(store, config, clock=clock)
    store.close()


@pytest.fixture
def server(graph: HivemindGraph) -> MCPServer:
    return build_server(graph, ServerSettings(source_model="claude"))


@asynccontextmanager
async def connected(server: MCPServer, **options: Any) -> AsyncIterator[Client]:
    async with Client(server, **options) as client:
        yield client


def conflict_statuses(graph: HivemindGraph) -> list[str]:
    return [r["s"] for r in graph.store.read("MATCH (c:Conflict) RETURN c.status AS s", {})]


def disagree(graph: HivemindGraph) -> None:
    graph.assert_claim("pricing power", "is", "durable", 0.9, T, model="grok")
    graph.assert_claim("pricing power", "is", "fragile", 0.8, T, model="gemini")


@pytest.mark.parametrize(
    ("tool", "args", "field"),
    [
        ("hivemind_assert", {"confidence": "0.5"}, "confidence"),
        ("hivemind_assert", {"confidence": True}, "confidence"),
        ("hivemind_assert", {"subject": 5}, "subject"),
        ("hivemind_assert", {"domain": ["theory"]}, "domain"),
        ("hivemind_query", {"question": "q", "max_tokens": "200"}, "max_tokens"),
        ("hivemind_query", {"question": "q", "max_tokens": 200.5}, "max_tokens"),
        ("hivemind_query", {"question": "q", "min_confidence": "0.3"}, "min_confidence"),
        ("hivemind_patterns", {"min_frequency": "3"}, "min_frequency"),
        ("hivemind_patterns", {"min_frequency": True}, "min_frequency"),
        ("hivemind_conflicts", {"status": "open"}, "status"),
        ("hivemind_resolve", {"conflict_id": "c", "resolution": "accept"}, "resolution"),
    ],
)
async def test_arguments_are_not_coerced(server, graph, tool, args, field):
    claim = {"subject": "s", "predicate": "is", "obj": "o", "confidence": 0.5}
    arguments = {**claim, **args} if tool == "hivemind_assert" else args
    async with connected(server) as client:
        result = await client.call_tool(tool, arguments)
    assert result.is_error
    assert field in result.content[0].text
    assert graph.store.read("MATCH (a:Assertion) RETURN count(a) AS n", {})[0]["n"] == 0


async def test_fixed_sets_are_enums_in_the_tool_schemas(server):
    async with connected(server) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    resolution = tools["hivemind_resolve"].input_schema["properties"]["resolution"]
    assert resolution["enum"] == ["accept_a", "accept_b", "synthesize", "fork"]
    status = tools["hivemind_conflicts"].input_schema["properties"]["status"]
    assert status["enum"] == ["unresolved", "resolved", "forked", "all"]
    assert status["default"] == "unresolved"
    confidence = tools["hivemind_assert"].input_schema["properties"]["confidence"]
    assert confidence["type"] == "number"
    # Results name their fixed sets too: conflict status and kind, assertion status.
    listed = json.dumps(tools["hivemind_conflicts"].output_schema)
    assert '"enum": ["unresolved", "resolved", "forked", "withdrawn"]' in listed
    assert '"enum": ["different_object", "negation"]' in listed
    assert '"enum": ["active", "disproven", "withdrawn"]' in listed
    hit = json.dumps(tools["hivemind_assert"].output_schema)
    assert '"enum": ["contradicts", "negates"]' in hit


async def test_resolve_describes_the_rule_with_this_servers_settings(tmp_path):
    config = GraphConfig(
        db_path=tmp_path / "g.lbdb", conflict_threshold=4, consensus_phi=0.7, consensus_quorum=0.6
    )
    store = open_store(config)
    try:
        server = build_server(HivemindGraph(store, config), ServerSettings(source_model="claude"))
        async with connected(server) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            text = " ".join(tools["hivemind_resolve"].description.split())
    finally:
        store.close()
    assert "posterior probability reaches 0.7" in text and "at least 4 models" in text
    assert "after 72 hours, 60% of them" in text and "not a head count" in text
    assert "average confidence" not in text and "0.618" not in text  # the rules before issue 25
    assert "track record" in INSTRUCTIONS and "0.618 share" not in INSTRUCTIONS


async def test_serve_help_counts_what_a_server_lists(server):
    from typer.testing import CliRunner

    from hivemind_lab.cli.app import app

    shown = CliRunner().invoke(app, ["mcp", "serve", "--help"], env={"COLUMNS": "200"})
    assert shown.exit_code == 0, shown.output
    async with connected(server, mode="legacy") as client:
        tools = [t.name for t in (await client.list_tools()).tools]
        templates = (await client.list_resource_templates()).resource_templates
        prompts = (await client.list_prompts()).prompts
    counted = f"{len(tools)} tools ({', '.join(sorted(tools, key=catalog.TOOLS.index))}), "
    counted += f"{len(templates)} resource templates and {len(prompts)} prompts"
    assert counted in " ".join(shown.output.split())


async def test_listing_conflicts_never_writes_and_writes_fork_stale_ones(server, graph, clock):
    disagree(graph)
    clock.now += timedelta(days=graph.config.auto_fork_days + 1)
    before = graph.store.read("MATCH (c:Conflict) RETURN c.status AS s, c.resolved_at AS r", {})
    async with connected(server) as client:
        listed = await client.call_tool("hivemind_conflicts", {"domain": T, "status": "all"})
        assert not listed.is_error
        assert (
            graph.store.read("MATCH (c:Conflict) RETURN c.status AS s, c.resolved_at AS r", {})
            == before
        )
        assert conflict_statuses(graph) == ["unresolved"]
        # A write tool is where stale conflicts are forked.
        wrote = await client.call_tool(
            "hivemind_assert",
            {"subject": "margin", "predicate": "is", "obj": "thin", "confidence": 0.6, "domain": T},
        )
        assert not wrote.is_error
    assert conflict_statuses(graph) == ["forked"]


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_long_tools_report_increasing_progress(server, graph, mode):
    disagree(graph)
    async with connected(server, mode=mode) as client:
        for tool, args in (
            ("hivemind_patterns", {"domain": T, "min_frequency": 1}),
            ("hivemind_query", {"question": "Is pricing power durable?", "domain": T}),
            (
                "hivemind_assert",
                {"subject": "s", "predicate": "is", "obj": "o", "confidence": 0.5, "domain": T},
            ),
        ):
            seen: list[tuple[float, float | None]] = []

            async def progress(done: float, total: float | None, message: str | None) -> None:
                seen.append((done, total))  # noqa: B023 (consumed before the next tool)

            result = await client.call_tool(tool, args, progress_callback=progress)
            assert not result.is_error
            assert len(seen) >= 3, tool
            assert [d for d, _ in seen] == sorted(d for d, _ in seen)
            assert seen[-1][0] == seen[-1][1]


@pytest.mark.filterwarnings("ignore:The logging capability is deprecated")  # the client's side
async def test_log_messages_follow_the_requested_level_in_both_eras(server, graph):
    graph.assert_claim("pricing power", "is", "durable", 0.9, T, model="grok")
    conflicting = {
        "subject": "pricing power",
        "predicate": "is",
        "obj": "fragile",
        "confidence": 0.7,
        "domain": T,
    }
    received: list[tuple[str, str]] = []

    async def on_log(params) -> None:
        received.append((params.level, str(params.data)))

    async with connected(server, mode="legacy", logging_callback=on_log) as client:
        await client.set_logging_level("warning")
        await client.call_tool("hivemind_assert", conflicting)
        assert received == []  # notices are below the requested level
        await client.set_logging_level("notice")
        await client.call_tool("hivemind_assert", {**conflicting, "obj": "fading"})
    assert any(level == "notice" and "grok" in data for level, data in received)

    received.clear()
    async with connected(server, mode="2026-07-28", logging_callback=on_log) as client:
        await client.call_tool("hivemind_assert", {**conflicting, "obj": "weak"})
        assert received == []  # 2026-07-28: no log messages without a per-request opt-in
    async with connected(
        server, mode="2026-07-28", logging_callback=on_log, log_level="notice"
    ) as client:
        await client.call_tool("hivemind_assert", {**conflicting, "obj": "eroding"})
    assert any(level == "notice" and "grok" in data for level, data in received)


async def test_logging_is_declared_for_handshake_clients(server):
    async with connected(server, mode="legacy") as client:
        assert client.server_capabilities.logging is not None
        assert client.server_capabilities.tools is not None


async def test_retract_acts_only_on_the_callers_own_claims(server, graph):
    theirs = graph.assert_claim("margin", "is", "thin", 0.7, T, model="grok")
    async with connected(server) as client:
        refused = await client.call_tool(
            "hivemind_retract", {"assertion_id": theirs.assertion_id, "reason": "wrong"}
        )
        assert refused.is_error
        assert "grok" in refused.content[0].text
        mine = await client.call_tool(
            "hivemind_assert",
            {"subject": "margin", "predicate": "is", "obj": "fat", "confidence": 0.6, "domain": T},
        )
        (hit,) = mine.structured_content["conflicts_detected"]
        withdrawn = await client.call_tool(
            "hivemind_retract",
            {"assertion_id": mine.structured_content["assertion_id"], "reason": "misread"},
        )
        assert withdrawn.structured_content["conflicts_closed"] == [hit["conflict_id"]]
        assert withdrawn.structured_content["model"] == "claude"
