"""A ChatModel wrapper that adds a fixed latency per call (benchmarks: proves concurrency)."""

from __future__ import annotations

import asyncio

from hivemind_lab.llm.base import ChatModel, ChatRequest, ChatResponse


class LatencyChatModel:
    """Delays every call of ``inner`` by ``seconds`` and records the peak concurrency."""

    def __init__(self, inner: ChatModel, seconds: float) -> None:
        self.inner = inner
        self.seconds = seconds
        self.backend = inner.backend
        self.model = inner.model
        self.in_flight = 0
        self.peak_in_flight = 0

    async def complete(self, request: ChatRequest) -> ChatResponse:
        self.in_flight += 1
        self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        try:
            await asyncio.sleep(self.seconds)
            return await self.inner.complete(request)
        finally:
            self.in_flight -= 1
