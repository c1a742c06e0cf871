"""Structured outputs: ask for JSON matching a pydantic model, repair malformed replies."""

from __future__ import annotations

import functools
import json
import re
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from hivemind_lab.errors import HivemindError
from hivemind_lab.llm.base import (
    ChatMessage,
    ChatModel,
    ChatRequest,
    ChatResponse,
    ResponseFormat,
    describe_model,
)
from hivemind_lab.models import Frozen

T = TypeVar("T", bound=BaseModel)
MAX_TOKEN_GROWTH = 4
"""A reply cut at its token limit is asked again with the limit doubled, to at most this many
times the request's own limit (a small model can fill any schema's lists to their bounds)."""
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


class StructuredOutputError(HivemindError):
    """The model never produced valid output within the repair budget."""


class Structured(Frozen, Generic[T]):
    """A validated reply plus every raw response it took (for audit and accounting)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    value: T
    responses: tuple[ChatResponse, ...]


@functools.cache
def response_format_for(output_type: type[BaseModel]) -> ResponseFormat:
    """The JSON-schema response format for a pydantic model (cached: schemas never change)."""
    return ResponseFormat(name=output_type.__name__, json_schema=output_type.model_json_schema())


def extract_json(text: str) -> str:
    """Best-effort extraction of a JSON object from a reply (code fences, leading prose)."""
    fenced = _FENCE.search(text)
    if fenced:
        text = fenced.group(1)
    start, end = text.find("{"), text.rfind("}")
    return text[start : end + 1] if start != -1 and end > start else text


async def complete_structured(
    model: ChatModel,
    request: ChatRequest,
    output_type: type[T],
    *,
    max_repairs: int = 2,
    context: dict[str, Any] | None = None,
    max_tokens_cap: int | None = None,
) -> Structured[T]:
    """Call ``model`` and validate the reply as ``output_type``.

    On malformed JSON or a schema violation the model is shown its reply and the validation
    error and asked again, at most ``max_repairs`` times; a reply cut at ``max_tokens`` is not
    shown back (half a JSON object teaches nothing) but asked again with twice the limit, up to
    `MAX_TOKEN_GROWTH` times the first. ``context`` goes to the output
    type's validators (rules of the task a JSON schema cannot state, such as an exclusive
    decision's one option); a reply that breaks them is repaired the same way.
    ``max_tokens_cap`` bounds that growth (what the model's window leaves beside the prompt).
    """
    if request.response_format is None:
        request = request.model_copy(update={"response_format": response_format_for(output_type)})
    responses: list[ChatResponse] = []
    current = request
    for attempt in range(max_repairs + 1):
        response = await model.complete(current)
        responses.append(response)
        try:
            value = output_type.model_validate_json(extract_json(response.content), context=context)
            return Structured[output_type](value=value, responses=tuple(responses))  # type: ignore[valid-type]
        except (ValidationError, json.JSONDecodeError) as exc:
            error = str(exc)[:1500]
            if attempt == max_repairs:
                cut = (
                    f" (the reply was cut at max_tokens={current.max_tokens})"
                    if response.finish_reason == "length"
                    else ""
                )
                raise StructuredOutputError(
                    f"{describe_model(model)} gave no valid {output_type.__name__} after "
                    f"{max_repairs + 1} attempts{cut}; last error: {error}"
                ) from exc
            if response.finish_reason == "length" and current.max_tokens is not None:
                limit = min(2 * current.max_tokens, MAX_TOKEN_GROWTH * (request.max_tokens or 0))
                if max_tokens_cap is not None:
                    limit = min(limit, max_tokens_cap)
                if limit > current.max_tokens:
                    current = current.model_copy(update={"max_tokens": limit})
                    continue
            current = current.model_copy(
                update={
                    "messages": (
                        *current.messages,
                        ChatMessage(role="assistant", content=response.content),
                        ChatMessage(
                            role="user",
                            content="Your reply was not valid JSON for the required schema. "
                            f"Error: {error}\nReply again with only the corrected JSON object.",
                        ),
                    )
                }
            )
    raise AssertionError("unreachable")
