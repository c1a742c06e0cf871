"""The server's own log (stderr): one plain line per record, of bounded length.

The SDK's `MCPServer` installs a rich log handler with rich tracebacks when the process has no
handler yet; rendering a traceback whose message quotes a 900 kB client value took minutes
(word-wrapping grows with the square of its length) while the event loop served nobody. This
handler is installed first, so the SDK's stays out, and uvicorn's loggers go through it too. A
record's message is cut to `LINE_LIMIT` characters; an exception becomes its type, its message cut
and the places it was raised, on the same line.
"""

from __future__ import annotations

import logging
import sys
import traceback
from types import TracebackType
from typing import TextIO

from hivemind_lab.mcp_server.arguments import brief

LINE_LIMIT = 600
"""Longest message of one log line."""
EXCEPTION_LIMIT = 300
"""Longest exception message quoted in a log line."""
FRAMES = 3
"""Innermost frames of a traceback named in a log line."""

ExcInfo = tuple[type[BaseException], BaseException, TracebackType | None]


def one_line(text: str, limit: int) -> str:
    """``text`` on one line (line breaks escaped), cut to ``limit`` characters."""
    return brief(text, limit=limit).replace("\r", "\\r").replace("\n", "\\n")


def describe_exception(
    exc_type: type[BaseException], exc: BaseException, tb: TracebackType | None
) -> str:
    """``Type: message (at file:line in function < …)``, innermost frame first, one line."""
    frames = traceback.extract_tb(tb)[-FRAMES:] if tb is not None else []
    places = " < ".join(
        f"{frame.filename.rsplit('/', 1)[-1]}:{frame.lineno} in {frame.name}"
        for frame in reversed(frames)
    )
    text = f"{exc_type.__name__}: {one_line(str(exc), EXCEPTION_LIMIT)}"
    return f"{text} (at {places})" if places else text


class OneLineFormatter(logging.Formatter):
    """``time level logger: message [exception]`` on one line of bounded length."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s: %(message)s")

    def formatException(self, ei: ExcInfo | tuple[None, None, None]) -> str:
        exc_type, exc, tb = ei
        if exc_type is None or exc is None:
            return ""
        return describe_exception(exc_type, exc, tb)

    def formatStack(self, stack_info: str) -> str:
        return ""  # a stack is many lines; the exception's places are enough here

    def format(self, record: logging.LogRecord) -> str:
        record.message = one_line(record.getMessage(), LINE_LIMIT)
        record.asctime = self.formatTime(record, self.datefmt)
        line = self.formatMessage(record)
        if record.exc_info:
            line = f"{line} | {self.formatException(record.exc_info)}"
        return line


def configure_logging(stream: TextIO | None = None, *, level: int = logging.INFO) -> None:
    """Route every log record of the process (ours, the SDK's, uvicorn's) through one plain
    handler on ``stream`` (stderr by default), replacing any handler already there."""
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(OneLineFormatter())
    logging.basicConfig(level=level, handlers=[handler], force=True)
