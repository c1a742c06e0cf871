"""Bounded work per request: a 900 kB name, URI or argument on every MCP path is refused at
once with a short error while another client is served; a stdio message over the size limit is
refused like an HTTP body; the server's log stays one plain line per record; SIGTERM ends the
server within a second."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from hivemind_lab.mcp_server.limits import RequestLimits, refusal
from hivemind_lab.mcp_server.resources import conflict_uri
from hivemind_lab.mcp_server.transport import leading_id
from tests.mcp_support import cpu_seconds, rpc, served_process, stdio_params
from tests.support import child_env

pytestmark = pytest.mark.filterwarnings("ignore:ping is removed")
HUGE = "x" * 900_000
WIRE_LIMIT = 1_000
"""Bytes an error may take on the wire, whatever the client sent."""
CPU_LIMIT = 0.1
"""Server CPU seconds a refused request may cost."""
PATHS = {
    "prompts/get name": ("prompts/get", {"name": HUGE, "arguments": {}}),
    "prompts/get argument": (
        "prompts/get",
        {"name": "summarise_subject", "arguments": {"subject": HUGE}},
    ),
    "tools/call name": ("tools/call", {"name": HUGE, "arguments": {}}),
    "tools/call argument": (
        "tools/call",
        {"name": "hivemind_query", "arguments": {"question": HUGE}},
    ),
    "tools/call argument name": (
        "tools/call",
        {"name": "hivemind_conflicts", "arguments": {HUGE: "x"}},
    ),
    "resources/read uri": ("resources/read", {"uri": f"hivemind://entities/{HUGE}/assertions"}),
    "resources/subscribe uri": ("resources/subscribe", {"uri": f"hivemind://conflicts/{HUGE}"}),
}
HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def _reply(response: httpx2.Response) -> dict:
    """The JSON-RPC message of a streamable-HTTP response (JSON or one SSE event)."""
    if response.headers["content-type"].startswith("text/event-stream"):
        (line,) = [x for x in response.text.splitlines() if x.startswith("data:")]
        return json.loads(line[5:])
    return response.json()


def _open_session(url: str) -> dict[str, str]:
    """A handshake-era session over raw HTTP; the headers its requests carry."""
    hello = rpc(
        "initialize",
        protocolVersion="2025-11-25",
        capabilities={},
        clientInfo={"name": "raw", "version": "1"},
    )
    opened = httpx2.post(url, json=hello, headers=HEADERS)
    assert opened.status_code == 200, opened.text
    headers = {**HEADERS, "mcp-session-id": opened.headers["mcp-session-id"]}
    headers["mcp-protocol-version"] = "2025-11-25"
    done = httpx2.post(
        url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers
    )
    assert done.status_code == 202
    return headers


def test_the_limits_refuse_nothing_the_graph_accepts():
    from hivemind_lab.graph import GraphConfig

    config = GraphConfig()
    limits = RequestLimits.for_graph(config)
    longest = {"name": "hivemind_assert", "arguments": {"evidence": "e" * config.max_evidence}}
    assert refusal("tools/call", longest, limits) is None
    subject = "\U0001f600" * config.max_text  # 4 UTF-8 bytes each, 12 characters encoded
    from urllib.parse import quote

    uri = f"hivemind://entities/{quote(subject, safe='')}/assertions"
    assert refusal("resources/read", {"uri": uri}, limits) is None
    deep = {"name": "t", "arguments": {"a": [{"b": ["x" * (limits.text + 1)]}]}}
    refused = refusal("tools/call", deep, limits)
    assert refused is not None and refused.where == "arguments.a[0].b[0]"
    assert len(refused.message) < 200


async def _refused_while_pinging(
    url: str, headers: dict[str, str], body: dict, pid: int, other: Client
) -> tuple[httpx2.Response, float, float, list[float]]:
    """Sends ``body`` while ``other`` pings: the response, its wall time and the server's CPU
    time meanwhile, and the pings' round trips."""
    pings: list[float] = []

    async def ping_meanwhile() -> None:
        for _ in range(5):
            start = time.perf_counter()
            await other.send_ping()
            pings.append(time.perf_counter() - start)

    before = cpu_seconds(pid)
    start = time.perf_counter()
    async with anyio.create_task_group() as group:
        group.start_soon(ping_meanwhile)
        with anyio.fail_after(20):
            response = await anyio.to_thread.run_sync(
                lambda: httpx2.post(url, json=body, headers=headers, timeout=30)
            )
    wall = time.perf_counter() - start
    return response, wall, cpu_seconds(pid) - before, pings


