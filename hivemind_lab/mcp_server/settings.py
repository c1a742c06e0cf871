"""Server settings: one typed object, read from the environment at start-up only."""

from __future__ import annotations

import ipaddress
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from hivemind_lab.envconfig import from_env
from hivemind_lab.errors import InputError

Transport = Literal["stdio", "http", "sse"]
MODEL_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:@-]{0,63}$"


ENV_VARIABLES = {
    "SOURCE_MODEL": "source_model",
    "HIVEMIND_TOKEN_FILE": "token_file",
    "HIVEMIND_WEBHOOK_SECRET": "webhook_secret",
    "HIVEMIND_MAX_REQUEST_BYTES": "max_request_bytes",
    "HIVEMIND_PUBLIC_URL": "public_url",
    "HIVEMIND_READ_TIMEOUT_S": "read_timeout_s",
    "HIVEMIND_IDLE_TIMEOUT_S": "idle_timeout_s",
}
LIST_VARIABLES = {
    "HIVEMIND_WEBHOOK_URLS": "webhook_urls",
    "HIVEMIND_ALLOWED_HOSTS": "allowed_hosts",
    "HIVEMIND_ALLOWED_ORIGINS": "allowed_origins",
}
"""Variables holding several values, separated by commas or white space."""
WILDCARD_HOSTS = ("0.0.0.0", "::", "")


def is_loopback(host: str) -> bool:
    """Whether a bind address only accepts connections from this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class ServerSettings(BaseModel):
    """How the MCP server runs and whom it speaks for."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    source_model: str | None = Field(default=None, pattern=MODEL_PATTERN)
    """SOURCE_MODEL: the identity of a stdio server or of single-user HTTP mode."""
    transport: Transport = "stdio"
    host: str = "127.0.0.1"
    port: int = Field(default=8765, ge=0, le=65535)
    token_file: Path | None = None
    """HIVEMIND_TOKEN_FILE: bearer-token hashes → model names (multi-client HTTP)."""
    max_request_bytes: int = Field(default=1_000_000, ge=1_000, le=100_000_000)
    read_timeout_s: float = Field(default=30.0, gt=0, le=3600)
    """HIVEMIND_READ_TIMEOUT_S: an HTTP request (head and body) must arrive within this many
    seconds of its first byte, or of the connection's opening; else the connection is closed."""
    idle_timeout_s: int = Field(default=15, ge=1, le=3600)
    """HIVEMIND_IDLE_TIMEOUT_S: a kept-alive HTTP connection with no new request is closed after
    this many seconds (open SSE streams are responses in progress, never idle)."""
    allowed_hosts: tuple[str, ...] = ()
    """HIVEMIND_ALLOWED_HOSTS: extra Host header values accepted besides this server's own
    (``name``, ``name:port`` or ``name:*``; DNS-rebinding protection)."""
    allowed_origins: tuple[str, ...] = ()
    """HIVEMIND_ALLOWED_ORIGINS: extra Origin values accepted besides this server's own."""
    public_url: str | None = Field(default=None, pattern=r"^https?://[^/?#\s]+$")
    """HIVEMIND_PUBLIC_URL: the base URL clients reach this server at (``scheme://host[:port]``),
    advertised as the OAuth resource; defaults to the bind address, or to this machine's name
    when bound to every interface."""
    conformance_fixtures: bool = False
    """Also serve the official conformance suite's fixture tools (CI only)."""
    webhook_urls: tuple[str, ...] = ()
    """HIVEMIND_WEBHOOK_URLS: where new conflicts and consensus results are POSTed."""
    webhook_secret: str | None = Field(default=None, repr=False)
    """HIVEMIND_WEBHOOK_SECRET: HMAC-SHA256 key signing outbound webhooks."""

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: Any) -> ServerSettings:
        env = os.environ if env is None else env
        extra = {
            field: tuple(u for u in re.split(r"[,\s]+", env[var]) if u)
            for var, field in LIST_VARIABLES.items()
            if env.get(var)
        }
        names = {**ENV_VARIABLES, **LIST_VARIABLES}
        settings = from_env(cls, env, names, extra=extra, overrides=overrides)
        settings.check()
        return settings

    @property
    def binds_everywhere(self) -> bool:
        """Whether the server listens on every interface (0.0.0.0 or ::)."""
        return self.host in WILDCARD_HOSTS

    def check(self) -> None:
        """Refuse configurations that would serve the wrong identity or expose the graph."""
        if self.transport == "stdio" and not self.source_model:
            raise InputError(
                "SOURCE_MODEL",
                "required for the stdio transport: the model name "
                "this server speaks for (e.g. claude, grok, gemini)",
            )
        if self.transport != "stdio" and self.token_file is None:
            if not self.source_model:
                raise InputError(
                    "SOURCE_MODEL",
                    "required for HTTP without a token file "
                    "(single-user mode serves as SOURCE_MODEL)",
                )
            if not is_loopback(self.host):
                raise InputError(
                    "host",
                    f"single-user mode (no HIVEMIND_TOKEN_FILE) only binds to "
                    f"loopback, got {self.host!r}",
                    allowed="127.0.0.1, ::1 or localhost",
                )
        if self.token_file is not None and not self.token_file.exists():
            raise InputError("HIVEMIND_TOKEN_FILE", f"{str(self.token_file)!r} does not exist")
        if self.webhook_urls and not self.webhook_secret:
            raise InputError(
                "HIVEMIND_WEBHOOK_SECRET",
                "required when webhook URLs are set (outbound webhooks are always signed)",
            )
