"""The chat bridge: ``POST /bridge/assert`` lets a group-chat bot assert as its own model.

It sits beside ``/mcp`` on the same HTTP server and gets the same protection: bearer token,
Host/Origin checks (DNS rebinding), JSON content type and the request-body limit. Errors are
JSON objects naming the field at fault, never Python exception text.
"""

from __future__ import annotations

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse

from hivemind_lab.errors import HivemindError
from hivemind_lab.graph import HivemindGraph
from hivemind_lab.mcp_server.arguments import BridgeAssertion, brief, describe
from hivemind_lab.mcp_server.exposure import BodyTooLarge, check_request, read_body
from hivemind_lab.mcp_server.tokens import TokenFileVerifier
from hivemind_lab.mcp_server.webhooks import WebhookNotifier

BRIDGE_PATH = "/bridge/assert"


def add_bridge(
    server: MCPServer,
    graph: HivemindGraph,
    verifier: TokenFileVerifier,
    *,
    security: TransportSecuritySettings,
    max_bytes: int,
    notifier: WebhookNotifier | None = None,
) -> None:
    """Register ``POST /bridge/assert`` on ``server`` (token mode only)."""

    @server.custom_route(BRIDGE_PATH, methods=["POST"])
    async def bridge_assert(request: Request) -> JSONResponse:
        """A chat bridge asserts as its own model identity (its bearer token's model)."""
        refused = await check_request(request, security)
        if refused is not None:
            return refused
        header = request.headers.get("authorization", "")
        token = (
            await verifier.verify_token(header[7:])
            if header.lower().startswith("bearer ")
            else None
        )
        if token is None:
            return JSONResponse(
                {"error": "unauthorized"}, status_code=401, headers={"WWW-Authenticate": "Bearer"}
            )
        try:
            body = await read_body(request, max_bytes)
        except BodyTooLarge:
            return JSONResponse({"error": f"body: larger than {max_bytes} bytes"}, status_code=413)
        try:
            claim = BridgeAssertion.model_validate_json(body)
        except ValidationError as exc:
            return JSONResponse({"error": brief(describe(exc))}, status_code=400)
        try:
            result = await anyio.to_thread.run_sync(
                lambda: graph.assert_claim(
                    claim.subject,
                    claim.predicate,
                    claim.obj,
                    claim.confidence,
                    claim.domain,
                    claim.evidence,
                    model=token.client_id,
                )
            )
        except HivemindError as exc:
            return JSONResponse({"error": brief(str(exc))}, status_code=400)
        if notifier and result.conflicts_detected:
            notifier.publish("conflict.created", {"by": token.client_id, **result.model_dump()})
        return JSONResponse(result.model_dump())
