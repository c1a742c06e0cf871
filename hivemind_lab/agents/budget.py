"""Per-model budgets: an agent's evidence packed to its model's context window.

A task's prompt is a fixed part (the decision, the role, the call's own data, the instructions)
and the agent's ranked passages. A model with a small window gets the highest-ranked passages
that fit beside the fixed part and the reply's budget (`prompts.max_tokens_for`, at most the
model's output limit), chosen by the graph packer's `fill`, instead of a request the model
refuses for its size. Tokens are counted with the project's counter (`hivemind_lab.tokens`)
and converted to the model's with its `ModelLimits.tokenizer_ratio`; the chosen prompt is
counted again whole, so the estimate never decides alone.

A task that fits is returned unchanged (the same prompt, the same cache key), so a model with a
large window sends exactly what it sent before budgets existed.
"""

from __future__ import annotations

import math
from typing import Any

from hivemind_lab.agents.prompts import Task, max_tokens_for, render
from hivemind_lab.agents.schemas import Evidence
from hivemind_lab.errors import InputError
from hivemind_lab.llm.limits import ModelLimits
from hivemind_lab.models import Frozen
from hivemind_lab.tokens import TokenCounter, fill

PASSAGE_FIELDS = ("evidence", "cited")
"""The task fields that hold ranked passages (a revision's ``cited`` are its critics')."""
TEMPLATE_TOKENS = 48
"""Model tokens a chat template adds to a two-message request (role markers, BOS), kept free of
the budget: measured 14 for SmolLM2-135M and 37 for Gemma 3 270M on a grocer proposal (the
server's prompt_tokens less its /tokenize of the two messages)."""


class Fitted(Frozen):
    """A task as packed for one model, and what the packing spent."""

    task: Any
    """The task with only the passages that fit (the same object when all fit)."""
    kept: int
    """Passages sent."""
    dropped: int
    """Passages left out for the window, the lowest-ranked first."""
    prompt_tokens: int
    """The prompt's tokens by the project's counter (both messages' text)."""
    max_tokens: int
    """The reply's budget: the task's, at most the model's output limit."""
    reply_room: int
    """The most reply tokens the window leaves beside this prompt (a cut reply asked again
    with a larger limit grows at most to this)."""


def prompt_tokens(task: Task, counter: TokenCounter) -> int:
    """The rendered request's message text, counted by the project's counter."""
    return sum(counter.count(m.content) for m in render(task).messages)


def _passages(task: Task) -> list[tuple[str, int, Evidence]]:
    fields = type(task).model_fields
    return [
        (name, i, ev)
        for name in PASSAGE_FIELDS
        if name in fields
        for i, ev in enumerate(getattr(task, name))
    ]


def _keep(task: Task, passages: list[tuple[str, int, Evidence]], keep: set[int]) -> Task:
    """``task`` with the passages whose position in ``passages`` is in ``keep``, in their own
    order; references to a dropped passage by id (a batched score's per-solution ids) go too."""
    update: dict[str, Any] = {}
    for name in {field for field, _, _ in passages}:
        update[name] = tuple(
            ev for k, (field, _, ev) in enumerate(passages) if field == name and k in keep
        )
    kept_ids = {ev.id for k, (_, _, ev) in enumerate(passages) if k in keep}
    items = getattr(task, "solutions", None)
    if items and all(hasattr(item, "evidence_ids") for item in items):
        update["solutions"] = tuple(
            item.model_copy(
                update={"evidence_ids": tuple(i for i in item.evidence_ids if i in kept_ids)}
            )
            for item in items
        )
    return task.model_copy(update=update)


def _counted(model_tokens: int, limits: ModelLimits) -> int:
    """Model tokens as the project's counter's tokens (rounded down: the budget errs short)."""
    return math.floor(model_tokens / limits.tokenizer_ratio)


def _model_tokens(counted: int, limits: ModelLimits) -> int:
    return math.ceil(counted * limits.tokenizer_ratio) + TEMPLATE_TOKENS


def fit_task(
    task: Task, limits: ModelLimits, *, counter: TokenCounter, model: str = "the model"
) -> Fitted:
    """Pack ``task``'s passages into what ``limits`` leave beside its fixed part and reply.

    Passages are ranked by retrieval score (ties keep their order) and taken while they fit;
    those kept stay in the task's own order. Pure: the same task and limits give the same
    result, so a replay packs as its run did.

    Raises:
        InputError: the prompt without any passage and the reply's budget already exceed the
            window (named ``context_window``, with ``model`` and the figures).
    """
    max_tokens = limits.completion_budget(max_tokens_for(task))
    room = _counted(limits.context_window - max_tokens - TEMPLATE_TOKENS, limits)
    passages = _passages(task)

    def fitted(chosen: Task, used: int, kept: int) -> Fitted:
        return Fitted(
            task=chosen,
            kept=kept,
            dropped=len(passages) - kept,
            prompt_tokens=used,
            max_tokens=max_tokens,
            reply_room=min(
                limits.output_limit or limits.context_window,
                limits.context_window - _model_tokens(used, limits),
            ),
        )

    whole = prompt_tokens(task, counter)
    if whole <= room:
        return fitted(task, whole, len(passages))
    bare = _keep(task, passages, set())
    fixed = prompt_tokens(bare, counter)
    if fixed > room:
        raise InputError(
            "context_window",
            f"{model}'s window of {limits.context_window:,} tokens cannot hold a "
            f"{task.task} request: its prompt without evidence is about "
            f"{_model_tokens(fixed, limits):,} model tokens and its reply may take "
            f"{max_tokens:,}",
            allowed="a larger context window (or a smaller output limit) for this model",
        )
    ranked = sorted(range(len(passages)), key=lambda k: -passages[k][2].score)

    def cost(rank: int) -> int:
        return prompt_tokens(_keep(task, passages, {ranked[rank]}), counter) - fixed

    taken = [ranked[rank] for rank, _ in fill(len(ranked), room, cost=cost, spent=fixed).taken]
    # The passages' costs were counted one at a time; the joined prompt is counted whole, and
    # the lowest-ranked kept passage goes until it fits.
    while True:
        chosen = _keep(task, passages, set(taken))
        used = prompt_tokens(chosen, counter)
        if used <= room or not taken:
            return fitted(chosen, used, len(taken))
        taken.pop()
