"""The Hivemind MCP server: the knowledge graph's tools, resources and prompts for AI clients
(stdio, HTTP, SSE; `catalog` names them). Names load on first use, so reading the catalog (as
``serve --help`` does) does not load the SDK."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hivemind_lab.lazy import lazy_exports

if TYPE_CHECKING:  # the table below, for type checkers (re-exported by name)
    from hivemind_lab.mcp_server.app import build_server as build_server
    from hivemind_lab.mcp_server.settings import ServerSettings as ServerSettings

_HOMES: dict[str, str] = {
    "build_server": "hivemind_lab.mcp_server.app",
    "ServerSettings": "hivemind_lab.mcp_server.settings",
}
__all__ = sorted(_HOMES)
__getattr__ = lazy_exports(__name__, _HOMES)
