"""The Hivemind MCP server: the knowledge graph's six tools for AI clients (stdio, HTTP, SSE)."""

from hivemind_lab.mcp_server.app import build_server
from hivemind_lab.mcp_server.settings import ServerSettings

__all__ = ["ServerSettings", "build_server"]
