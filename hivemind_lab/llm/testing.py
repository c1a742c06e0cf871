"""Stand-ins for a language model in tests, at the wire level: no network, no domain reasoning.

`FunctionModel` answers each request with what a test function returns, so a test controls the
reply exactly (a malformed one, a slow one, one per call). It knows nothing of agents; the
content-free agent model built on it is `hivemind_lab.agents.testing.TestModel`.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable

from pydantic import BaseModel

from hivemind_lab.llm.base import ChatRequest, ChatResponse, Usage

Reply = BaseModel | str
"""A reply: an output model (sent as its JSON) or the raw text of the reply."""


def reply_text(reply: Reply) -> str:
    """The reply's wire text: an output model as canonical JSON (sorted keys), text as is."""
    if isinstance(reply, str):
        return reply
    return json.dumps(reply.model_dump(mode="json"), ensure_ascii=False, sort_keys=True)


class FunctionModel:
    """A `ChatModel` whose reply to each request is ``function(request)``.

    Usage counts characters (four to a token), so budget and accounting paths see non-zero,
    deterministic numbers without a tokenizer.
    """

    backend = "function"

    def __init__(
        self, function: Callable[[ChatRequest], Reply], *, model: str = "function"
    ) -> None:
        self.function = function
        self.model = model
        self.calls = 0
        self.requests: list[ChatRequest] = []
        """Every request received, in order (for tests that inspect what was sent)."""

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """Reply without I/O (yields once so concurrent callers interleave)."""
        self.calls += 1
        self.requests.append(request)
        content = reply_text(self.function(request))
        prompt = sum(len(m.content) for m in request.messages)
        usage = Usage(prompt_tokens=prompt // 4 + 1, completion_tokens=len(content) // 4 + 1)
        await asyncio.sleep(0)
        return ChatResponse(content=content, usage=usage, model=self.model)
