"""Bounded work per request: every name, URI and argument is length-checked before the SDK's
handlers see it.

The SDK's own error paths echo what a client sent, and some of them cost more than the value's
length: an unknown prompt name of 900 kB was rendered into a rich traceback for minutes while
every other client waited, an unknown tool name came back whole and a resource URI was quoted
twice past the client's message limit. `BoundedRequests` is a server middleware (the SDK's seam
that runs before params validation, lookup and handlers): a value over its limit is refused with
an error quoting a short prefix, in time linear in the message's size. Limits derive from the
graph's own (`RequestLimits.for_graph`), so no value the graph would accept is refused here.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Iterator, Mapping
from typing import Any, NamedTuple

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver.exceptions import ResourceError
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, CallToolResult, ErrorData, TextContent
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from hivemind_lab.graph.config import GraphConfig
from hivemind_lab.mcp_server.arguments import ERROR_LIMIT, brief
from hivemind_lab.models import Frozen

log = logging.getLogger(__name__)

NAME_LIMIT = 128
"""Longest tool, prompt or argument name (the MCP tool-name rule: 1-128 characters)."""
PREFIX = 32
"""Characters of a refused value quoted in its error."""
URI_BYTES_PER_CHARACTER = 12
"""A character percent-encoded in a URI takes at most 12 characters (4 UTF-8 bytes, ``%XX``)."""
URI_FIXED = 128
"""Room for a resource template's fixed text and its other fields (model, domain)."""
URI_METHODS = frozenset({"resources/read", "resources/subscribe", "resources/unsubscribe"})
NAMED_METHODS = frozenset({"tools/call", "prompts/get"})


class RequestLimits(Frozen):
    """The longest name, resource URI and other string a request may carry."""

    name: int = NAME_LIMIT
    """A tool's or prompt's name, and every key of an object (argument names)."""
    uri: int
    """A resource URI (``resources/read``, ``subscribe``, ``unsubscribe``)."""
    text: int
    """Any other string: argument values, ``_meta`` fields."""

    @classmethod
    def for_graph(cls, config: GraphConfig) -> RequestLimits:
        """Limits that refuse nothing the graph accepts: a value may be as long as the longest
        text the graph stores (its evidence), a URI as long as the longest subject encoded."""
        return cls(
            uri=URI_FIXED + URI_BYTES_PER_CHARACTER * config.max_text,
            text=max(config.max_text, config.max_evidence),
        )


class Refusal(NamedTuple):
    """A value over its limit: where it is, how long, and the start of it."""

    where: str
    """The value's place in the params, e.g. ``arguments.domain`` or ``name``."""
    length: int
    limit: int
    prefix: str
    """The value's first `PREFIX` characters."""

    @property
    def message(self) -> str:
        return (
            f"{self.where}: {self.length:,} characters, at most {self.limit:,} allowed "
            f"(starts {self.prefix!r})"
        )


def _place(path: tuple[str | int, ...]) -> str:
    """A path through the params as text, each key cut to `PREFIX` characters."""
    parts = [f"[{p}]" if isinstance(p, int) else p[:PREFIX] for p in path]
    return ".".join(parts).replace(".[", "[") or "params"


def _strings(params: Mapping[str, Any]) -> Iterator[tuple[tuple[str | int, ...], str, bool]]:
    """Every string in ``params`` with its path and whether it is an object's key; an explicit
    stack, so the depth the JSON parser allowed costs no recursion."""
    stack: list[tuple[tuple[str | int, ...], Any]] = [((), params)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, str):
            yield path, value, False
        elif isinstance(value, Mapping):
            for key, item in value.items():
                yield (*path, str(key)), str(key), True
                stack.append(((*path, str(key)), item))
        elif isinstance(value, list | tuple):
            stack.extend(((*path, i), item) for i, item in enumerate(value))


def refusal(method: str, params: Mapping[str, Any] | None, limits: RequestLimits) -> Refusal | None:
    """The first string of ``params`` over its limit, or None. A pure function of the message.

    Args:
        method: the JSON-RPC method (decides which fields are names or URIs).
        params: the raw params, before any validation.
        limits: the limits to apply.
    """
    if not params:
        return None
    for path, value, is_key in _strings(params):
        if is_key or (path == ("name",) and method in NAMED_METHODS):
            limit = limits.name
        elif path == ("uri",) and method in URI_METHODS:
            limit = limits.uri
        else:
            limit = limits.text
        if len(value) > limit:
            where = _place(path[:-1]) + " (a key)" if is_key else _place(path)
            return Refusal(where, len(value), limit, value[:PREFIX])
    return None


