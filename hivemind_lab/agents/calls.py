"""The audit record of one agent task sent to the model, as the agent caller writes it.

It lives beside the caller, not in `hivemind_lab.runs.events`, so that the agents write typed
records without importing the run layer that reads them (that layer imports this one into its
union of events).
"""

from __future__ import annotations

from typing import Any, Literal

from hivemind_lab.models import Event

LlmKind = Literal[
    "llm.propose",
    "llm.critique",
    "llm.critique_batch",
    "llm.revise",
    "llm.score",
    "llm.score_batch",
    "llm.synthesize",
]


class ModelCall(Event):
    """One agent task sent to the model (written by the agent caller)."""

    kind: LlmKind
    backend: str
    model: str
    prompt: list[dict[str, Any]]
    """The request's messages as sent."""
    responses: list[dict[str, Any]]
    """Each reply's ``content``, ``usage`` and whether the cache served it (``cached``)."""
