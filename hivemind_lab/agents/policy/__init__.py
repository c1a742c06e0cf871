"""A deterministic, evidence-driven offline agent model. It is not an LLM.

It answers hivemind agent tasks (see `hivemind_lab.agents.schemas`) by reading the task block of
the prompt and working only from what is in it — the client's options and facts and the agent's
own evidence — so the whole product runs and is tested with no network. It reasons about the
options rather than copying sentences: see `theory` (propose, revise), `critique`, `practicality`
(score) and `reading` (how evidence and facts are read).

Same request ⇒ byte-identical reply.
"""

from __future__ import annotations

import asyncio
import functools
import json

from pydantic import BaseModel

from hivemind_lab.agents.policy import identity
from hivemind_lab.agents.policy.critique import critique, critique_batch
from hivemind_lab.agents.policy.monitor import synthesize
from hivemind_lab.agents.policy.practicality import score, score_batch
from hivemind_lab.agents.policy.theory import propose, revise
from hivemind_lab.agents.prompts import parse_task
from hivemind_lab.agents.schemas import (
    BatchCritiqueTask,
    BatchScoreTask,
    CritiqueTask,
    ProposeTask,
    ReviseTask,
    SynthesizeTask,
)
from hivemind_lab.llm.base import ChatRequest, ChatResponse, Usage
from hivemind_lab.tokens import TokenCounter, default_counter
from hivemind_lab.wire import WIRE

OFFLINE_MODEL_ID = "hivemind-offline-v2"

__all__ = [
    "OFFLINE_MODEL_ID",
    "OfflineAgentModel",
    "critique",
    "critique_batch",
    "propose",
    "revise",
    "score",
    "score_batch",
    "synthesize",
]


class OfflineAgentModel:
    """ChatModel that answers hivemind agent tasks deterministically from their evidence."""

    backend = "offline"

    def __init__(
        self, *, counter: TokenCounter | None = None, model: str = OFFLINE_MODEL_ID
    ) -> None:
        self.model = model
        self._counter = counter or default_counter()
        self._count_line = functools.lru_cache(maxsize=65536)(self._counter.count)
        self.calls = 0
        # The name does not change with the code; the manifest records both (sweeps compare).
        self.model_info: dict[str, str] = {"code": identity.code_fingerprint()}

    def answer(self, request: ChatRequest) -> BaseModel:
        """The structured answer to a rendered task request."""
        task = parse_task(request)
        if isinstance(task, ProposeTask):
            return propose(task, request.seed)
        if isinstance(task, CritiqueTask):
            return critique(task)
        if isinstance(task, BatchCritiqueTask):
            return critique_batch(task)
        if isinstance(task, ReviseTask):
            return revise(task)
        if isinstance(task, SynthesizeTask):
            return synthesize(task)
        if isinstance(task, BatchScoreTask):
            return score_batch(task)
        return score(task)

    def count_prompt(self, request: ChatRequest) -> int:
        """Prompt tokens, counted line by line so a passage repeated across calls is counted
        once (one token per line break; within a few tokens of counting the whole text)."""
        total = 0
        for message in request.messages:
            lines = message.content.split("\n")
            total += sum(self._count_line(line) for line in lines) + len(lines) - 1
        return total

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """Answer without I/O (yields once so concurrent callers interleave fairly)."""
        self.calls += 1
        try:
            answer = self.answer(request)
        except ValueError as exc:
            raise ValueError(
                f"the offline model only answers hivemind agent task prompts: {exc}"
            ) from exc
        content = json.dumps(
            answer.model_dump(mode="json", context=WIRE), ensure_ascii=False, sort_keys=True
        )
        usage = Usage(
            prompt_tokens=self.count_prompt(request),
            completion_tokens=self._counter.count(content),
        )
        await asyncio.sleep(0)
        return ChatResponse(content=content, usage=usage, model=self.model)
