"""Bearer tokens for multi-client HTTP: each token maps to one model name; only hashes are stored.

The token file is JSON: ``{"tokens": [{"model": "claude", "sha256": "<hex>"}, ...]}``.
`hivemind-lab mcp token add MODEL --file F` creates a token, stores its hash and prints the token
once.
"""

from __future__ import annotations

import fcntl
import hashlib
import hmac
import json
import re
import secrets
from pathlib import Path

from mcp.server.auth.provider import AccessToken

from hivemind_lab.errors import InputError
from hivemind_lab.mcp_server.settings import MODEL_PATTERN
from hivemind_lab.runs.atomic import write_text_atomic


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


def add_token(path: Path, model: str) -> str:
    """Create a token for ``model``, store its hash (file mode 600), return the token."""
    if not re.match(MODEL_PATTERN, model):
        raise InputError("model", f"invalid model name {model!r}")
    token = "hm_" + secrets.token_urlsafe(32)
    path.parent.mkdir(parents=True, exist_ok=True)
    # Read, add, write back under a lock: two `token add` at once each keep their token.
    with path.with_name(f".{path.name}.lock").open("a") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        data: dict[str, list[dict[str, str]]] = {"tokens": []}
        if path.exists():
            load_token_file(path)
            data = json.loads(path.read_text("utf-8"))
        data["tokens"].append({"model": model, "sha256": token_hash(token)})
        write_text_atomic(path, json.dumps(data, indent=2) + "\n", mode=0o600)
    return token


class TokenFileVerifier:
    """The MCP SDK's TokenVerifier over a token file: the token's model becomes the client id."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._table = load_token_file(path)

    async def verify_token(self, token: str) -> AccessToken | None:
        digest = token_hash(token)
        for known, model in self._table.items():
            if hmac.compare_digest(known, digest):
                return AccessToken(token=token, client_id=model, scopes=["hivemind"])
        return None
