"""Content-addressed response cache (SQLite), so any run can be replayed exactly.

The key is the SHA-256 of backend, model and the full request (messages and parameters). In
``replay`` mode a miss raises `CacheMissError` instead of calling the backend: a replay makes
zero network calls by construction.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from tenacity import Retrying, retry_if_exception, stop_after_delay, wait_fixed

from hivemind_lab.errors import CacheMissError, InputError
from hivemind_lab.llm.base import ChatModel, ChatRequest, ChatResponse

CacheMode = Literal["read_write", "replay", "write_only"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    backend TEXT NOT NULL,
    model TEXT NOT NULL,
    request TEXT NOT NULL,
    response TEXT NOT NULL,
    created_at TEXT NOT NULL
)
"""


def _locked(exc: BaseException) -> bool:
    return isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc)


class ResponseCache:
    """A SQLite table of request → response, safe across threads and processes (WAL).

    By default every reply is committed as it is stored. A cache only one process writes (a
    run's own) can group-commit instead (``commit_interval`` > 0): a reply is committed with the
    others of its phase (`flush`), at most ``commit_interval`` seconds after it arrived, and on
    `close`; a process killed outright loses at most that interval's replies, which a resumed
    run asks again. A cache several processes share (a sweep's) must not: an open write
    transaction makes the other processes wait for its lock.
    """

    def __init__(self, path: str | Path, *, commit_interval: float = 0.0) -> None:
        self.commit_interval = commit_interval
        self._last_commit = time.monotonic()
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(self.path, timeout=30, check_same_thread=False)
        # Switching a new file to WAL can report "database is locked" at once, without waiting
        # for the busy timeout, when several processes open it together (sweep workers): retry.
        for attempt in Retrying(
            retry=retry_if_exception(_locked),
            stop=stop_after_delay(30),
            wait=wait_fixed(0.05),
            reraise=True,
        ):
            with attempt:
                self._conn.execute("PRAGMA journal_mode=WAL")
                self._conn.execute("PRAGMA synchronous=NORMAL")
                self._conn.execute(_SCHEMA)
                self._conn.commit()

    def get(self, key: str) -> ChatResponse | None:
        """The cached response for ``key``, if any."""
        with self._lock:
            row = self._conn.execute(
                "SELECT response FROM responses WHERE key = ?", (key,)
            ).fetchone()
        return ChatResponse.model_validate_json(row[0]) if row else None

    def put(
        self, key: str, *, backend: str, model: str, request: ChatRequest, response: ChatResponse
    ) -> None:
        """Store a response (first writer wins: a key's response never changes)."""
        with self._lock:
            self._conn.execute(
                "INSERT OR IGNORE INTO responses VALUES (?, ?, ?, ?, ?, ?)",
                (
                    key,
                    backend,
                    model,
                    request.model_dump_json(),
                    response.model_copy(update={"cached": False}).model_dump_json(),
                    datetime.now(UTC).isoformat(),
                ),
            )
            if time.monotonic() - self._last_commit >= self.commit_interval:
                self._commit()

    def _commit(self) -> None:
        self._conn.commit()
        self._last_commit = time.monotonic()

    def flush(self) -> None:
        """Commit every reply stored so far."""
        with self._lock:
            self._commit()

    def __len__(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def copy_to(self, other: ResponseCache, keys: set[str] | None = None) -> int:
        """Copy entries (all, or only ``keys``) into another cache; returns how many were new."""
        with self._lock:
            self._commit()
            rows = self._conn.execute("SELECT * FROM responses").fetchall()
        selected = [r for r in rows if keys is None or r[0] in keys]
        with other._lock:
            before = other._conn.total_changes
            other._conn.executemany(
                "INSERT OR IGNORE INTO responses VALUES (?, ?, ?, ?, ?, ?)", selected
            )
            other._conn.commit()
            return other._conn.total_changes - before

    def close(self) -> None:
        """Commit and close the connection."""
        with self._lock:
            self._commit()
            self._conn.close()


class CachingChatModel:
    """Wraps a ChatModel with the response cache and counts hits and misses."""

    def __init__(
        self,
        inner: ChatModel | None,
        cache: ResponseCache,
        *,
        mode: CacheMode = "read_write",
        backend: str | None = None,
        model: str | None = None,
    ) -> None:
        if inner is None and (backend is None or model is None or mode != "replay"):
            raise InputError("inner", "a backend is required unless replaying", allowed="ChatModel")
        self.inner = inner
        self.cache = cache
        self.mode: CacheMode = mode
        self.backend = backend or (inner.backend if inner else "")
        self.model = model or (inner.model if inner else "")
        self.hits = 0
        self.misses = 0
        self.keys_used: set[str] = set()

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """Serve from cache when possible; otherwise call the backend and store the reply."""
        key = request.cache_key(backend=self.backend, model=self.model)
        self.keys_used.add(key)
        if self.mode != "write_only":
            cached = self.cache.get(key)
            if cached is not None:
                self.hits += 1
                return cached.model_copy(update={"cached": True})
        if self.mode == "replay" or self.inner is None:
            raise CacheMissError(
                f"replay: no cached response for request {key[:12]} ({self.backend}/{self.model}); "
                "the run's inputs or prompts differ from the recorded run"
            )
        self.misses += 1
        response = await self.inner.complete(request)
        self.cache.put(
            key, backend=self.backend, model=self.model, request=request, response=response
        )
        return response