async def test_a_900_kb_value_on_every_path_is_refused_at_once_while_others_are_served(tmp_path):
    env = {"SOURCE_MODEL": "claude", "HIVEMIND_DB_PATH": str(tmp_path / "g.lbdb")}
    with served_process(tmp_path, "http", env) as (port, proc):
        url = f"http://127.0.0.1:{port}/mcp"
        headers = _open_session(url)
        figures: dict[str, tuple[float, float, int]] = {}
        async with Client(streamable_http_client(url), mode="legacy") as other:
            for label, (method, params) in PATHS.items():
                response, wall, cpu, pings = await _refused_while_pinging(
                    url, headers, rpc(method, **params), proc.pid, other
                )
                figures[label] = (round(wall, 3), round(cpu, 3), len(response.content))
                assert len(response.content) < WIRE_LIMIT, (label, response.content[:300])
                reply = _reply(response)
                if "error" in reply:
                    assert re.search(r"900,0\d\d characters", reply["error"]["message"])
                else:  # an argument: a tool error its caller's model can read
                    assert reply["result"]["isError"] is True, label
                    assert "900,000 characters" in reply["result"]["content"][0]["text"]
                assert max(pings) < 2.0, (label, pings)
                # the server's CPU for the request and for the five pings meanwhile
                assert cpu < CPU_LIMIT + 0.1, (label, cpu)
        print(json.dumps(figures))
    log = next(tmp_path.glob("http-*.log")).read_text()
    assert "Traceback" not in log and "x" * 33 not in log
    assert max(len(line) for line in log.splitlines()) < 1_000


async def test_stdio_refuses_900_kb_values_and_unknown_prompts_with_short_errors(tmp_path):
    env = {"SOURCE_MODEL": "claude", "HIVEMIND_DB_PATH": str(tmp_path / "g.lbdb")}
    async with Client(stdio_params(env), mode="legacy") as client:
        with anyio.fail_after(20):
            for call in (
                lambda: client.get_prompt(HUGE, {}),
                lambda: client.get_prompt("summarise_subject", {"subject": HUGE}),
                lambda: client.read_resource(f"hivemind://entities/{HUGE}/assertions"),
                lambda: client.call_tool(HUGE, {}),
            ):
                with pytest.raises(Exception, match=r"900,0\d\d characters") as caught:
                    await call()
                assert len(str(caught.value)) < WIRE_LIMIT
            result = await client.call_tool("hivemind_query", {"question": HUGE})
            assert result.is_error and len(result.content[0].text) < WIRE_LIMIT
            # Within the limits, the SDK's own errors quote the request (an unknown resource's
            # URI in its message and its data): they are cut on the way back.
            for uri in ("hivemind://nope/" + "x" * 12_000, conflict_uri("x" * 4_000)):
                with pytest.raises(MCPError) as caught:
                    await client.read_resource(uri)
                wire = caught.value.error.model_dump_json()
                assert len(wire) < WIRE_LIMIT and "xxxx" in wire, wire[:200]
            with pytest.raises(Exception, match="unknown prompt 'nope'"):
                await client.get_prompt("nope", {})
            with pytest.raises(Exception, match="unknown conflict"):
                await client.get_prompt("review_conflict", {"conflict_id": "c" * 900})
            with pytest.raises(Exception, match="Missing required arguments"):
                await client.get_prompt("review_conflict", {})
            await client.send_ping()


