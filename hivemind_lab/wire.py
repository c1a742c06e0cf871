"""The words every schema sent to a model shares: options by letter, bounded strings.

Options are ints inside the engine (0-based, what result.json and the audit keep) and letters on
the wire (A for the first option): an `OptionIndex` reads either, its JSON schema is the letter
enum, and it is written as a letter only in a dump made with `WIRE` as its context (the prompt
renderer's), so a client never reads an engine index and old runs stay readable.

On the ground floor (pydantic only) because two stages send schemas to a model: the intake
(`hivemind_lab.problems.intake_task`) and the agents (`hivemind_lab.agents.schemas`); the
agents read the problem, never the other way round, and both read this.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator, Field, PlainSerializer, SerializationInfo, WithJsonSchema

MAX_TEXT = 600
"""One recommendation, critique claim or concern (a capable model had to rewrite at 400)."""
MAX_ID = 120

OPTION_LETTERS = "ABCDEFGH"
"""An option's name on the wire, by its place in the decision's options (at most eight)."""
WIRE: dict[str, Any] = {"wire": True}
"""The serialisation context of a dump made for a model: options are written as letters."""


def option_letter(index: int) -> str:
    """The wire name of the option at 0-based ``index`` (A for the first)."""
    return OPTION_LETTERS[index]


def _option_in(value: object) -> object:
    """An option reference as the engine keeps it: a letter (the wire's) or an int (results
    and audits of earlier versions) gives its 0-based index."""
    if (
        isinstance(value, str)
        and len(value.strip()) == 1
        and value.strip().upper() in (OPTION_LETTERS)
    ):
        return OPTION_LETTERS.index(value.strip().upper())
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < len(OPTION_LETTERS):
        return value
    raise ValueError(
        f"an option letter ({OPTION_LETTERS[0]} to {OPTION_LETTERS[-1]}), got {value!r}"
    )


def on_wire(info: SerializationInfo) -> bool:
    """Whether a dump is made for a model (its context is `WIRE`)."""
    return isinstance(info.context, dict) and bool(info.context.get("wire"))


def _option_out(value: int, info: SerializationInfo) -> int | str:
    return option_letter(value) if on_wire(info) else value


OptionIndex = Annotated[
    int,
    BeforeValidator(_option_in),
    PlainSerializer(_option_out),
    WithJsonSchema({"type": "string", "enum": list(OPTION_LETTERS)}),
]
"""An option of the decision: a 0-based int in the engine, a letter on the wire (reads both)."""

Text = Annotated[str, Field(min_length=1, max_length=MAX_TEXT)]
Ref = Annotated[str, Field(min_length=1, max_length=MAX_ID)]
