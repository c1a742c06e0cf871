"""Fixture tools the official MCP conformance suite calls by name (``--conformance-fixtures``).

The suite's progress, logging and error scenarios need tools with fixed names and no arguments.
They send their notifications through the same `Reporter` and error path as the hivemind tools,
so passing the scenarios says the real tools' notifications are well-formed. Never served unless
asked for.
"""

from __future__ import annotations

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from hivemind_lab.mcp_server.reporting import Reporter

PAUSE_S = 0.05


def add_conformance_fixtures(server: MCPServer) -> None:
    """Register the suite's ``test_tool_with_progress``, ``test_tool_with_logging`` and
    ``test_error_handling``."""

    @server.tool(description="Conformance fixture: three progress notifications.")
    async def test_tool_with_progress(ctx: Context) -> str:
        report = Reporter(ctx, steps=2)
        await report.start("started")
        for step in ("halfway", "done"):
            await anyio.sleep(PAUSE_S)
            await report.step(step)
        return "progress reported"

    @server.tool(description="Conformance fixture: three log messages during the call.")
    async def test_tool_with_logging(ctx: Context) -> str:
        report = Reporter(ctx)
        for level, message in (("info", "started"), ("debug", "working"), ("info", "finished")):
            await report.log(level, message)  # type: ignore[arg-type]
            await anyio.sleep(PAUSE_S)
        return "logged"

    @server.tool(description="Conformance fixture: always fails as a tool error.")
    async def test_error_handling() -> str:
        raise ToolError("This tool intentionally returns an error for testing")
