"""The MCP server with real client sessions from the SDK: stdio (spawned `hivemind-lab mcp
serve`) and streamable HTTP (one server, three clients with their own tokens)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

import httpx2
import pytest
from mcp import Client
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from hivemind_lab.mcp_server.tokens import add_token
from tests.support import REPO, child_env

TOOLS = {
    "hivemind_assert",
    "hivemind_query",
    "hivemind_conflicts",
    "hivemind_resolve",
    "hivemind_divergence",
    "hivemind_patterns",
    "hivemind_retract",
}
T = "theory"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def served(tmp_path: Path, transport: str, env: dict[str, str], *extra: str) -> Iterator[int]:
    """`hivemind-lab mcp serve` in a subprocess on a free port, until the block ends."""
    port = free_port()
    log = (tmp_path / f"{transport}-{port}.log").open("w")
    command = [sys.executable, "-m", "hivemind_lab", "mcp", "serve", "--transport", transport]
    proc = subprocess.Popen(
        [*command, "--port", str(port), *extra],
        env=child_env(tmp_path, **env),
        stdout=log,
        stderr=log,
    )
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            assert proc.poll() is None, (tmp_path / f"{transport}-{port}.log").read_text()
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                time.sleep(0.2)
        yield port
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        log.close()


def stdio_params(env: dict[str, str]) -> StdioServerParameters:
    home = Path(env.get("HIVEMIND_DB_PATH", REPO / ".cache" / "home")).parent
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "hivemind_lab", "mcp", "serve"],
        env=child_env(home, **env),
    )


def data(result) -> dict:
    assert not result.is_error, result.content[0].text
    return result.structured_content


# -- stdio ---------------------------------------------------------------------------------------


async def test_stdio_lists_tools_with_schemas_and_calls_every_tool(tmp_path):
    env = {
        "SOURCE_MODEL": "claude",
        "HIVEMIND_DB_PATH": str(tmp_path / "g.lbdb"),
        "CONFLICT_THRESHOLD": "1",
    }
    async with Client(stdio_params(env)) as client:  # negotiates 2026-07-28: no ping
        listed = {t.name: t for t in (await client.list_tools()).tools}
        assert set(listed) == TOOLS
        for tool in listed.values():
            assert tool.description
            assert tool.input_schema["type"] == "object"
            assert tool.annotations is not None
        assert listed["hivemind_query"].annotations.read_only_hint is True
        assert listed["hivemind_assert"].annotations.read_only_hint is False
        assert listed["hivemind_resolve"].annotations.idempotent_hint is True
        assert listed["hivemind_assert"].input_schema["required"] == [
            "subject",
            "predicate",
            "obj",
            "confidence",
        ]

        first = data(
            await client.call_tool(
                "hivemind_assert",
                {
                    "subject": "consciousness",
                    "predicate": "is",
                    "obj": "emergent",
                    "confidence": 0.9,
                    "domain": T,
                    "evidence": "integration of information",
                },
            )
        )
        assert first["stored"] is True
        second = data(
            await client.call_tool(
                "hivemind_assert",
                {
                    "subject": "consciousness",
                    "predicate": "is",
                    "obj": "computation",
                    "confidence": 0.6,
                    "domain": T,
                },
            )
        )
        (hit,) = second["conflicts_detected"]
        assert hit["other_model"] == "claude"  # a stdio server speaks for one model
        conflicts = data(await client.call_tool("hivemind_conflicts", {"domain": T}))["result"]
        assert conflicts[0]["conflict_id"] == hit["conflict_id"]
        vote = data(
            await client.call_tool(
                "hivemind_resolve",
                {
                    "conflict_id": hit["conflict_id"],
                    "resolution": "accept_a",
                    "evidence": "fits the data",
                },
            )
        )
        assert vote["voter"] == "claude"
        assert vote["consensus_reached"] is True
        answer = await client.call_tool(
            "hivemind_query", {"question": "What is consciousness?", "max_tokens": 400, "domain": T}
        )
        text = answer.content[0].text
        assert text.startswith('## Query: "What is consciousness?"')
        assert "Used:" in text
        divergence = data(
            await client.call_tool(
                "hivemind_divergence", {"model_a": "claude", "model_b": "grok", "domain": T}
            )
        )
        assert divergence["unique_to_a"]
        patterns = data(
            await client.call_tool("hivemind_patterns", {"domain": T, "min_frequency": 1})
        )
        assert set(patterns) >= {"motifs", "clusters", "islands", "cross_model_patterns"}
        withdrawn = data(
            await client.call_tool(
                "hivemind_retract",
                {"assertion_id": first["assertion_id"], "reason": "disproven by the vote"},
            )
        )
        assert withdrawn["model"] == "claude"
        assert listed["hivemind_retract"].annotations.destructive_hint is True


HEAVY_AT_START = ("sklearn", "scipy", "openai", "tiktoken", "polars", "ray", "optuna", "networkx")
"""Modules a stdio server must not import before its first tool call."""


def _started_stdio(tmp_path: Path, *python_flags: str) -> tuple[subprocess.Popen, float]:
    """Spawn a stdio server, complete initialize and tools/list; returns it and the wall time.
    Its stderr goes to ``tmp_path / "stderr.txt"``."""
    env = child_env(tmp_path, SOURCE_MODEL="claude", HIVEMIND_DB_PATH=str(tmp_path / "g.lbdb"))
    command = [sys.executable, *python_flags, "-m", "hivemind_lab", "mcp", "serve"]
    start = time.perf_counter()
    with (tmp_path / "stderr.txt").open("wb") as stderr:
        proc = subprocess.Popen(
            command, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr
        )
    assert proc.stdin is not None and proc.stdout is not None
    hello = _rpc(
        "initialize",
        protocolVersion="2025-11-25",
        capabilities={},
        clientInfo={"name": "t", "version": "1"},
    )
    listing = {**_rpc("tools/list"), "id": 2}
    for message in (hello, {"jsonrpc": "2.0", "method": "notifications/initialized"}, listing):
        proc.stdin.write(json.dumps(message).encode() + b"\n")
    proc.stdin.flush()
    replies = [json.loads(proc.stdout.readline()) for _ in range(2)]
    assert len(replies[1]["result"]["tools"]) == len(TOOLS)
    return proc, time.perf_counter() - start


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads CPU time from /proc")
def test_stdio_server_starts_in_well_under_one_and_a_half_seconds(tmp_path):
    # CPU time (user + system) of the server until it answered tools/list: the work start-up
    # costs, independent of how loaded the machine is. 1.2 s leaves margin under the 1.5 s goal.
    proc, wall = _started_stdio(tmp_path)
    fields = Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
    cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    proc.stdin.close()  # type: ignore[union-attr]
    proc.wait(timeout=30)
    assert cpu < 1.2, f"start-up took {cpu:.2f} s of CPU ({wall:.2f} s wall)"


def test_stdio_server_imports_nothing_heavy_before_the_first_call(tmp_path):
    proc, _ = _started_stdio(tmp_path, "-X", "importtime")
    proc.stdin.close()  # type: ignore[union-attr]
    proc.wait(timeout=30)
    imported = {
        line.rsplit("|", 1)[1].strip().split(".")[0]
        for line in (tmp_path / "stderr.txt").read_text().splitlines()
        if line.startswith("import time:")
    }
    assert imported & set(HEAVY_AT_START) == set()
    assert "mcp" in imported  # the measurement saw the server's imports


@pytest.mark.parametrize(
    ("tool", "args", "message"),
    [
        (
            "hivemind_assert",
            {"subject": "s", "predicate": "is", "obj": "o", "confidence": 1.5},
            "confidence",
        ),
        (
            "hivemind_assert",
            {"subject": "s", "predicate": "is", "obj": "o", "confidence": "high"},
            "confidence",
        ),
        (
            "hivemind_assert",
            {"subject": "s" * 5000, "predicate": "is", "obj": "o", "confidence": 0.5},
            "subject",
        ),
        (
            "hivemind_assert",
            {"subject": "s", "predicate": "is", "obj": "o", "confidence": 0.5, "domain": "x"},
            "domain",
        ),
        ("hivemind_resolve", {"conflict_id": "nope", "resolution": "fork"}, "unknown conflict"),
        ("hivemind_resolve", {"conflict_id": "nope", "resolution": "maybe"}, "resolution"),
        (
            "hivemind_resolve",
            {"conflict_id": "nope", "resolution": "synthesize"},
            "synthesized_claim",
        ),
        ("hivemind_query", {"question": "q", "max_tokens": 5}, "max_tokens"),
    ],
)
async def test_bad_arguments_are_tool_errors_and_store_nothing(tmp_path, tool, args, message):
    env = {"SOURCE_MODEL": "claude", "HIVEMIND_DB_PATH": str(tmp_path / "g.lbdb")}
    async with Client(stdio_params(env)) as client:
        result = await client.call_tool(tool, args)
        assert result.is_error
        assert message in result.content[0].text
        # The server keeps serving, and nothing was stored.
        conflicts = data(
            await client.call_tool("hivemind_conflicts", {"domain": "general", "status": "all"})
        )
        assert conflicts["result"] == []
        report = data(
            await client.call_tool("hivemind_divergence", {"model_a": "claude", "model_b": "x"})
        )
        assert report["unique_to_a"] == []


def test_missing_or_bad_configuration_fails_at_start(tmp_path):
    # Built from nothing: an exported NEO4J_PASSWORD or SOURCE_MODEL must not change the outcome.
    env = child_env(tmp_path, HIVEMIND_DB_PATH=str(tmp_path / "g.lbdb"))
    base = [sys.executable, "-m", "hivemind_lab", "mcp", "serve"]
    missing = subprocess.run(base, env=env, capture_output=True, text=True, timeout=60)
    assert missing.returncode == 2
    assert "SOURCE_MODEL" in missing.stderr
    bad_phi = subprocess.run(
        base,
        env={**env, "SOURCE_MODEL": "claude", "CONSENSUS_PHI": "2"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad_phi.returncode == 2
    assert "CONSENSUS_PHI" in bad_phi.stderr
    exposed = subprocess.run(
        [*base, "--transport", "http", "--host", "0.0.0.0"],
        env={**env, "SOURCE_MODEL": "claude"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert exposed.returncode == 2
    assert "loopback" in exposed.stderr
    no_neo4j_password = subprocess.run(
        base,
        env={
            **env,
            "SOURCE_MODEL": "claude",
            "HIVEMIND_STORE": "neo4j",
            "NEO4J_URI": "bolt://127.0.0.1:1",
            "NEO4J_USER": "neo4j",
        },
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert no_neo4j_password.returncode == 2
    assert "NEO4J_PASSWORD" in no_neo4j_password.stderr


async def test_three_stdio_servers_share_one_neo4j_graph(neo4j_settings):
    from hivemind_lab.graph import GraphConfig, open_store

    config = GraphConfig(
        store="neo4j",
        neo4j_uri=neo4j_settings["NEO4J_URI"],
        neo4j_user=neo4j_settings["NEO4J_USER"],
        neo4j_password=neo4j_settings["NEO4J_PASSWORD"],
    )
    store = open_store(config)
    store.wipe()
    store.close()
    base = {"HIVEMIND_STORE": "neo4j", "CONFLICT_THRESHOLD": "3", **neo4j_settings}
    clients = {
        m: Client(stdio_params({**base, "SOURCE_MODEL": m})) for m in ("claude", "grok", "gemini")
    }
    async with clients["claude"] as claude, clients["grok"] as grok, clients["gemini"] as gemini:
        await claude.call_tool(
            "hivemind_assert",
            {
                "subject": "pricing power",
                "predicate": "is",
                "obj": "durable",
                "confidence": 0.9,
                "domain": T,
            },
        )
        hit = data(
            await grok.call_tool(
                "hivemind_assert",
                {
                    "subject": "Pricing Power",
                    "predicate": "is",
                    "obj": "fragile",
                    "confidence": 0.8,
                    "domain": T,
                },
            )
        )
        (conflict,) = hit["conflicts_detected"]
        assert conflict["other_model"] == "claude"
        await gemini.call_tool(
            "hivemind_assert",
            {
                "subject": "switching costs",
                "predicate": "causes",
                "obj": "pricing power",
                "confidence": 0.7,
                "domain": "method",
            },
        )
        votes = [
            data(
                await c.call_tool(
                    "hivemind_resolve", {"conflict_id": conflict["conflict_id"], "resolution": r}
                )
            )
            for c, r in ((claude, "accept_a"), (grok, "accept_b"))
        ]
        # both holders have voted, but CONFLICT_THRESHOLD (3) voters are needed
        assert votes[-1]["consensus_reached"] is False
        assert votes[-1]["final"] is False
        final = data(
            await gemini.call_tool(
                "hivemind_resolve",
                {"conflict_id": conflict["conflict_id"], "resolution": "accept_a"},
            )
        )
        assert final["consensus_reached"] is True
        assert final["consensus_resolution"] == "accept_a"
        divergence = data(
            await gemini.call_tool(
                "hivemind_divergence", {"model_a": "gemini", "model_b": "claude", "domain": T}
            )
        )
        assert divergence["blind_spots_a"] == ["theory"]  # gemini only voted there
        assert divergence["blind_spots_b"] == ["method"]


# -- HTTP ------------------------------------------------------------------------------------------


@pytest.fixture
def http_server(tmp_path) -> Iterator[dict]:
    """One HTTP server on the embedded store, with tokens for claude, grok and gemini."""
    tokens_file = tmp_path / "tokens.json"
    tokens = {m: add_token(tokens_file, m) for m in ("claude", "grok", "gemini", "nomi-1")}
    env = {"HIVEMIND_DB_PATH": str(tmp_path / "g.lbdb"), "CONFLICT_THRESHOLD": "3"}
    with served(tmp_path, "http", env, "--token-file", str(tokens_file)) as port:
        yield {"url": f"http://127.0.0.1:{port}/mcp", "tokens": tokens, "port": port}


@asynccontextmanager
async def http_session(url: str, token: str) -> AsyncIterator[ClientSession]:
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}) as http,
        streamable_http_client(url, http_client=http) as streams,
        ClientSession(streams[0], streams[1]) as session,
    ):
        await session.initialize()
        yield session


def _rpc(method: str, **params) -> dict:
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}


def test_http_refuses_missing_or_wrong_tokens_and_foreign_hosts(http_server):
    url = http_server["url"]
    assert httpx2.post(url, json=_rpc("tools/list")).status_code == 401
    wrong = httpx2.post(
        url, json=_rpc("tools/list"), headers={"Authorization": "Bearer hm_not-a-token"}
    )
    assert wrong.status_code == 401
    rebinding = httpx2.post(
        url,
        json=_rpc("tools/list"),
        headers={
            "Authorization": f"Bearer {http_server['tokens']['claude']}",
            "Host": "evil.example:80",
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        },
    )
    assert rebinding.status_code in (400, 403, 421)
    huge = httpx2.post(
        url,
        content=b"{" + b" " * 2_000_000 + b"}",
        headers={
            "Authorization": f"Bearer {http_server['tokens']['claude']}",
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        },
    )
    assert huge.status_code == 413


async def test_three_http_clients_share_one_embedded_graph(http_server):
    url, tokens = http_server["url"], http_server["tokens"]
    async with (
        http_session(url, tokens["claude"]) as claude,
        http_session(url, tokens["grok"]) as grok,
        http_session(url, tokens["gemini"]) as gemini,
    ):
        await claude.send_ping()
        assert {t.name for t in (await claude.list_tools()).tools} == TOOLS
        data(
            await claude.call_tool(
                "hivemind_assert",
                {
                    "subject": "market share",
                    "predicate": "equals",
                    "obj": "22 percent",
                    "confidence": 0.9,
                    "domain": T,
                },
            )
        )
        # Spoofing: an extra identity argument is refused or ignored; the token decides.
        spoof = await grok.call_tool(
            "hivemind_assert",
            {
                "subject": "market share",
                "predicate": "equals",
                "obj": "18 percent",
                "confidence": 0.7,
                "domain": T,
                "source_model": "claude",
            },
        )
        if not spoof.is_error:
            (hit,) = spoof.structured_content["conflicts_detected"]
            assert hit["other_model"] == "claude"
        else:
            spoof = await grok.call_tool(
                "hivemind_assert",
                {
                    "subject": "market share",
                    "predicate": "equals",
                    "obj": "18 percent",
                    "confidence": 0.7,
                    "domain": T,
                },
            )
            (hit,) = data(spoof)["conflicts_detected"]
        view = data(await gemini.call_tool("hivemind_conflicts", {"domain": T}))["result"][0]
        assert {view["assertion_a"]["source_model"], view["assertion_b"]["source_model"]} == {
            "claude",
            "grok",
        }
        data(
            await gemini.call_tool(
                "hivemind_assert",
                {
                    "subject": "discounter",
                    "predicate": "causes",
                    "obj": "price pressure",
                    "confidence": 0.8,
                    "domain": "method",
                },
            )
        )
        cid = hit["conflict_id"]
        for session, vote in ((claude, "synthesize"), (grok, "synthesize"), (gemini, "synthesize")):
            result = data(
                await session.call_tool(
                    "hivemind_resolve",
                    {
                        "conflict_id": cid,
                        "resolution": vote,
                        "synthesized_claim": "market share is about 20 percent",
                    },
                )
            )
        assert result["consensus_reached"] is True
        assert result["voter"] == "gemini"
        assert result["current_votes"]["synthesize"] == pytest.approx(1.0)
        divergence = data(
            await claude.call_tool(
                "hivemind_divergence", {"model_a": "gemini", "model_b": "claude", "domain": T}
            )
        )
        assert divergence["blind_spots_b"] == ["method"]
        answer = (
            (
                await grok.call_tool(
                    "hivemind_query",
                    {"question": "What is the market share?", "max_tokens": 250, "domain": T},
                )
            )
            .content[0]
            .text
        )
        assert "20 percent" in answer
        used = int(answer.rsplit("Used: ", 1)[1].split(" /")[0])
        assert used <= 250


async def test_http_speaks_protocol_2026_07_28_with_progress_and_logs(tmp_path):
    env = {"SOURCE_MODEL": "claude", "HIVEMIND_DB_PATH": str(tmp_path / "g.lbdb")}
    progress: list[float] = []
    logs: list[str] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append(done)

    async def on_log(params) -> None:
        logs.append(str(params.data))

    with served(tmp_path, "http", env) as port:
        async with Client(
            f"http://127.0.0.1:{port}/mcp",
            mode="2026-07-28",
            log_level="notice",
            logging_callback=on_log,
        ) as client:
            assert {t.name for t in (await client.list_tools()).tools} == TOOLS
            claim = {"subject": "x", "predicate": "is", "obj": "a", "confidence": 0.5, "domain": T}
            await client.call_tool("hivemind_assert", claim)
            await client.call_tool(
                "hivemind_assert", {**claim, "obj": "b"}, progress_callback=on_progress
            )
    assert progress == [0.0, 1.0, 2.0]
    assert any("conflict" in line for line in logs)


def test_token_file_stores_only_hashes(tmp_path):
    path = tmp_path / "tokens.json"
    token = add_token(path, "claude")
    stored = path.read_text()
    assert token not in stored
    assert json.loads(stored)["tokens"][0]["model"] == "claude"
    assert oct(path.stat().st_mode)[-3:] == "600"


def test_chat_bridge_asserts_as_its_own_identity(http_server):
    base = http_server["url"].rsplit("/mcp", 1)[0]
    claim = {
        "subject": "loyalty scheme",
        "predicate": "is",
        "obj": "worth keeping",
        "confidence": 0.6,
        "domain": T,
    }
    assert httpx2.post(f"{base}/bridge/assert", json=claim).status_code == 401
    ok = httpx2.post(
        f"{base}/bridge/assert",
        json={**claim, "model": "claude"},
        headers={"Authorization": f"Bearer {http_server['tokens']['nomi-1']}"},
    )
    assert ok.status_code == 200
    assert ok.json()["outcome"] == "created"
    bad = httpx2.post(
        f"{base}/bridge/assert",
        json={**claim, "confidence": 7},
        headers={"Authorization": f"Bearer {http_server['tokens']['nomi-1']}"},
    )
    assert bad.status_code == 400
    assert "confidence" in bad.json()["error"]
    clash = httpx2.post(
        f"{base}/bridge/assert",
        json={**claim, "obj": "a waste"},
        headers={"Authorization": f"Bearer {http_server['tokens']['claude']}"},
    )
    assert clash.json()["conflicts_detected"][0]["other_model"] == "nomi-1"


def _bridge(http_server: dict, token: str = "nomi-1", **headers: str) -> tuple[str, dict]:
    base = http_server["url"].rsplit("/mcp", 1)[0]
    return f"{base}/bridge/assert", {
        "Authorization": f"Bearer {http_server['tokens'][token]}",
        "Content-Type": "application/json",
        **headers,
    }


CLAIM = {"subject": "loyalty scheme", "predicate": "is", "obj": "worth keeping", "confidence": 0.6}


def test_bridge_has_the_limits_and_checks_of_mcp(http_server):
    url, headers = _bridge(http_server)
    port = http_server["port"]
    huge = httpx2.post(url, content=b"{" + b" " * 2_000_000 + b"}", headers=headers)
    assert huge.status_code == 413
    assert "body" in huge.json()["error"]

    def chunks():  # no Content-Length: the limit must hold while streaming too
        for _ in range(40):
            yield b" " * 50_000

    streamed = httpx2.post(url, content=chunks(), headers=headers)
    assert streamed.status_code == 413
    foreign_host = httpx2.post(url, json=CLAIM, headers={**headers, "Host": "evil.example"})
    assert foreign_host.status_code == 421
    foreign_origin = httpx2.post(
        url, json=CLAIM, headers={**headers, "Origin": "http://evil.example"}
    )
    assert foreign_origin.status_code == 403
    same_origin = {"Origin": f"http://127.0.0.1:{port}"}
    not_json = httpx2.post(
        url, content=b"subject=x", headers={**headers, "Content-Type": "text/plain"}
    )
    assert not_json.status_code == 400
    for refused in (foreign_host, foreign_origin, not_json):
        assert set(refused.json()) == {"error"}
    # None of the refused requests was stored: the same claim by another model is new.
    ok = httpx2.post(url, json=CLAIM, headers={**headers, **same_origin})
    assert ok.status_code == 200
    assert ok.json()["outcome"] == "created"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        (b"{not json", "body"),
        (b"[1, 2]", "body"),
        (b'"claim"', "body"),
        (json.dumps({k: v for k, v in CLAIM.items() if k != "subject"}).encode(), "subject"),
        (json.dumps({**CLAIM, "confidence": "0.5"}).encode(), "confidence"),
        (json.dumps({**CLAIM, "confidence": True}).encode(), "confidence"),
        (json.dumps({**CLAIM, "subject": 7}).encode(), "subject"),
        (json.dumps({**CLAIM, "domain": ["theory"]}).encode(), "domain"),
        (json.dumps({**CLAIM, "predicate": ""}).encode(), "predicate"),
    ],
)
def test_bridge_refuses_malformed_bodies_with_clean_json_errors(http_server, body, field):
    url, headers = _bridge(http_server)
    response = httpx2.post(url, content=body, headers=headers)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error.startswith(f"{field}:"), error
    for python_text in ("Expecting", "list indices", "KeyError", "Traceback", "line 1 column"):
        assert python_text not in error


def test_token_mode_on_every_interface_answers_to_the_machine_and_configured_names(tmp_path):
    tokens_file = tmp_path / "tokens.json"
    token = add_token(tokens_file, "claude")
    env = {
        "HIVEMIND_DB_PATH": str(tmp_path / "g.lbdb"),
        "HIVEMIND_ALLOWED_HOSTS": "hive.lan, relay.lan:9999",
    }
    extra = ("--host", "0.0.0.0", "--token-file", str(tokens_file))
    auth = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    auth["Accept"] = "application/json, text/event-stream"
    init = _rpc(
        "initialize",
        protocolVersion="2025-11-25",
        capabilities={},
        clientInfo={"name": "t", "version": "1"},
    )
    with served(tmp_path, "http", env, *extra) as port:
        url = f"http://127.0.0.1:{port}/mcp"
        for host in (socket.gethostname(), socket.getfqdn(), "hive.lan", "localhost"):
            answer = httpx2.post(url, json=init, headers={**auth, "Host": f"{host}:{port}"})
            assert answer.status_code == 200, (host, answer.text)
        assert httpx2.post(url, json=init, headers={**auth, "Host": "relay.lan:9999"}).is_success
        refused = httpx2.post(url, json=init, headers={**auth, "Host": f"evil.example:{port}"})
        assert refused.status_code == 421
        challenge = httpx2.post(url, json=init).headers["www-authenticate"]
        metadata = httpx2.get(
            f"http://127.0.0.1:{port}/.well-known/oauth-protected-resource/mcp"
        ).json()
        assert "0.0.0.0" not in challenge
        assert "0.0.0.0" not in json.dumps(metadata)
        assert metadata["resource"] == f"http://{socket.getfqdn()}:{port}/mcp"


def test_public_url_is_advertised_and_accepted(tmp_path):
    tokens_file = tmp_path / "tokens.json"
    token = add_token(tokens_file, "claude")
    env = {"HIVEMIND_DB_PATH": str(tmp_path / "g.lbdb")}
    public = "https://hive.example.org"
    extra = ("--host", "0.0.0.0", "--token-file", str(tokens_file), "--public-url", public)
    with served(tmp_path, "http", env, *extra) as port:
        metadata = httpx2.get(
            f"http://127.0.0.1:{port}/.well-known/oauth-protected-resource/mcp"
        ).json()
        assert metadata["resource"] == f"{public}/mcp"
        url, headers = _bridge(
            {"url": f"http://127.0.0.1:{port}/mcp", "tokens": {"c": token}},
            "c",
            Host="hive.example.org",
            Origin=public,
        )
        assert httpx2.post(url, json=CLAIM, headers=headers).status_code == 200


async def test_webhooks_are_signed_retried_and_never_block():
    import asyncio
    import threading
    from http.server import BaseHTTPRequestHandler, HTTPServer

    from hivemind_lab.mcp_server.webhooks import (
        SIGNATURE_HEADER,
        TIMESTAMP_HEADER,
        WebhookNotifier,
        verify,
    )

    received: list[tuple[dict, str, str, bytes]] = []
    calls = {"n": 0}

    class Receiver(BaseHTTPRequestHandler):
        def do_POST(self):
            calls["n"] += 1
            body = self.rfile.read(int(self.headers["Content-Length"]))
            if calls["n"] == 1:  # the first delivery fails: the notifier must retry
                self.send_response(503)
                self.end_headers()
                return
            received.append(
                (
                    json.loads(body),
                    self.headers[SIGNATURE_HEADER],
                    self.headers[TIMESTAMP_HEADER],
                    body,
                )
            )
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = HTTPServer(("127.0.0.1", 0), Receiver)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        notifier = WebhookNotifier(
            [f"http://127.0.0.1:{server.server_port}/hook"], "s3cret", backoff_s=0.01
        )
        start = time.perf_counter()
        notifier.publish("conflict.created", {"conflict_id": "c1", "other_model": "grok"})
        assert time.perf_counter() - start < 0.05  # queued, not sent inline
        await asyncio.wait_for(notifier.flush(), timeout=10)
    finally:
        server.shutdown()
    (payload, signature, stamp, body) = received[0]
    assert payload["event"] == "conflict.created"
    assert payload["data"]["conflict_id"] == "c1"
    assert verify("s3cret", stamp, body, signature)
    assert not verify("wrong", stamp, body, signature)
    assert calls["n"] == 2
    assert notifier.delivered == 1


async def test_sse_transport_for_older_clients(tmp_path):
    from mcp.client.sse import sse_client

    env = {"SOURCE_MODEL": "gemini", "HIVEMIND_DB_PATH": str(tmp_path / "g.lbdb")}
    with served(tmp_path, "sse", env) as port:
        async with (
            sse_client(f"http://127.0.0.1:{port}/sse") as streams,
            ClientSession(streams[0], streams[1]) as session,
        ):
            await session.initialize()
            assert {t.name for t in (await session.list_tools()).tools} == TOOLS
            result = data(
                await session.call_tool(
                    "hivemind_assert",
                    {
                        "subject": "platform",
                        "predicate": "requires",
                        "obj": "two sides",
                        "confidence": 0.7,
                    },
                )
            )
            assert result["outcome"] == "created"
            report = data(
                await session.call_tool(
                    "hivemind_divergence", {"model_a": "gemini", "model_b": "x"}
                )
            )
            assert report["unique_to_a"][0]["subject"] == "platform"


CONFORMANCE = REPO / ".cache" / "conformance" / "node_modules"
"""Installed by `make conformance` (set-up, never by a test): the official suite 0.1.16 and the
Node 22 it needs, side by side."""
SCENARIOS = (
    "server-initialize",
    "ping",  # handshake-era clients; 2026-07-28 drops it (covered by the SDK client tests)
    "tools-list",
    "tools-call-error",
    "tools-call-with-progress",
    "tools-call-with-logging",
    "logging-set-level",
    "dns-rebinding-protection",
    "server-sse-multiple-streams",
)
"""Every scenario for what the server offers: tools, errors, progress, logging, loopback
protection and concurrent streams (not resources, prompts, completion, sampling, elicitation)."""


def test_official_conformance_suite_passes_every_scenario_the_server_offers(tmp_path):
    node = CONFORMANCE / ".bin" / "node"
    suite = CONFORMANCE / "@modelcontextprotocol" / "conformance"
    if not (node.exists() and (suite / "package.json").exists()):
        pytest.fail("the conformance suite is not installed: run `make conformance`")
    assert json.loads((suite / "package.json").read_text())["version"] == "0.1.16"
    env = {"SOURCE_MODEL": "claude", "HIVEMIND_DB_PATH": str(tmp_path / "g.lbdb")}
    with served(tmp_path, "http", env, "--conformance-fixtures") as port:
        for scenario in SCENARIOS:
            out = subprocess.run(
                [
                    str(node),
                    str(suite / "dist" / "index.js"),
                    "server",
                    "--url",
                    f"http://127.0.0.1:{port}/mcp",
                    "--scenario",
                    scenario,
                ],
                env=child_env(tmp_path),
                capture_output=True,
                text=True,
                timeout=120,
            )
            assert out.returncode == 0, scenario + out.stdout + out.stderr
            assert " 0 failed, 0 warnings" in out.stdout, out.stdout
