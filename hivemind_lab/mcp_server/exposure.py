"""Who may reach the HTTP server and under which name: allowed Host and Origin headers (DNS-
rebinding protection), the public URL advertised to OAuth clients, and the same checks for the
chat bridge's custom route that the SDK applies to ``/mcp``."""

from __future__ import annotations

import socket
from collections.abc import Sequence
from urllib.parse import urlsplit

from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from starlette.requests import Request
from starlette.responses import JSONResponse

from hivemind_lab.mcp_server.settings import ServerSettings
from hivemind_lab.models import Frozen

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")


class Exposure(Frozen):
    """The names this server answers to, computed once at start-up."""

    base_url: str
    """``scheme://host:port`` clients use; ``/mcp`` is appended for the resource URL."""
    allowed_hosts: tuple[str, ...]
    allowed_origins: tuple[str, ...]

    @property
    def resource_url(self) -> str:
        return f"{self.base_url}/mcp"

    def transport_security(self) -> TransportSecuritySettings:
        """The SDK's settings for ``/mcp`` and ``/sse`` (the bridge uses the same)."""
        return TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=list(self.allowed_hosts),
            allowed_origins=list(self.allowed_origins),
        )


def machine_names() -> tuple[str, ...]:
    """This machine's host name, fully qualified name and the addresses they resolve to: the
    names remote clients use to reach a server bound to every interface."""
    names = {socket.gethostname(), socket.getfqdn()}
    for name in tuple(names):
        try:
            infos = socket.getaddrinfo(name, None, proto=socket.IPPROTO_TCP)
        except OSError:
            continue
        names.update(str(info[4][0]) for info in infos)
    return tuple(sorted(n for n in names if n))


def _netloc(host: str, port: int | None) -> str:
    name = f"[{host}]" if ":" in host and not host.startswith("[") else host
    return name if port is None else f"{name}:{port}"


def _with_port(host: str, port: int) -> tuple[str, ...]:
    """A configured host as given, plus ``host:port`` when it names no port."""
    has_port = ":" in host.rpartition("]")[2]
    return (host,) if has_port else (host, f"{host}:{port}")


def exposure(settings: ServerSettings, *, names: Sequence[str] | None = None) -> Exposure:
    """Allowed hosts and origins and the public base URL for ``settings``.

    Args:
        settings: the server's settings (bind address, port, public URL, extra names).
        names: this machine's names when bound to every interface (default: looked up).
    """
    port = settings.port
    own = [*LOOPBACK_NAMES]
    if settings.binds_everywhere:
        own.extend(machine_names() if names is None else names)
    else:
        own.append(settings.host)
    netlocs = [_netloc(n, port) for n in dict.fromkeys(own)]
    origins = [f"http://{n}" for n in netlocs]
    if settings.public_url:
        base = settings.public_url.rstrip("/")
        public = urlsplit(base)
        default_port = 443 if public.scheme == "https" else 80
        netlocs.append(public.netloc)
        if public.port is None:  # clients may or may not spell the default port
            netlocs.append(f"{public.netloc}:{default_port}")
        origins.append(f"{public.scheme}://{public.netloc}")
    elif settings.binds_everywhere:
        base = f"http://{_netloc(socket.getfqdn() if names is None else names[0], port)}"
    else:
        base = f"http://{_netloc(settings.host, port)}"
    extra_hosts = [h for given in settings.allowed_hosts for h in _with_port(given, port)]
    return Exposure(
        base_url=base,
        allowed_hosts=tuple(dict.fromkeys([*netlocs, *extra_hosts])),
        allowed_origins=tuple(dict.fromkeys([*origins, *settings.allowed_origins])),
    )


async def check_request(
    request: Request, security: TransportSecuritySettings
) -> JSONResponse | None:
    """Host, Origin and Content-Type checks of ``/mcp`` for a custom POST route, as JSON errors."""
    refused = await TransportSecurityMiddleware(security).validate_request(request, is_post=True)
    if refused is None:
        return None
    return JSONResponse(
        {"error": bytes(refused.body).decode("utf-8")}, status_code=refused.status_code
    )


class BodyTooLarge(Exception):
    """The request body exceeds the server's limit."""


async def read_body(request: Request, limit: int) -> bytes:
    """The request body, refusing more than ``limit`` bytes before reading it all."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise BodyTooLarge
    body = bytearray()
    async for chunk in request.stream():
        body.extend(chunk)
        if len(body) > limit:
            raise BodyTooLarge
    return bytes(body)
