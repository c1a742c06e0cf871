"""The client's decision, read once at intake and recorded: options, facts, binding constraints
and exclusivity, each with where it came from.

Pure data. A `Decision` is built once (`hivemind_lab.problems.decision.decide`) from explicit
sources — a problem file's ``options``/``constraints``/``exclusive``, Markdown front matter,
``--option``/``--constraint`` flags — or read from the text by a reader (the rule reader in
`hivemind_lab.problems.reading`, later a model intake). Runs record it and never derive it again,
so replay, resume and reports see what was deliberated even after a reader changes.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from hivemind_lab.llm.base import ChatMessage, Usage
from hivemind_lab.models import FrozenRecord

MAX_OPTIONS = 8
"""Option lists are bounded so every output schema can bound its references to them."""
MAX_OPTION_CHARS = 160
MAX_FACT_CHARS = 320
MAX_CONSTRAINTS = 12

DecisionSource = Literal[
    "toml", "front_matter", "flag", "request", "notebook", "intake", "reader", "agents"
]
"""Where an option came from: a problem's TOML file, a Markdown problem's front matter, a
command-line flag, a keyword of the request (code: notebooks, sweeps), the user's edit in a
notebook's decision editor (notebook 01, the explorer), the model intake, the rule reader, or
the agents (who propose their own courses of action when the user asks for it)."""
ConstraintSource = Literal["toml", "front_matter", "flag", "notebook", "intake", "reader"]
ExclusivitySource = Literal[
    "toml", "front_matter", "flag", "request", "notebook", "intake", "reader"
]
"""Where exclusivity was stated (``request``: a keyword of the request, from code;
``notebook``: the user's choice in a notebook's decision editor)."""
ConstraintKind = Literal[
    "legal", "regulatory", "financial", "operational", "social", "deadline", "other"
]
FactSource = Literal["client", "market", "question", "intake"]
"""Where a fact comes from: the client's data, market data, the question's own sentences, or
the model intake's reading of words it quoted from the question (its wording, which may carry
figures it worked out; the quoted words are in the text)."""
OptionsSource = Literal["given", "extracted", "agents"]
"""given: listed by the problem; extracted: read from the question; agents: none found, so
the agents propose their own courses of action. (Here, not in `reading.options`, so the
inputs can name it without loading the rule reader.)"""
ExclusiveSource = Literal["problem", "cli", "request", "question", "default"]
"""Where a request's exclusivity came from: the problem file, the command line, a keyword of
the request itself (notebooks, sweeps), read from the question, or the default (combinable)."""


class Fact(FrozenRecord):
    """One client or market statement an agent can name and cite."""

    id: str
    """``<data id>.<n>`` or ``question.<n>``: stable citation key."""
    text: str = Field(max_length=MAX_FACT_CHARS)
    source: FactSource


class Option(FrozenRecord):
    """One course of action the client weighs."""

    label: str = Field(min_length=1, max_length=MAX_OPTION_CHARS)
    """The option as agents see it."""
    source: DecisionSource
    quote: str | None = None
    """The exact span of the problem's text it was read from (None when given explicitly)."""


class Constraint(FrozenRecord):
    """A binding fact: a prohibition that rules options out, an order that bars options as a
    first move but allows them later, or a limit that bounds them."""

    id: str
    """``constraint.<n>``: stable citation key."""
    text: str = Field(min_length=1)
    quote: str | None = None
    """The span of the problem's text it was read from (None when given explicitly)."""
    kind: ConstraintKind = "other"
    forbids: tuple[int, ...] = ()
    """Indexes of the options it rules out (illegal, impossible, in breach)."""
    limits: tuple[int, ...] = ()
    """Indexes of the options it only bounds (a cap, a deadline, an approval)."""
    not_first: tuple[int, ...] = ()
    """Indexes of the options it bars as a first move but allows later (a dividend unlawful
    now, lawful after the leaseback): pursuing one now is a breach, sequencing it is not."""
    after: int | None = None
    """Index of the option that must come before the ``not_first`` ones (None: not stated)."""
    source: ConstraintSource


class Refusal(FrozenRecord):
    """Why a reader gave no options: what it found and why each candidate was not trusted."""

    reason: str
    found: tuple[str, ...] = ()
    """Candidate options the reader found, each with why it was rejected."""


class IntakeRecord(FrozenRecord):
    """How a language model read the decision (`hivemind_lab.problems.intake`): enough to find
    the call in the response cache and to see what the quote checks dropped."""

    backend: str
    model: str
    request_key: str
    """The call's response-cache key (backend, model and the whole request)."""
    replies: tuple[str, ...] = ()
    """Each reply's content (more than one when a reply was repaired)."""
    cached: bool = False
    """Every reply was served from the response cache."""
    dropped: tuple[str, ...] = ()
    """What the checks dropped (not quoted from the text), each with why."""
    error: str | None = None
    """Why the reply could not be read (then nothing of it was kept)."""
    prompt: tuple[ChatMessage, ...] = ()
    """The request's messages as sent (what ``request_key`` covers), for the audit trail."""
    usage: tuple[Usage, ...] = ()
    """Each reply's token usage, in the order of ``replies``."""


class Decision(FrozenRecord):
    """The client's decision as a run deliberates it."""

    options: tuple[Option, ...] = Field(default=(), max_length=MAX_OPTIONS)
    options_source: DecisionSource = "agents"
    """Where the options came from; ``agents`` when there are none (agents propose their own)."""
    facts: tuple[Fact, ...] = ()
    constraints: tuple[Constraint, ...] = Field(default=(), max_length=MAX_CONSTRAINTS)
    exclusive: bool | None = None
    """True: the client takes exactly one option; False: they may be combined or sequenced;
    None: not stated (combinable by default)."""
    exclusive_quote: str | None = None
    """The span exclusivity was read from (None when stated explicitly or not stated)."""
    exclusive_source: ExclusivitySource | None = None
    reader_version: str
    """The version of the reader that read the text (see ``READER_VERSION``)."""
    refusal: Refusal | None = None
    """Set when the reader was not confident enough to name options."""
    derived: bool = False
    """Built when a run recorded before decisions existed was read: its options and
    exclusivity are the recorded ones; it has no facts (the question is not read again)."""
    intake: IntakeRecord | None = None
    """The model intake's call, when a language model read the text (None otherwise)."""

    @model_validator(mode="after")
    def _consistent(self) -> Decision:
        labels = [o.label.strip().casefold() for o in self.options]
        if len(set(labels)) != len(labels):
            raise ValueError("options must be distinct")
        for constraint in self.constraints:
            named = (*constraint.forbids, *constraint.limits, *constraint.not_first)
            if constraint.after is not None:
                named = (*named, constraint.after)
            if any(not 0 <= i < len(self.options) for i in named):
                raise ValueError(f"constraint {constraint.id!r} names an option that is not listed")
        if self.options and self.refusal is not None:
            raise ValueError("a refused decision has no options")
        return self

    @property
    def labels(self) -> tuple[str, ...]:
        """The options' labels, in order."""
        return tuple(o.label for o in self.options)

    def forbidden(self) -> tuple[int, ...]:
        """Indexes of options some binding constraint rules out."""
        return tuple(sorted({i for c in self.constraints for i in c.forbids}))

    def not_first(self) -> tuple[int, ...]:
        """Indexes of options some binding constraint bars as a first move (allowed later)."""
        return tuple(sorted({i for c in self.constraints for i in c.not_first}))
