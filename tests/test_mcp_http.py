"""The MCP server over HTTP: one server with several token clients, the chat bridge's limits
and errors, the names a server answers to, webhooks, SSE and a 2026-07-28 client; token
reloading, short errors for huge values and read/idle timeouts."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from hivemind_lab.mcp_server.arguments import ERROR_LIMIT
from hivemind_lab.mcp_server.tokens import add_token
from tests.mcp_support import TOOLS, T, data, rpc, served
from tests.support import child_env

# -- HTTP ------------------------------------------------------------------------------------------


@pytest.fixture
def http_server(tmp_path) -> Iterator[dict]:
    """One HTTP server on the embedded store, with tokens for claude, grok and gemini."""
    tokens_file = tmp_path / "tokens.json"
    tokens = {m: add_token(tokens_file, m) for m in ("claude", "grok", "gemini", "nomi-1")}
    env = {"HIVEMIND_DB_PATH": str(tmp_path / "g.lbdb"), "CONFLICT_THRESHOLD": "3"}
    with served(tmp_path, "http", env, "--token-file", str(tokens_file)) as port:
        yield {
            "url": f"http://127.0.0.1:{port}/mcp",
            "tokens": tokens,
            "port": port,
            "file": tokens_file,
        }


@asynccontextmanager
async def http_session(url: str, token: str) -> AsyncIterator[ClientSession]:
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}) as http,
        streamable_http_client(url, http_client=http) as streams,
        ClientSession(streams[0], streams[1]) as session,
    ):
        await session.initialize()
        yield session


def test_http_refuses_missing_or_wrong_tokens_and_foreign_hosts(http_server):
    url = http_server["url"]
    assert httpx2.post(url, json=rpc("tools/list")).status_code == 401
    wrong = httpx2.post(
        url, json=rpc("tools/list"), headers={"Authorization": "Bearer hm_not-a-token"}
    )
    assert wrong.status_code == 401
    rebinding = httpx2.post(
        url,
        json=rpc("tools/list"),
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
    init = rpc(
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
        notifier.publish("conflict.created", {"conflict_id": "c1", "other_model": "grok"})
        # Queued, not sent inline: publish returned without the receiver having been called
        # (delivery needs this event loop, which has not run since).
        assert calls["n"] == 0 and notifier.delivered == 0
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


# -- hardened edges ------------------------------------------------------------------------------


def _token_cli(tmp_path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "hivemind_lab", "mcp", "token", *args]
    return subprocess.run(
        command, env=child_env(tmp_path), capture_output=True, text=True, timeout=120
    )


async def _ping_after_removal(url: str, token: str, tmp_path, path) -> list[int]:
    """Opens a session, removes its token with the CLI and pings again, which must fail: the
    HTTP statuses the session got after the removal."""
    statuses: list[int] = []
    removed_at = 0

    async def record(response: httpx2.Response) -> None:
        statuses.append(response.status_code)

    http = httpx2.AsyncClient(
        headers={"Authorization": f"Bearer {token}"}, event_hooks={"response": [record]}
    )
    answered = False
    try:
        async with (
            http,
            streamable_http_client(url, http_client=http) as streams,
            ClientSession(streams[0], streams[1]) as session,
        ):
            await session.initialize()
            await session.send_ping()
            removed = _token_cli(tmp_path, "remove", "grok", "--file", str(path))
            assert removed.returncode == 0, removed.stderr
            removed_at = len(statuses)
            with anyio.fail_after(30):
                await session.send_ping()
            answered = True
    except* Exception:  # the SDK reports the refusal as errors of its task groups
        pass
    assert not answered
    return statuses[removed_at:]


async def test_a_removed_token_is_refused_at_once_without_restart(http_server, tmp_path):
    url, tokens, path = http_server["url"], http_server["tokens"], http_server["file"]
    listed = _token_cli(tmp_path, "list", "--file", str(path))
    assert listed.returncode == 0, listed.stderr
    rows = [line.split("\t") for line in listed.stdout.splitlines()]
    assert [model for model, _ in rows] == ["claude", "grok", "gemini", "nomi-1"]
    assert all(len(token_id) == 12 for _, token_id in rows)
    assert not any(t in listed.stdout for t in tokens.values())  # ids, never the tokens
    # a session opened before the removal is refused on its next request
    assert 401 in await _ping_after_removal(url, tokens["grok"], tmp_path, path)
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    init = rpc(
        "initialize",
        protocolVersion="2025-11-25",
        capabilities={},
        clientInfo={"name": "t", "version": "1"},
    )
    refused = httpx2.post(
        url, json=init, headers={**headers, "Authorization": f"Bearer {tokens['grok']}"}
    )
    assert refused.status_code == 401
    bridge, bridge_headers = _bridge(http_server, "grok")
    assert httpx2.post(bridge, json=CLAIM, headers=bridge_headers).status_code == 401
    kept = httpx2.post(
        url, json=init, headers={**headers, "Authorization": f"Bearer {tokens['claude']}"}
    )
    assert kept.status_code == 200
    # A token added while the server runs is accepted at once too.
    late = add_token(path, "grok")
    again = httpx2.post(url, json=init, headers={**headers, "Authorization": f"Bearer {late}"})
    assert again.status_code == 200
    # A file broken while the server runs refuses every token (fail closed), not the last table.
    path.write_text("{not json")
    broken = httpx2.post(url, json=init, headers={**headers, "Authorization": f"Bearer {late}"})
    assert broken.status_code == 401


async def test_a_huge_argument_gets_a_short_error_and_others_are_served(http_server):
    url, tokens = http_server["url"], http_server["tokens"]
    huge = "x" * 900_000
    async with (
        http_session(url, tokens["claude"]) as claude,
        http_session(url, tokens["grok"]) as grok,
    ):
        for tool, args, field in (
            (
                "hivemind_assert",
                {"subject": "s", "predicate": "is", "obj": "o", "confidence": 0.5, "domain": huge},
                "domain",
            ),
            ("hivemind_divergence", {"model_a": huge, "model_b": "grok"}, "model"),
        ):
            result = await claude.call_tool(tool, args)
            assert result.is_error
            text = result.content[0].text
            assert len(text) <= ERROR_LIMIT + 100, len(text)
            assert field in text and "xxxx" in text
            await grok.send_ping()  # another client is still answered
        bridge, headers = _bridge(http_server)
        answer = httpx2.post(bridge, json={**CLAIM, "domain": huge}, headers=headers)
        assert answer.status_code == 400
        assert len(answer.json()["error"]) <= ERROR_LIMIT + 100


def _closed_within(sock: socket.socket, seconds: float) -> bool:
    """Whether the server closes ``sock`` within ``seconds`` (data it sends is read and dropped)."""
    sock.settimeout(seconds)
    try:
        while sock.recv(4096):
            pass
    except TimeoutError:
        return False
    except ConnectionResetError:
        pass
    return True


def _dribbled_until_closed(sock: socket.socket, seconds: float) -> bool:
    """Sends one header byte every 0.2 s; whether the server closes ``sock`` within
    ``seconds``."""
    deadline = time.monotonic() + seconds
    sock.settimeout(0.2)
    while time.monotonic() < deadline:
        try:
            sock.sendall(b"a")
            if sock.recv(4096) == b"":
                return True
        except TimeoutError:
            continue
        except (BrokenPipeError, ConnectionResetError):
            return True
    return False


def test_idle_and_stalled_connections_are_closed(tmp_path):
    env = {
        "SOURCE_MODEL": "claude",
        "HIVEMIND_DB_PATH": str(tmp_path / "g.lbdb"),
        "HIVEMIND_READ_TIMEOUT_S": "1",
        "HIVEMIND_IDLE_TIMEOUT_S": "1",
    }
    with served(tmp_path, "http", env) as port:
        # The limits are 1 s; 30 s of patience leaves a loaded machine all the margin it needs,
        # while a server without the timeouts keeps every one of these connections open.
        silent = socket.create_connection(("127.0.0.1", port))
        trickle = socket.create_connection(("127.0.0.1", port))
        trickle.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # and never the rest
        body = socket.create_connection(("127.0.0.1", port))
        body.sendall(
            b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Content-Length: 1000\r\n\r\n{"
        )
        kept = socket.create_connection(("127.0.0.1", port))
        kept.sendall(b"GET /nowhere HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert kept.recv(4096).startswith(b"HTTP/1.1 ")  # answered, then left idle
        # A header sent a byte every 0.2 s never goes quiet for a second: the limit is on the
        # whole request, not on the pause between two reads.
        with socket.create_connection(("127.0.0.1", port)) as dribble:
            dribble.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: ")
            assert _dribbled_until_closed(dribble, 30)
        for sock in (silent, trickle, body, kept):
            with sock:
                assert _closed_within(sock, 30)
        # The server still serves new connections.
        assert httpx2.get(f"http://127.0.0.1:{port}/nowhere").status_code == 404


def _response(sock: socket.socket) -> bytes:
    """One whole HTTP response (head and Content-Length body) from ``sock``; b"" if closed."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(4096)
        if not chunk:
            return b""
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(re.search(rb"(?i)content-length: *(\d+)", head).group(1))  # type: ignore[union-attr]
    while len(body) < length:
        chunk = sock.recv(4096)
        if not chunk:
            return b""
        body += chunk
    return data


