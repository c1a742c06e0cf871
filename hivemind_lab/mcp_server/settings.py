"""Server settings: one typed object, read from the environment at start-up only."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal, Self

from pydantic import Field, field_validator
from pydantic_settings import NoDecode

from hivemind_lab.envconfig import EnvSettings
from hivemind_lab.errors import InputError

Transport = Literal["stdio", "http", "sse"]
MODEL_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:@-]{0,63}$"

Names = Annotated[tuple[str, ...], NoDecode]
"""Several values; in a variable, separated by commas or white space."""
WILDCARD_HOSTS = ("0.0.0.0", "::", "")


def is_loopback(host: str) -> bool:
    """Whether a bind address only accepts connections from this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class ServerSettings(EnvSettings):
    """How the MCP server runs and whom it speaks for (a field's alias is its variable)."""

    source_model: str | None = Field(
        default=None, pattern=MODEL_PATTERN, validation_alias="SOURCE_MODEL"
    )
    """SOURCE_MODEL: the identity of a stdio server or of single-user HTTP mode."""
    transport: Transport = "stdio"
    host: str = "127.0.0.1"
    port: int = Field(default=8765, ge=0, le=65535)
    token_file: Path | None = Field(default=None, validation_alias="HIVEMIND_TOKEN_FILE")
    """HIVEMIND_TOKEN_FILE: bearer-token hashes → model names (multi-client HTTP)."""
    max_request_bytes: int = Field(
        default=1_000_000, ge=1_000, le=100_000_000, validation_alias="HIVEMIND_MAX_REQUEST_BYTES"
    )
    """HIVEMIND_MAX_REQUEST_BYTES: the largest HTTP request body or stdio message (a longer one is
    refused unread); names, URIs and argument values have limits of their own (`limits`)."""
    read_timeout_s: float = Field(
        default=30.0, gt=0, le=3600, validation_alias="HIVEMIND_READ_TIMEOUT_S"
    )
    """HIVEMIND_READ_TIMEOUT_S: each HTTP request (head and body) must arrive within this many
    seconds of its own first byte (of the connection's opening, for the first), on a new or a
    kept-alive connection; else the connection is closed."""
    idle_timeout_s: int = Field(
        default=15, ge=1, le=3600, validation_alias="HIVEMIND_IDLE_TIMEOUT_S"
    )
    """HIVEMIND_IDLE_TIMEOUT_S: a kept-alive HTTP connection with no new request is closed after
    this many seconds (open SSE streams are responses in progress, never idle)."""
    allowed_hosts: Names = Field(default=(), validation_alias="HIVEMIND_ALLOWED_HOSTS")
    """HIVEMIND_ALLOWED_HOSTS: extra Host header values accepted besides this server's own
    (``name``, ``name:port`` or ``name:*``; DNS-rebinding protection)."""
    allowed_origins: Names = Field(default=(), validation_alias="HIVEMIND_ALLOWED_ORIGINS")
    """HIVEMIND_ALLOWED_ORIGINS: extra Origin values accepted besides this server's own."""
    public_url: str | None = Field(
        default=None, pattern=r"^https?://[^/?#\s]+$", validation_alias="HIVEMIND_PUBLIC_URL"
    )
    """HIVEMIND_PUBLIC_URL: the base URL clients reach this server at (``scheme://host[:port]``),
    advertised as the OAuth resource; defaults to the bind address, or to this machine's name
    when bound to every interface."""
    conformance_fixtures: bool = False
    """Also serve the official conformance suite's fixture tools (CI only)."""
    webhook_urls: Names = Field(default=(), validation_alias="HIVEMIND_WEBHOOK_URLS")
    """HIVEMIND_WEBHOOK_URLS: where new conflicts and consensus results are POSTed."""
    webhook_secret: str | None = Field(
        default=None, repr=False, validation_alias="HIVEMIND_WEBHOOK_SECRET"
    )
    """HIVEMIND_WEBHOOK_SECRET: HMAC-SHA256 key signing outbound webhooks."""

    @field_validator("allowed_hosts", "allowed_origins", "webhook_urls", mode="before")
    @classmethod
    def _separated(cls, value: Any) -> Any:
        return (
            tuple(u for u in re.split(r"[,\s]+", value) if u) if isinstance(value, str) else value
        )

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: Any) -> Self:
        """The settings from ``env``'s variables (the process environment when None) and the
        flags (``overrides``, which win), checked as a whole (`check`)."""
        settings = super().from_env(env, **overrides)
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
