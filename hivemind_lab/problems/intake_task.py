"""What the model intake sends a language model: its task, the reply schema and the prompt.

The intake is the problem stage's (`hivemind_lab.problems.intake` checks the reply against the
client's text); the agents read the decision it yields and never the other way round, so these
live here, sharing only the option letters and bounded strings of `hivemind_lab.wire` with the
agents' schemas. Recorded replies are replayed by the request's hash: the rendered text, the
class names, docstrings and field order are the wire and change only with `INTAKE_VERSION`.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from hivemind_lab.llm.base import ChatMessage, ChatRequest
from hivemind_lab.llm.structured import response_format_for
from hivemind_lab.models import Frozen
from hivemind_lab.problems.model import ConstraintKind
from hivemind_lab.wire import OptionIndex, Text

MAX_QUOTE = 240
"""A quoted span of the client's text (an option's, a constraint's, a fact's)."""
Quote = Annotated[str, Field(min_length=1, max_length=MAX_QUOTE)]
"""Words copied exactly from the client's text."""


MAX_INTAKE_CONSTRAINTS = 8
MAX_INTAKE_FACTS = 12
"""How many constraints and facts one intake reply may carry (the text's own facts, read
without a model, are kept besides)."""


class IntakeTask(Frozen):
    """Read the client's decision out of their text (language-model backends; the offline
    backend reads it with the rule reader)."""

    task: Literal["intake"] = "intake"
    text: str
    """The client's problem, as they wrote it."""


class IntakeOption(Frozen):
    label: Annotated[str, Field(min_length=1, max_length=160)]
    """The course of action, short and self-contained."""
    quote: Quote
    """The exact words of the text it comes from."""


class IntakeConstraint(Frozen):
    text: Text
    """The prohibition or limit, as one sentence."""
    quote: Quote
    kind: ConstraintKind = "other"
    forbids: Annotated[list[OptionIndex], Field(max_length=8)] = []
    """Indexes of the options it rules out."""
    limits: Annotated[list[OptionIndex], Field(max_length=8)] = []
    """Indexes of the options it only bounds."""
    not_first: Annotated[list[OptionIndex], Field(max_length=8)] = []
    """Options it bars now but allows later (not first, only after another option)."""
    after: OptionIndex | None = None
    """The option that must come first, when the text names one."""


class IntakeFact(Frozen):
    text: Annotated[str, Field(min_length=1, max_length=320)]
    quote: Quote


class IntakeOutput(Frozen):
    """The client's decision as a model read it, every part with the quote it comes from
    (anything whose quote is not in the text is dropped)."""

    options: Annotated[list[IntakeOption], Field(max_length=8)] = []
    exclusive: Literal["one_of", "combinable", "not_stated"] = "not_stated"
    """one_of: the client takes exactly one option; combinable: they may combine them."""
    exclusive_quote: Annotated[str, Field(max_length=MAX_QUOTE)] | None = None
    constraints: Annotated[list[IntakeConstraint], Field(max_length=MAX_INTAKE_CONSTRAINTS)] = []
    facts: Annotated[list[IntakeFact], Field(max_length=MAX_INTAKE_FACTS)] = []


INTAKE_SYSTEM = (
    "You read a client's decision out of the text they wrote, for a strategic deliberation. "
    "Copy, never invent: every quote is the client's exact words. Answer with a single JSON "
    "object following the schema."
)
INTAKE_INSTRUCTIONS = (
    "Read the client's text in the task block. In `options`, list the courses of action the "
    "client weighs (at most eight), each as a short `label` and the `quote`: the exact words "
    "of the text that name it, copied character for character; list none when the text asks "
    "an open question. In `exclusive`: one_of when the text says only one option can be "
    "taken, combinable when it says they may be combined, not_stated otherwise; put the words "
    "that say so in `exclusive_quote`. In `constraints` (at most eight), each prohibition, "
    "required order or limit the text states (a ban, a law, a covenant, a cap, a deadline, an "
    "approval needed), with its quote, its kind and the options it concerns, named as the "
    "schema names them, in the order of your `options` list: in `forbids` the options it "
    "rules out at any time; in `not_first` the options it bars as a first move but allows "
    "later (lawful only once something else is done), with the option that must come first "
    "in `after` when the text names one; in `limits` the options it only bounds. In `facts`, "
    "up to twelve figures and statements that bear on the decision, each with its quote. "
    "Anything whose quote is not in the text is discarded."
)


def render_intake(task: IntakeTask, *, seed: int | None = None) -> ChatRequest:
    """Build the intake request: the client's text in a task block, for a language model."""
    user = f"{INTAKE_INSTRUCTIONS}\n\n<task>\n{task.model_dump_json(indent=1)}\n</task>"
    return ChatRequest(
        messages=(
            ChatMessage(role="system", content=INTAKE_SYSTEM),
            ChatMessage(role="user", content=user),
        ),
        temperature=0.0,
        seed=seed,
        response_format=response_format_for(IntakeOutput),
        max_tokens=INTAKE_TOKENS,
    )


INTAKE_TOKENS = 2500
"""The intake's completion budget: room for a full reading in ordinary text (eight options,
eight constraints and twelve facts, each with its quote: about 2,000 tokens at the quote and
text lengths seen on 2026-12-03); a model that pads its strings is cut off and refused rather
than waited for. It was 900, too small for six constraints and six facts with quotes."""
