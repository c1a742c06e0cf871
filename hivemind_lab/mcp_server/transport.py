"""The transports' edges: stdio with a per-message size limit, the HTTP listener (uvicorn) with
read and idle timeouts, and a stop on SIGTERM that never takes more than a second.

stdio: the SDK reads whole lines, however long; here each message is at most
``max_request_bytes`` (the limit HTTP request bodies have), and a longer one is skipped unread and
answered with an error (`BoundedLines`).

HTTP: uvicorn closes a keep-alive connection that stays idle after a response (``idle_timeout_s``),
but not one that never finishes sending its request: a client may open a connection and send
nothing, or trickle a header or a body a byte at a time, and hold a socket and a slot forever.
Here every request must arrive whole (head and body) within ``read_timeout_s`` of its own first
byte (or of the connection's opening, for the first), on a new or a reused connection; otherwise
the connection is closed. Responses are never timed: an SSE stream lasts as long as the client
listens.

Stopping: SIGTERM asks the server to stop gracefully (HTTP streams are given half the time) and
arms a timer that ends the process at `STOP_WITHIN_S` whatever the event loop is doing.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import signal
import sys
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any, BinaryIO, NamedTuple, cast

import anyio
import h11
import uvicorn
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared._stream_protocols import WriteStream
from mcp.shared.message import SessionMessage
from mcp_types import INVALID_REQUEST, ErrorData, JSONRPCError
from starlette.types import ASGIApp
from uvicorn.protocols.http.h11_impl import H11Protocol

log = logging.getLogger(__name__)

STOP_WITHIN_S = 1.0
"""Longest time from SIGTERM to the end of the process."""
EXIT_TERMINATED = 128 + signal.SIGTERM
HEAD_BYTES = 256
"""Bytes of an over-long stdio message kept to find its request id."""
SKIP_CHUNK = 1 << 16
_LEADING_ID = re.compile(
    rb'\A\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(-?\d{1,18}|"[^"\\]{0,128}")'
)


# -- stopping ------------------------------------------------------------------------------------


class Stop:
    """SIGTERM ends the server: gracefully when it can, and within ``within_s`` in any case.

    The handler runs on the main thread between two bytecodes, so it runs even while the event
    loop is busy; the graceful stop it requests needs the loop, the timer it arms does not.
    """

    def __init__(self, within_s: float = STOP_WITHIN_S) -> None:
        self.within_s = within_s
        self._timer: threading.Timer | None = None

    @property
    def requested(self) -> bool:
        return self._timer is not None

    def arm(self) -> None:
        """Start the timer that ends the process (once; later calls keep the first)."""
        if self._timer is None:
            log.info("stopping (at the latest in %.1f s)", self.within_s)
            self._timer = threading.Timer(self.within_s, os._exit, args=(EXIT_TERMINATED,))
            self._timer.daemon = True
            self._timer.start()

    def install(self, graceful: Callable[[], object]) -> None:
        """On SIGTERM, arm the timer and call ``graceful`` (from the signal handler)."""

        def handle(signum: int, frame: FrameType | None) -> None:
            self.arm()
            graceful()

        signal.signal(signal.SIGTERM, handle)


def _exit_terminated() -> None:
    raise SystemExit(EXIT_TERMINATED)


# -- stdio ---------------------------------------------------------------------------------------


class Oversized(NamedTuple):
    """A stdio message over the limit, skipped unread."""

    size: int
    """Its length in bytes (without the line break)."""
    request_id: int | str | None
    """Its id, when the message opens with it (as the SDK's clients write requests)."""


def leading_id(head: bytes) -> int | str | None:
    """The request id of a JSON-RPC message from its first bytes, when ``id`` is its first
    member or follows ``"jsonrpc": "2.0"`` (anything later might be nested in the params)."""
    found = _LEADING_ID.match(head)
    if found is None:
        return None
    token = found.group(1).decode("utf-8", errors="replace")
    return token[1:-1] if token.startswith('"') else int(token)


def read_bounded_line(stream: BinaryIO, limit: int) -> bytes | Oversized:
    """The next line of ``stream`` if at most ``limit`` bytes long (b"" at the end), else its
    size and id, having read past it in chunks (never holding more than ``limit`` + 1 bytes)."""
    line = stream.readline(limit + 1)
    if len(line) <= limit or (len(line) == limit + 1 and line.endswith(b"\n")):
        return line
    head, size, chunk = line[:HEAD_BYTES], len(line), line
    while chunk and not chunk.endswith(b"\n"):
        chunk = stream.readline(SKIP_CHUNK)
        size += len(chunk)
    return Oversized(size - (1 if chunk.endswith(b"\n") else 0), leading_id(head))


class BoundedLines:
    """The lines of a binary stream for the SDK's stdio transport, each at most ``limit`` bytes;
    a longer one is skipped and reported on ``oversized``. An async iterator of text lines (what
    the SDK reads its stdin as); reading is abandoned when the server is cancelled."""

    def __init__(
        self, stream: BinaryIO, limit: int, oversized: MemoryObjectSendStream[Oversized]
    ) -> None:
        self.stream = stream
        self.limit = limit
        self.oversized = oversized

    def __aiter__(self) -> BoundedLines:
        return self

    async def __anext__(self) -> str:
        while True:
            line = await anyio.to_thread.run_sync(
                read_bounded_line, self.stream, self.limit, abandon_on_cancel=True
            )
            if isinstance(line, Oversized):
                await self.oversized.send(line)
                continue
            if not line:
                raise StopAsyncIteration
            return line.decode("utf-8", errors="replace")


def oversized_error(message: Oversized, limit: int) -> JSONRPCError:
    """The error answering an over-long message (``id`` null when it could not be read)."""
    text = f"message of {message.size:,} bytes refused: at most {limit:,} bytes per message"
    return JSONRPCError(
        jsonrpc="2.0", id=message.request_id, error=ErrorData(code=INVALID_REQUEST, message=text)
    )


async def _answer_oversized(
    skipped: MemoryObjectReceiveStream[Oversized], out: WriteStream[SessionMessage], limit: int
) -> None:
    async for message in skipped:
        log.info(
            "refused a stdio message of %s bytes (id %r)", f"{message.size:,}", message.request_id
        )
        await out.send(SessionMessage(message=oversized_error(message, limit)))


async def serve_stdio(server: MCPServer, *, max_message_bytes: int, stop: Stop) -> None:
    """Serve ``server`` on stdin/stdout until the client closes stdin or SIGTERM arrives."""
    lowlevel = server._lowlevel_server
    send, receive = anyio.create_memory_object_stream[Oversized](8)
    lines = BoundedLines(sys.stdin.buffer, max_message_bytes, send)
    loop = asyncio.get_running_loop()
    async with (
        stdio_server(stdin=cast(Any, lines)) as (read, write),
        anyio.create_task_group() as group,
    ):
        stop.install(lambda: loop.call_soon_threadsafe(group.cancel_scope.cancel))
        group.start_soon(_answer_oversized, receive, write, max_message_bytes)
        await lowlevel.run(read, write, lowlevel.create_initialization_options())
        group.cancel_scope.cancel()


# -- HTTP ----------------------------------------------------------------------------------------


class ReadTimeoutProtocol(H11Protocol):
    """uvicorn's HTTP/1.1 protocol, closing a connection whose request is not received in time.

    The deadline is per request: armed at a request's first byte (or when the connection opens,
    for its first), met once h11 has the whole request (head and body), and armed again at the
    next request's first byte on a kept-alive connection. Between a response and the next
    request, uvicorn's keep-alive limit applies (the idle limit per connection).
    """

    read_timeout_s: float = 30.0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._read_deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._track()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._track()  # a pipelined request may have started meanwhile

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _receiving(self) -> bool:
        """A request has begun and is not yet whole: part of its head, or its body."""
        state = self.conn.their_state
        return state is h11.SEND_BODY or (state is h11.IDLE and bool(self.conn.trailing_data[0]))

    def _track(self) -> None:
        if self._receiving():
            if self._read_deadline is None:
                self._arm()
        elif self.conn.their_state is not h11.IDLE:
            self._disarm()  # the request is in: its deadline is met

    def _arm(self) -> None:
        self._read_deadline = self.loop.call_later(self.read_timeout_s, self._expire)

    def _disarm(self) -> None:
        if self._read_deadline is not None:
            self._read_deadline.cancel()
            self._read_deadline = None

    def _expire(self) -> None:
        self._read_deadline = None
        if not self.transport.is_closing() and self.conn.their_state in (h11.IDLE, h11.SEND_BODY):
            self.transport.close()  # nothing sent since the opening, or a request still partial


def protocol(read_timeout_s: float) -> type[ReadTimeoutProtocol]:
    """The protocol class with its read timeout (uvicorn builds one instance per connection)."""
    return type("ReadTimeoutProtocol", (ReadTimeoutProtocol,), {"read_timeout_s": read_timeout_s})


class StoppingServer(uvicorn.Server):
    """uvicorn's server, arming `Stop`'s timer on the signal it handles itself."""

    def __init__(self, config: uvicorn.Config, stop: Stop) -> None:
        super().__init__(config)
        self.stop = stop

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        self.stop.arm()
        super().handle_exit(sig, frame)


def serve_http(
    app: ASGIApp,
    *,
    host: str,
    port: int,
    read_timeout_s: float,
    idle_timeout_s: int,
    stop: Stop,
) -> None:
    """Serve ``app`` until SIGTERM or Ctrl-C, with both timeouts; logs go to the root logger."""
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        http=protocol(read_timeout_s),
        timeout_keep_alive=idle_timeout_s,
        # open SSE streams get half the stop time, then are cancelled (seconds; a float works)
        timeout_graceful_shutdown=stop.within_s / 2,  # type: ignore[arg-type]
        log_config=None,
        log_level="info",
    )
    # uvicorn handles SIGTERM while it runs, then restores this handler and raises the signal
    # again: the process then leaves through `serve`'s clean-up with the usual exit status.
    stop.install(_exit_terminated)
    StoppingServer(config, stop).run()
