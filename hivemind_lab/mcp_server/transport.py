"""The HTTP listener: uvicorn with a read timeout and an idle timeout.

uvicorn closes a keep-alive connection that stays idle after a response, but not one that never
finishes sending its request: a client may open a connection and send nothing, or trickle a
header or a body a byte at a time, and hold a socket and a slot forever. Here every request must
arrive whole (head and body) within ``read_timeout_s`` of its first byte (or of the connection's
opening); otherwise the connection is closed. Responses are never timed: an SSE stream lasts as
long as the client listens.
"""

from __future__ import annotations

import asyncio
from typing import Any

import uvicorn
from starlette.types import ASGIApp
from uvicorn.protocols.http.h11_impl import H11Protocol


class ReadTimeoutProtocol(H11Protocol):
    """uvicorn's HTTP/1.1 protocol, closing connections whose request is not received in time."""

    read_timeout_s: float = 30.0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._read_deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        if self._read_deadline is None and self._awaiting_request():
            self._arm()  # the first byte of a new request on a kept-alive connection
        super().data_received(data)

    def connection_lost(self, exc: Exception | None) -> None:
        if self._read_deadline is not None:
            self._read_deadline.cancel()
            self._read_deadline = None
        super().connection_lost(exc)

    def _awaiting_request(self) -> bool:
        """No request head yet: a fresh connection, or one whose last response is complete."""
        return self.cycle is None or self.cycle.response_complete

    def _arm(self) -> None:
        self._read_deadline = self.loop.call_later(self.read_timeout_s, self._expire)

    def _expire(self) -> None:
        self._read_deadline = None
        if self.transport.is_closing():
            return
        if self._awaiting_request() or self.cycle.more_body:
            self.transport.close()


def protocol(read_timeout_s: float) -> type[ReadTimeoutProtocol]:
    """The protocol class with its read timeout (uvicorn builds one instance per connection)."""
    return type("ReadTimeoutProtocol", (ReadTimeoutProtocol,), {"read_timeout_s": read_timeout_s})


def serve_http(
    app: ASGIApp, *, host: str, port: int, read_timeout_s: float, idle_timeout_s: int
) -> None:
    """Serve ``app`` until interrupted, with both timeouts."""
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        http=protocol(read_timeout_s),
        timeout_keep_alive=idle_timeout_s,
        log_level="info",
    )
    uvicorn.Server(config).run()
