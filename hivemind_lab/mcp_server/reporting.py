"""Progress and log notifications from tools to the client.

Progress goes out only when the client sent a progress token. Logging follows the protocol
version: handshake-era clients (2025-06-18, 2025-11-25) set a connection-wide level with
``logging/setLevel``, which `serve_log_levels` re-provides because the 2026-07-28 revision
dropped it; 2026-07-28 clients opt in per request (the SDK filters those by the request's
``_meta`` log level and sends them on that request's stream).
"""

from __future__ import annotations

import warnings
from typing import Any, cast, get_args

from mcp.server.connection import Connection
from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.session import ServerSession
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp.types import EmptyResult, LoggingLevel, SetLevelRequestParams

LEVELS: tuple[LoggingLevel, ...] = get_args(LoggingLevel)
"""Severity-ascending (debug … emergency), the protocol's order."""
LEVEL_KEY = "hivemind.log_level"


def connection_of(session: ServerSession) -> Connection:
    """The client connection a request's session belongs to (one per stdio client or HTTP
    session; not yet public on request contexts, which get a new session per request)."""
    return cast(Connection, session._connection)


def _connection_state(session: Any) -> dict[str, Any] | None:
    """The SDK's per-connection scratch state."""
    connection = getattr(session, "_connection", None)
    return getattr(connection, "state", None)


def serve_log_levels(server: MCPServer) -> None:
    """Answer ``logging/setLevel`` (handshake-era clients) and declare the logging capability."""

    async def set_level(
        ctx: ServerRequestContext[Any], params: SetLevelRequestParams
    ) -> EmptyResult:
        state = _connection_state(ctx.session)
        if state is not None:
            state[LEVEL_KEY] = params.level
        return EmptyResult()

    # The SDK's documented way to re-provide a method the 2026 revision removed; its runner
    # serves it only to connections that negotiated an older version.
    server._lowlevel_server.add_request_handler(
        "logging/setLevel", SetLevelRequestParams, set_level
    )


class Reporter:
    """Progress steps and log messages for one tool call."""

    def __init__(self, ctx: Context, *, steps: int = 1) -> None:
        self.ctx = ctx
        self.steps = steps
        self.done = 0

    async def start(self, message: str) -> None:
        """Report that the call started (progress 0 of ``steps``)."""
        await self.ctx.report_progress(0, self.steps, message)

    async def step(self, message: str) -> None:
        """One more of ``steps`` finished (sent only if the client asked for progress)."""
        self.done = min(self.done + 1, self.steps)
        await self.ctx.report_progress(self.done, self.steps, message)

    async def log(self, level: LoggingLevel, message: str) -> None:
        """Send a log message at ``level`` unless the client asked for a higher level."""
        state = _connection_state(self.ctx.session) or {}
        floor = state.get(LEVEL_KEY, "info")
        if LEVELS.index(level) < LEVELS.index(floor):
            return
        with warnings.catch_warnings():
            # Logging is deprecated (not removed) in 2026-07-28; still the way to reach clients.
            # The SDK warns when the method is called, so the await can stay outside.
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            sending = self.ctx.request_context.session.send_log_message(
                level, message, logger="hivemind", related_request_id=self.ctx.request_id
            )
        await sending