def _trickled(sock: socket.socket, head: bytes, pad: int, every_s: float) -> bytes:
    """Sends a GET's head with ``pad`` header bytes one every ``every_s`` seconds, then its end;
    the server's response, or b"" if it closed the connection first."""
    sock.sendall(head + b"X-Pad: ")
    for _ in range(pad):
        time.sleep(every_s)
        try:
            sock.sendall(b"a")
        except (BrokenPipeError, ConnectionResetError):
            return b""
    try:
        sock.sendall(b"\r\n\r\n")
        return _response(sock)
    except (BrokenPipeError, ConnectionResetError):
        return b""


def test_the_read_deadline_is_per_request_on_a_reused_connection(tmp_path):
    env = {
        "SOURCE_MODEL": "claude",
        "HIVEMIND_DB_PATH": str(tmp_path / "g.lbdb"),
        "HIVEMIND_READ_TIMEOUT_S": "3",
        "HIVEMIND_IDLE_TIMEOUT_S": "20",
    }
    head = b"GET /nowhere HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    with (
        served(tmp_path, "http", env) as port,
        socket.create_connection(("127.0.0.1", port)) as sock,
    ):
        sock.settimeout(10)
        sock.sendall(head + b"\r\n")
        assert _response(sock).startswith(b"HTTP/1.1 404")
        time.sleep(2)
        # Sent from 2 s to 3.6 s after the connection opened: past 3 s of the connection's
        # life but within 3 s of the request's own first byte, so it is answered.
        assert _trickled(sock, head, pad=8, every_s=0.2).startswith(b"HTTP/1.1 404")
        # A request on the same connection that takes longer than 3 s is still cut.
        start = time.monotonic()
        assert _trickled(sock, head, pad=40, every_s=0.2) == b""
        assert 2.5 < time.monotonic() - start < 6
