"""The Hivemind MCP server: the knowledge graph's tools, resources and prompts for AI clients
(stdio, HTTP, SSE; `catalog` names them). Names load on first use, so reading the catalog (as
``serve --help`` does) does not load the SDK."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hivemind_lab.lazy import homes, lazy_exports

if TYPE_CHECKING:  # the package's public names, each with its home (read by `homes`)
    from hivemind_lab.mcp_server.app import build_server as build_server
    from hivemind_lab.mcp_server.settings import ServerSettings as ServerSettings

_HOMES = homes(__name__)
"""Each public name and the module that defines it, read from the ``TYPE_CHECKING`` block
above (the one place the names are written): ``__all__`` and ``__getattr__`` come from it."""

__all__ = sorted(_HOMES)
__getattr__ = lazy_exports(__name__, _HOMES)