def test_leading_id_is_read_only_where_it_cannot_be_nested():
    assert leading_id(b'{"jsonrpc":"2.0","id":7,"method":"x","params":{}}') == 7
    assert leading_id(b'{"id": "a-1", "jsonrpc": "2.0"') == "a-1"
    assert leading_id(b'{"method":"x","params":{"id":3}}') is None
    assert leading_id(b"not json") is None


def test_a_stdio_message_over_the_size_limit_is_skipped_and_answered(tmp_path):
    env = child_env(
        tmp_path,
        SOURCE_MODEL="claude",
        HIVEMIND_DB_PATH=str(tmp_path / "g.lbdb"),
        HIVEMIND_MAX_REQUEST_BYTES="100000",
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "hivemind_lab", "mcp", "serve"],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=(tmp_path / "stderr.txt").open("wb"),
    )
    assert proc.stdin is not None and proc.stdout is not None
    hello = rpc(
        "initialize",
        protocolVersion="2025-11-25",
        capabilities={},
        clientInfo={"name": "t", "version": "1"},
    )
    big = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "x" * 150_000}}
    try:
        for message in (hello, {"jsonrpc": "2.0", "method": "notifications/initialized"}, big):
            proc.stdin.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
        proc.stdin.write(json.dumps({**rpc("ping"), "id": 8}).encode() + b"\n")
        proc.stdin.flush()
        replies = [json.loads(proc.stdout.readline()) for _ in range(3)]
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
    refused, pong = replies[1], replies[2]
    assert refused["id"] == 7 and refused["error"]["code"] == -32600
    size = len(json.dumps(big, separators=(",", ":")))
    assert f"{size:,} bytes refused: at most 100,000" in refused["error"]["message"]
    assert pong == {"jsonrpc": "2.0", "id": 8, "result": {}}


def _stopped_within(proc: subprocess.Popen, seconds: float) -> float:
    start = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        proc.kill()
        pytest.fail(f"still running {seconds} s after SIGTERM")
    return time.monotonic() - start


def test_sigterm_ends_a_busy_process_within_a_second(tmp_path):
    # The event loop can be busy in Python code for any length of time; the stop's timer
    # does not need it.
    script = (
        "from hivemind_lab.mcp_server.transport import Stop\n"
        "Stop().install(lambda: None)\n"
        "print('ready', flush=True)\n"
        "while True: pass\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", script], env=child_env(tmp_path), stdout=subprocess.PIPE
    )
    assert proc.stdout is not None and proc.stdout.readline() == b"ready\n"
    assert _stopped_within(proc, 5) < 1.5
    assert proc.returncode == 128 + signal.SIGTERM


async def test_sigterm_ends_serving_servers_within_a_second(tmp_path):
    env = {"SOURCE_MODEL": "claude", "HIVEMIND_DB_PATH": str(tmp_path / "h.lbdb")}
    with served_process(tmp_path, "http", env) as (port, proc):
        async with Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp"), mode="legacy"):
            took = await anyio.to_thread.run_sync(lambda: _stopped_within(proc, 5))
    assert took < 1.5
    stdio_env = child_env(
        tmp_path, SOURCE_MODEL="claude", HIVEMIND_DB_PATH=str(tmp_path / "s.lbdb")
    )
    stdio = subprocess.Popen(
        [sys.executable, "-m", "hivemind_lab", "mcp", "serve"],
        env=stdio_env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert stdio.stdin is not None and stdio.stdout is not None
    stdio.stdin.write(json.dumps(rpc("ping")).encode() + b"\n")
    stdio.stdin.flush()
    assert json.loads(stdio.stdout.readline())["id"] == 1  # serving, stdin still open
    assert _stopped_within(stdio, 5) < 1.5
    assert Path(tmp_path / "s.lbdb").exists()
