"""Fixtures the official MCP conformance suite calls by name (``--conformance-fixtures``).

The suite's progress, logging and error scenarios need tools with fixed names and no arguments;
its resource and prompt scenarios need fixed URIs and prompt names (served beside the graph's
own, with the same subscribe handlers).
They send their notifications through the same `Reporter` and error path as the hivemind tools,
so passing the scenarios says the real tools' notifications are well-formed. Never served unless
asked for.
"""

from __future__ import annotations

import json

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.prompts.base import UserMessage

from hivemind_lab.mcp_server.reporting import Reporter

PAUSE_S = 0.05


def add_conformance_fixtures(server: MCPServer) -> None:
    """Register the suite's fixture tools (simple text, progress, logging, error), resources (static text, a
    template, a watched resource) and prompts (simple, with arguments)."""

    @server.tool(description="Conformance fixture: returns a short text.")
    async def test_simple_text() -> str:
        return "This is a simple text response for testing."

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

    @server.resource("test://static-text", mime_type="text/plain", name="static-text")
    def static_text() -> str:
        """Conformance fixture: a fixed text resource."""
        return "This is the content of the static text resource."

    @server.resource("test://watched-resource", mime_type="text/plain", name="watched-resource")
    def watched() -> str:
        """Conformance fixture: a resource clients subscribe to."""
        return "Watched resource content."

    @server.resource("test://template/{id}/data", mime_type="application/json", name="template")
    def template(id: str) -> str:
        """Conformance fixture: a resource template."""
        return json.dumps({"id": id, "templateTest": True, "data": f"Data for ID: {id}"})

    @server.prompt(name="test_simple_prompt", description="Conformance fixture: no arguments.")
    def simple_prompt() -> list[UserMessage]:
        return [UserMessage("This is a simple prompt for testing.")]

    @server.prompt(name="test_prompt_with_arguments", description="Conformance fixture: arguments.")
    def prompt_with_arguments(arg1: str, arg2: str) -> list[UserMessage]:
        return [UserMessage(f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'")]
