"""The one path from a task to a validated answer: render, call (bounded), audit, account."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Protocol, TypeVar

from pydantic import BaseModel

from hivemind_lab.agents.budget import fit_task
from hivemind_lab.agents.calls import ModelCall
from hivemind_lab.agents.prompts import Task, render
from hivemind_lab.agents.schemas import (
    validation_context,
)
from hivemind_lab.agents.usage import UsageSummary
from hivemind_lab.errors import HivemindError
from hivemind_lab.llm.base import ChatModel, ChatResponse, model_name
from hivemind_lab.llm.limits import ModelLimits
from hivemind_lab.llm.structured import complete_structured
from hivemind_lab.models import Event
from hivemind_lab.tokens import default_counter

T = TypeVar("T", bound=BaseModel)
FLUSH_INTERVAL = 1.0
"""Seconds a batched call record may wait before it is written anyway (slow models)."""


class AuditSink(Protocol):
    """Where call records go: a run's audit log, named by what the caller needs of it so that
    the agents do not import the run layer that records them."""

    def extend(self, entries: Sequence[tuple[str, Event]]) -> object: ...


class BudgetExhausted(HivemindError):
    """The run's token or cost budget is spent."""


def added(usage: UsageSummary, responses: Sequence[ChatResponse]) -> UsageSummary:
    """``usage`` with the calls of ``responses`` counted in."""
    u = usage
    for response in responses:
        hit = int(response.cached)
        u = UsageSummary(
            calls=u.calls + 1,
            model_calls=u.model_calls + 1 - hit,
            cache_hits=u.cache_hits + hit,
            prompt_tokens=u.prompt_tokens + response.usage.prompt_tokens,
            cached_prompt_tokens=u.cached_prompt_tokens + response.usage.cached_prompt_tokens,
            completion_tokens=u.completion_tokens + response.usage.completion_tokens,
            tokens=u.tokens + response.usage.total_tokens,
            cost_usd=round(u.cost_usd + response.usage.cost_usd, 10),
        )
    return u


class AgentCaller:
    """Calls the model for agent tasks, at most ``concurrency`` at once.

    Every request and reply is written to the audit log (when given) and counted in `usage`.
    An agent named in ``models`` (a roster's) is answered by its own model, and its calls are
    also counted in that model's line of `usage_by_model`; every other agent by ``model``. An
    agent whose model has token limits (``limits_for``) gets its task's evidence packed to
    them first (`hivemind_lab.agents.budget.fit_task`).
    """

    def __init__(
        self,
        model: ChatModel,
        *,
        models: Mapping[str, ChatModel] | None = None,
        usage_by_model: Mapping[str, UsageSummary] | None = None,
        limits_for: Callable[[str], ModelLimits | None] | None = None,
        audit: AuditSink | None = None,
        seed: int = 0,
        concurrency: int = 16,
        max_tokens: int | None = None,
        max_cost_usd: float | None = None,
        usage: UsageSummary | None = None,
        batch_audit: bool = False,
    ) -> None:
        self.model = model
        self.models = dict(models or {})
        """The model of each agent a roster names (by agent id); empty: ``model`` for all."""
        self.usage_by_model = dict(usage_by_model or {})
        """With a roster: what each model's calls consumed, by `model_name`."""
        self.limits_for = limits_for
        """The token limits of the model that answers an agent, by agent id (None: none)."""
        self.batch_audit = batch_audit
        """Hold call records until `flush` (one fsync per phase) instead of one per call."""
        self._pending: list[tuple[str, Event]] = []
        self._last_flush = time.monotonic()
        self.audit = audit
        self.seed = seed
        self.max_tokens = max_tokens
        self.max_cost_usd = max_cost_usd
        self.usage = usage or UsageSummary()
        self._semaphore = asyncio.Semaphore(concurrency)

    def _check_budget(self) -> None:
        if self.max_tokens is not None and self.usage.tokens >= self.max_tokens:
            raise BudgetExhausted(f"token budget {self.max_tokens} spent ({self.usage.tokens})")
        if self.max_cost_usd is not None and self.usage.cost_usd >= self.max_cost_usd:
            raise BudgetExhausted(
                f"cost budget ${self.max_cost_usd} spent (${self.usage.cost_usd})"
            )

    async def ask(
        self, actor: str, task: Task, output_type: type[T], *, seed: int | None = None
    ) -> T:
        """Send one task and return the validated answer (``seed`` overrides the run's seed).

        The request carries ``actor`` as its affinity key: a theory agent's, a constraint
        agent's or the monitor's calls go to one server slot, where each extends the cached
        prompt prefix of the last (the key is no part of the prompt or the cache key).
        """
        model = self.model_for(actor)
        limits = self.limits_for(actor) if self.limits_for is not None else None
        bounds: dict[str, int] = {}
        cap: int | None = None
        if limits is not None:  # a small window gets the highest-ranked passages that fit
            fitted = fit_task(task, limits, counter=default_counter(), model=model_name(model))
            task, bounds, cap = fitted.task, {"max_tokens": fitted.max_tokens}, fitted.reply_room
        request = render(task, seed=self.seed if seed is None else seed).model_copy(
            update={"affinity": actor, **bounds}
        )
        async with self._semaphore:
            self._check_budget()
            result = await complete_structured(
                model,
                request,
                output_type,
                context=validation_context(task),
                max_tokens_cap=cap,
            )
        self.usage = added(self.usage, result.responses)
        if self.models:
            name = model_name(model)
            self.usage_by_model[name] = added(
                self.usage_by_model.get(name, UsageSummary()), result.responses
            )
        if self.audit is not None:
            call = ModelCall(
                kind=f"llm.{task.task}",  # type: ignore[arg-type]  # each task's kind is one
                backend=model.backend,
                model=model.model,
                prompt=[m.model_dump() for m in request.messages],
                responses=[
                    {"content": r.content, "usage": r.usage.model_dump(), "cached": r.cached}
                    for r in result.responses
                ],
            )
            self._pending.append((actor, call))
            if not self.batch_audit or time.monotonic() - self._last_flush >= FLUSH_INTERVAL:
                self.flush()
        return result.value

    def model_for(self, actor: str) -> ChatModel:
        """The model that answers ``actor``: its roster entry's, else the run's."""
        return self.models.get(actor, self.model)

    def flush(self) -> None:
        """Write the held call records to the audit log under one fsync."""
        if self.audit is not None and self._pending:
            pending, self._pending = self._pending, []
            self.audit.extend(pending)
        self._last_flush = time.monotonic()