def _cut(value: Any) -> Any:
    """``value`` with every string longer than `PREFIX` characters cut to it (marked ``…``)."""
    if isinstance(value, str):
        return value if len(value) <= PREFIX else f"{value[:PREFIX]}…"
    if isinstance(value, Mapping):
        return {_cut(str(k)): _cut(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_cut(v) for v in value[:8]]
    return value


def shortened(error: ErrorData) -> ErrorData:
    """``error`` with its message cut to `ERROR_LIMIT` characters and the strings of its data to
    `PREFIX` (the SDK's errors quote the request, e.g. an unknown resource's URI in both); the
    same object when it is short already."""
    data_long = error.data is not None and len(json.dumps(error.data, default=str)) > ERROR_LIMIT
    if len(error.message) <= ERROR_LIMIT and not data_long:
        return error
    return ErrorData(
        code=error.code,
        message=brief(error.message),
        data=_cut(error.data) if data_long else error.data,
    )


def tool_error(ctx: ServerRequestContext[Any, Any], message: str) -> dict[str, Any]:
    """A tool result with ``isError`` (what a client's model can read and correct), shaped for
    the connection's protocol era (only 2026-07-28 results carry ``resultType``)."""
    result = CallToolResult(content=[TextContent(type="text", text=message)], is_error=True)
    modern = ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
    return result.model_dump(
        by_alias=True, mode="json", exclude_none=True, exclude=None if modern else {"result_type"}
    )


class BoundedRequests:
    """Server middleware refusing over-long values, and unknown or malformed prompt requests,
    with short errors and one-line logs.

    A tool argument over its limit is a tool error (the caller's model can correct it); an
    over-long name or URI, an unknown prompt or a prompt's missing argument is an
    ``INVALID_PARAMS`` error. Notifications with an over-long value are dropped. Every error
    the SDK raises on the way back is cut (`shortened`).
    """

    def __init__(
        self, limits: RequestLimits, prompt_names: Callable[[], Awaitable[set[str]]]
    ) -> None:
        self.limits = limits
        self.prompt_names = prompt_names

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        refused = refusal(ctx.method, ctx.params, self.limits)
        if refused is not None:
            log.info("refused %s: %s", ctx.method, refused.message)
            if ctx.request_id is None:
                return None
            if ctx.method == "tools/call" and refused.where.startswith("arguments"):
                return tool_error(ctx, refused.message)
            raise MCPError(code=INVALID_PARAMS, message=refused.message)
        try:
            return await self._serve(ctx, call_next)
        except MCPError as exc:
            short = shortened(exc.error)
            if short is exc.error:
                raise
            raise MCPError(code=short.code, message=short.message, data=short.data) from None

    async def _serve(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        if ctx.method != "prompts/get" or ctx.request_id is None:
            return await call_next(ctx)
        name = (ctx.params or {}).get("name")
        if isinstance(name, str) and name not in await self.prompt_names():
            raise MCPError(code=INVALID_PARAMS, message=f"unknown prompt {name!r}")
        try:
            return await call_next(ctx)
        except ValueError as exc:
            message = _clients_mistake(exc)
            if message is None:
                raise
            log.info("prompt %r refused: %s", name, message)
            raise MCPError(code=INVALID_PARAMS, message=message) from None


def _clients_mistake(exc: BaseException) -> str | None:
    """What a client did wrong, when a prompt failed for it; None for a server fault.

    The SDK reports a client's mistakes with prompts as ValueError (a missing argument), each
    layer wrapping the last in a new one; a ResourceError of ours (an unknown conflict, a value
    the graph refuses) as the innermost cause is a client's mistake too; any other is a fault,
    which the SDK's dispatcher logs as one."""
    while exc.__cause__ is not None and isinstance(exc, ValueError):
        exc = exc.__cause__
    if isinstance(exc, ValueError | ResourceError):
        return brief(str(exc))
    return None
