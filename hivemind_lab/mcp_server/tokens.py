"""Bearer tokens for multi-client HTTP: each token maps to one model name; only hashes are stored.

The token file is JSON: ``{"tokens": [{"model": "claude", "sha256": "<hex>"}, ...]}``.
`hivemind-lab mcp token add MODEL --file F` creates a token, stores its hash and prints the token
once; `token list` shows each token's model and id (a prefix of its hash); `token remove` deletes
tokens. A running server checks the file on every request and reloads it when it changed, so a
removed token is refused at once, without a restart.
"""

from __future__ import annotations

import fcntl
import hashlib
import hmac
import json
import logging
import re
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from mcp.server.auth.provider import AccessToken

from hivemind_lab.errors import InputError
from hivemind_lab.mcp_server.settings import MODEL_PATTERN
from hivemind_lab.runs.atomic import write_text_atomic

log = logging.getLogger(__name__)
ID_LENGTH = 12
"""Hex digits of a token's hash shown as its id by `token list` (never the token itself)."""


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def load_token_file(path: Path) -> dict[str, str]:
    """Hash → model name; refuses a malformed file with a clear message."""
    try:
        data = json.loads(path.read_text("utf-8"))
        entries = data["tokens"]
        table = {}
        for entry in entries:
            model, digest = entry["model"], entry["sha256"].lower()
            if not re.match(MODEL_PATTERN, model) or not re.fullmatch(r"[0-9a-f]{64}", digest):
                raise ValueError(f"bad entry for {model!r}")
            table[digest] = model
        return table
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise InputError(
            "HIVEMIND_TOKEN_FILE",
            f"{str(path)!r} is not a valid token file ({exc})",
            allowed='{"tokens": [{"model": NAME, "sha256": HEX}]}',
        ) from None


@contextmanager
def _editing(path: Path) -> Iterator[dict[str, list[dict[str, Any]]]]:
    """The token file's JSON to change in place, written back atomically (mode 600) under a
    lock: two `token add` or `remove` at once each keep their change."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.with_name(f".{path.name}.lock").open("a") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        data: dict[str, list[dict[str, Any]]] = {"tokens": []}
        if path.exists():
            load_token_file(path)
            data = json.loads(path.read_text("utf-8"))
        yield data
        write_text_atomic(path, json.dumps(data, indent=2) + "\n", mode=0o600)


def add_token(path: Path, model: str) -> str:
    """Create a token for ``model``, store its hash (file mode 600), return the token."""
    if not re.match(MODEL_PATTERN, model):
        raise InputError("model", f"invalid model name {model!r}")
    token = "hm_" + secrets.token_urlsafe(32)
    with _editing(path) as data:
        data["tokens"].append({"model": model, "sha256": token_hash(token)})
    return token


def list_tokens(path: Path) -> list[tuple[str, str]]:
    """(model, id) of every token in the file, in file order; the id is a prefix of its hash."""
    table = load_token_file(path)
    return [(model, digest[:ID_LENGTH]) for digest, model in table.items()]


def remove_tokens(path: Path, model: str, *, token_id: str | None = None) -> int:
    """Remove ``model``'s tokens (only the one whose id starts with ``token_id``, if given);
    returns how many were removed. Refuses an id prefix that names several tokens."""
    if not path.exists():
        raise InputError("file", f"{str(path)!r} does not exist")
    prefix = (token_id or "").lower()
    if token_id is not None and not re.fullmatch(r"[0-9a-f]{4,64}", prefix):
        raise InputError("id", "4 to 64 hex digits, as `token list` shows", allowed="hex")
    with _editing(path) as data:
        keep: list[dict[str, Any]] = []
        gone: list[dict[str, Any]] = []
        for entry in data["tokens"]:
            hit = entry["model"] == model and entry["sha256"].lower().startswith(prefix)
            (gone if hit else keep).append(entry)
        if token_id is not None and len(gone) > 1:
            raise InputError("id", f"{token_id!r} names {len(gone)} tokens of {model!r}")
        data["tokens"] = keep
    return len(gone)


class TokenFileVerifier:
    """The MCP SDK's TokenVerifier over a token file: the token's model becomes the client id.

    The file is checked on every request (one ``stat``) and reloaded when it changed, so tokens
    added or removed while the server runs take effect at once. A file that becomes unreadable
    or malformed refuses every token until it is fixed (fail closed).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._table = load_token_file(path)
        self._seen = self._version()

    def _version(self) -> tuple[int, int, int] | None:
        try:
            stat = self.path.stat()
        except OSError:
            return None
        return (stat.st_ino, stat.st_mtime_ns, stat.st_size)

    def _current(self) -> dict[str, str]:
        version = self._version()
        if version != self._seen:
            self._seen = version
            try:
                self._table = load_token_file(self.path)
            except InputError as exc:
                log.warning("refusing every token until the token file is fixed: %s", exc)
                self._table = {}
        return self._table

    async def verify_token(self, token: str) -> AccessToken | None:
        digest = token_hash(token)
        for known, model in self._current().items():
            if hmac.compare_digest(known, digest):
                return AccessToken(token=token, client_id=model, scopes=["hivemind"])
        return None
