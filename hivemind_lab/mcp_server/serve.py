"""Run the MCP server on a transport: the one place that opens the store and binds sockets."""

from __future__ import annotations

import socket
import sys

from hivemind_lab.graph import GraphConfig, HivemindGraph, open_store
from hivemind_lab.mcp_server.app import build_server
from hivemind_lab.mcp_server.conformance import add_conformance_fixtures
from hivemind_lab.mcp_server.exposure import exposure
from hivemind_lab.mcp_server.settings import ServerSettings


def free_port(host: str) -> int:
    """A port the OS has free on ``host`` (for ``--port 0``)."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


def serve(settings: ServerSettings, config: GraphConfig) -> None:
    """Serve the hivemind tools until interrupted; closes the store on the way out."""
    store = open_store(config)
    try:
        names = exposure(settings)
        server = build_server(HivemindGraph(store, config), settings, names=names)
        if settings.conformance_fixtures:
            add_conformance_fixtures(server)
        if settings.transport == "stdio":
            server.run("stdio")
            return
        path = "/mcp" if settings.transport == "http" else "/sse"
        who = (
            f"tokens: {settings.token_file}"
            if settings.token_file
            else f"as {settings.source_model}, single-user"
        )
        print(f"hivemind MCP server on {names.base_url}{path} ({who})", file=sys.stderr)
        if settings.transport == "http":
            server.run(
                "streamable-http",
                host=settings.host,
                port=settings.port,
                streamable_http_path="/mcp",
                max_request_body_size=settings.max_request_bytes,
                transport_security=names.transport_security(),
            )
        else:
            server.run(
                "sse",
                host=settings.host,
                port=settings.port,
                max_request_body_size=settings.max_request_bytes,
                transport_security=names.transport_security(),
            )
    finally:
        store.close()
