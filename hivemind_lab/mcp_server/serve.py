"""Run the MCP server on a transport: the one place that opens the store and binds sockets."""

from __future__ import annotations

import functools
import socket
import sys
import threading

import anyio

from hivemind_lab.graph import GraphConfig, HivemindGraph, open_store
from hivemind_lab.mcp_server.app import build_server
from hivemind_lab.mcp_server.conformance import add_conformance_fixtures
from hivemind_lab.mcp_server.exposure import exposure
from hivemind_lab.mcp_server.serverlog import configure_logging
from hivemind_lab.mcp_server.settings import ServerSettings
from hivemind_lab.mcp_server.transport import Stop, serve_http, serve_stdio
from hivemind_lab.tokens import TokenCounter, default_counter


class DeferredCounter:
    """The default token counter, loaded on first use rather than at start-up: loading the BPE
    ranks takes a third of a second, and a client waiting for ``initialize`` should not pay it
    (only the first query does)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counter: TokenCounter | None = None

    def _loaded(self) -> TokenCounter:
        with self._lock:
            if self._counter is None:
                self._counter = default_counter()
            return self._counter

    @property
    def name(self) -> str:
        return self._loaded().name

    @name.setter
    def name(self, value: str) -> None:
        raise AttributeError("the name comes from the loaded counter")

    def count(self, text: str) -> int:
        return self._loaded().count(text)


def free_port(host: str) -> int:
    """A port the OS has free on ``host`` (for ``--port 0``)."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


def serve(settings: ServerSettings, config: GraphConfig) -> None:
    """Serve the hivemind tools until interrupted; closes the store on the way out. Logs go to
    stderr, one plain line per record (before the SDK installs its rich handler)."""
    configure_logging()
    stop = Stop()
    store = open_store(config)
    try:
        names = exposure(settings)
        graph = HivemindGraph(store, config, counter=DeferredCounter())
        server = build_server(graph, settings, names=names)
        if settings.conformance_fixtures:
            add_conformance_fixtures(server)
        if settings.transport == "stdio":
            anyio.run(
                functools.partial(
                    serve_stdio, server, max_message_bytes=settings.max_request_bytes, stop=stop
                )
            )
            return
        path = "/mcp" if settings.transport == "http" else "/sse"
        who = (
            f"tokens: {settings.token_file}"
            if settings.token_file
            else f"as {settings.source_model}, single-user"
        )
        print(f"hivemind MCP server on {names.base_url}{path} ({who})", file=sys.stderr)
        security = names.transport_security()
        if settings.transport == "http":
            app = server.streamable_http_app(
                streamable_http_path="/mcp",
                max_request_body_size=settings.max_request_bytes,
                transport_security=security,
                host=settings.host,
            )
        else:
            app = server.sse_app(
                max_request_body_size=settings.max_request_bytes,
                transport_security=security,
                host=settings.host,
            )
        serve_http(
            app,
            host=settings.host,
            port=settings.port,
            read_timeout_s=settings.read_timeout_s,
            idle_timeout_s=settings.idle_timeout_s,
            stop=stop,
        )
    finally:
        store.close()
