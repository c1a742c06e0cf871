"""Outbound webhooks: HMAC-signed POSTs of new conflicts and consensus results (the spec's
group-chat bridge). Sending never blocks a tool call: events go on a queue that a background
task drains with retries and exponential backoff."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import httpx

log = logging.getLogger(__name__)
SIGNATURE_HEADER = "X-Hivemind-Signature"
TIMESTAMP_HEADER = "X-Hivemind-Timestamp"


def sign(secret: str, timestamp: str, body: bytes) -> str:
    """``sha256=<hex>`` of HMAC-SHA256 over ``<timestamp>.<body>``."""
    mac = hmac.new(secret.encode("utf-8"), timestamp.encode("ascii") + b"." + body, hashlib.sha256)
    return "sha256=" + mac.hexdigest()


def verify(secret: str, timestamp: str, body: bytes, signature: str) -> bool:
    """Check a webhook signature (for receivers)."""
    return hmac.compare_digest(sign(secret, timestamp, body), signature)


class WebhookNotifier:
    """Queues events and delivers them to every URL, retrying failures with backoff."""

    def __init__(
        self,
        urls: Sequence[str],
        secret: str,
        *,
        attempts: int = 5,
        backoff_s: float = 0.5,
        timeout_s: float = 10.0,
    ) -> None:
        self.urls = tuple(urls)
        self.secret = secret
        self.attempts = attempts
        self.backoff_s = backoff_s
        self.timeout_s = timeout_s
        self.delivered = 0
        self.failed = 0
        self._queue: asyncio.Queue[dict[str, Any]] | None = None
        self._task: asyncio.Task[None] | None = None

    def publish(self, event: str, data: dict[str, Any]) -> None:
        """Queue an event; returns at once (called from tool handlers)."""
        if not self.urls:
            return
        if self._queue is None:
            self._queue = asyncio.Queue()
            self._task = asyncio.get_running_loop().create_task(self._drain())
        self._queue.put_nowait({"event": event, "sent_at": time.time(), "data": data})

    async def _drain(self) -> None:
        import httpx  # only a server with webhooks pays for the HTTP client at start-up

        assert self._queue is not None
        async with httpx.AsyncClient(timeout=self.timeout_s) as client:
            while True:
                payload = await self._queue.get()
                body = json.dumps(payload, sort_keys=True).encode("utf-8")
                await asyncio.gather(*(self._deliver(client, url, body) for url in self.urls))
                self._queue.task_done()

    async def _deliver(self, client: httpx.AsyncClient, url: str, body: bytes) -> None:
        import httpx
        from tenacity import (
            AsyncRetrying,
            RetryCallState,
            RetryError,
            retry_if_exception_type,
            retry_if_result,
            stop_after_attempt,
            wait_exponential,
        )

        async def post() -> httpx.Response:
            stamp = str(int(time.time()))
            headers = {
                "content-type": "application/json",
                TIMESTAMP_HEADER: stamp,
                SIGNATURE_HEADER: sign(self.secret, stamp, body),
            }
            return await client.post(url, content=body, headers=headers)

        def busy(response: httpx.Response) -> bool:
            return response.status_code >= 500 or response.status_code == 429

        def warn(state: RetryCallState) -> None:
            failure = state.outcome.exception() if state.outcome else None
            if failure is not None:
                log.warning(
                    "webhook %s failed (attempt %d): %s", url, state.attempt_number, failure
                )

        retrying = AsyncRetrying(
            retry=retry_if_exception_type(httpx.HTTPError) | retry_if_result(busy),
            stop=stop_after_attempt(max(1, self.attempts)),
            wait=wait_exponential(multiplier=self.backoff_s),
            before_sleep=warn,
        )
        try:
            response: httpx.Response = await retrying(post)
        except (RetryError, httpx.HTTPError):
            self.failed += 1
            return
        self.delivered += response.is_success
        self.failed += not response.is_success

    async def flush(self) -> None:
        """Wait until every queued event was delivered or given up (tests, shutdown)."""
        if self._queue is not None:
            await self._queue.join()
