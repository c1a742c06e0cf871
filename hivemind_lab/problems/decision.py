"""Building the client's `Decision` once, from its sources in order.

Explicit sources win over reading: ``--option``/``--constraint`` flags (given last, so they
override the file), then the problem's own ``options``/``constraints``/``exclusive`` (TOML or
Markdown front matter), then a reader: the model intake, or the rule reader
(`hivemind_lab.problems.reading`), which reads options from the text's written structure only
and never constraints or exclusivity. When nothing explicit names the options and the reader
refuses, the decision carries the refusal — unless the user asked the agents to propose their
own (``options_from="agents"``). An explicit constraint forbids or limits the options it names
(``forbids``/``limits``); one that names none binds as text.

`Fact`, `fact_snippet` and `has_quantity` stay importable from here for the agents' policy.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from hivemind_lab.errors import HivemindError, InputError
from hivemind_lab.problems.loading import ConstraintSpec, Problem
from hivemind_lab.problems.model import (
    MAX_OPTION_CHARS,
    MAX_OPTIONS,
    Constraint,
    ConstraintSource,
    Decision,
    DecisionSource,
    ExclusivitySource,
    Fact,
    Option,
)
from hivemind_lab.problems.reading import REFUSAL_HINT, read_decision
from hivemind_lab.problems.reading.facts import extract_facts, fact_snippet, has_quantity

__all__ = ["Fact", "OptionsFrom", "decide", "fact_snippet", "has_quantity"]

OptionsFrom = Literal["reader", "agents"]
"""Where options come from when none are given: the reader (which may refuse) or the agents."""


def _constraints(
    specs: Sequence[ConstraintSpec], labels: Sequence[str], source: ConstraintSource
) -> tuple[Constraint, ...]:
    """Explicit constraints, each forbidding, limiting or barring as a first move the options
    it names (``forbids``, ``limits``, ``not_first`` and ``after``); one that names none binds
    as text."""
    built = []
    folded = [label.casefold() for label in labels]

    def indexes(names: Sequence[str]) -> list[int]:
        return [folded.index(f.casefold()) for f in names if f.casefold() in folded]

    for n, spec in enumerate(specs, start=1):
        named, limited, first = indexes(spec.forbids), indexes(spec.limits), indexes(spec.not_first)
        after = next(iter(indexes([spec.after] if spec.after else [])), None)
        first = [i for i in first if i not in named and i != after]
        built.append(
            Constraint(
                id=f"constraint.{n}",
                text=spec.text,
                kind=spec.kind or "other",
                forbids=tuple(named),
                limits=tuple(i for i in limited if i not in first),
                not_first=tuple(first),
                after=after if first else None,
                source=source,
            )
        )
    return tuple(built)


def facts_for(problem: Problem, labels: Sequence[str]) -> tuple[Fact, ...]:
    """The problem's facts read for these options: the question's sentences that only state
    the options are left out."""
    return extract_facts(
        problem.question,
        [(d.id, d.text) for d in problem.client_data],
        [(d.id, d.text) for d in problem.market_data],
        options=labels,
    )


def decide(
    problem: Problem,
    *,
    options: Sequence[str] = (),
    constraints: Sequence[str | ConstraintSpec] = (),
    exclusive: bool | None = None,
    exclusive_source: ExclusivitySource = "flag",
    options_from: OptionsFrom = "reader",
    reading: Decision | None = None,
) -> Decision:
    """The client's decision for a problem, read once.

    Args:
        problem: the loaded problem (its ``declared_in`` says whether its own options came from
            TOML or front matter).
        options: options given on the command line (``--option``); they replace the file's.
        constraints: constraints given on the command line (``--constraint``).
        exclusive: exclusivity given on the command line or by code.
        exclusive_source: where ``exclusive`` came from when given (``flag`` or ``request``).
        options_from: ``agents`` lets the agents propose their own options instead of a refusal.
        reading: the text as the model intake read it (`hivemind_lab.problems.intake`), used
            instead of the rule reader for whatever is not given explicitly.
    """
    read = reading or read_decision(
        problem.question,
        client_data=[(d.id, d.text) for d in problem.client_data],
        market_data=[(d.id, d.text) for d in problem.market_data],
    )
    given: tuple[str, ...]
    source: DecisionSource
    if options:
        given, source = tuple(o.strip() for o in options), "flag"
    elif problem.options:
        given, source = problem.options, problem.declared_in
    else:
        given, source = (), "reader"
    yes_no = len(given) == 1  # one option: weigh it against declining it, one of the two
    if yes_no:
        given = (given[0], declining(given[0]))
    if given:
        chosen = tuple(Option(label=label, source=source) for label in given)
        refusal = None
    elif options_from == "agents":
        chosen, refusal, source = (), None, "agents"
    else:
        chosen, refusal, source = read.options, read.refusal, read.options_source
    labels = [o.label for o in chosen]
    specs = [c if isinstance(c, ConstraintSpec) else ConstraintSpec(text=c) for c in constraints]
    if specs:
        bound = _constraints(specs, labels, "flag")
    elif problem.constraints:
        bound = _constraints(problem.constraints, labels, problem.declared_in)
    elif given:  # the reading's links name its own options, not these
        bound = tuple(c.model_copy(update={"forbids": (), "limits": ()}) for c in read.constraints)
    else:
        bound = read.constraints
    excl: bool | None
    quote: str | None
    excl_source: ExclusivitySource | None
    if exclusive is not None:
        excl, quote, excl_source = exclusive, None, exclusive_source
    elif problem.exclusive is not None:
        excl, quote, excl_source = problem.exclusive, None, problem.declared_in
    elif yes_no:
        excl, quote = True, None
        excl_source = "flag" if source == "flag" else problem.declared_in
    else:
        excl, quote, excl_source = read.exclusive, read.exclusive_quote, read.exclusive_source
    facts = read.facts if not given or reading is not None else facts_for(problem, labels)
    return Decision(
        options=chosen,
        options_source=source if chosen or source == "agents" else "agents",
        facts=facts,
        constraints=bound,
        exclusive=excl,
        exclusive_quote=quote,
        exclusive_source=excl_source,
        reader_version=read.reader_version,
        refusal=refusal,
        intake=read.intake,
    )


def declining(move: str) -> str:
    """The other side of a yes/no decision: "Acquire Beta" → "Decline to acquire Beta"."""
    word = move.split(" ", 1)[0]
    lowered = move[:1].lower() + move[1:] if word[1:].islower() or word == "A" else move
    return f"Decline to {lowered}"[:MAX_OPTION_CHARS]


class DecisionRefused(HivemindError):
    """The reader did not trust any options it found, and none were given: nothing to
    deliberate until the user names them (or lets the agents propose their own)."""

    def __init__(self, decision: Decision) -> None:
        self.decision = decision
        refusal = decision.refusal
        lines = [f"options: the reader refused ({refusal.reason if refusal else 'no options'})"]
        lines += [f"  found {found}" for found in (refusal.found if refusal else ())[:6]]
        lines.append(f"  {REFUSAL_HINT}")
        super().__init__("\n".join(lines))


OptionsGiven = Literal["flag", "row"]
"""How the user typed a list of options, so an error names the item as they wrote it:
repeated ``--option`` flags, or the rows of the notebook's decision editor (``option 3``)."""


def checked_options(options: Sequence[str], *, given: OptionsGiven = "flag") -> tuple[str, ...]:
    """Options as the user typed them (stripped), refused when too many, blank, too long or
    repeated; the error names the flag or row at fault and what is allowed.

    Args:
        options: the options in the order given.
        given: ``flag`` names every item ``--option`` and quotes it; ``row`` names the n-th
            item ``option n`` and the whole list ``options``.
    """
    cleaned = tuple(o.strip() for o in options)

    def named(n: int) -> str:
        return "--option" if given == "flag" else f"option {n}"

    if len(cleaned) > MAX_OPTIONS:
        raise InputError(
            "--option" if given == "flag" else "options",
            f"{len(cleaned)} options given",
            allowed=f"up to {MAX_OPTIONS} distinct options",
        )
    first: dict[str, int] = {}
    for n, label in enumerate(cleaned, start=1):
        if not label:
            raise InputError(named(n), "an option is blank", allowed="a non-empty text")
        if len(label) > MAX_OPTION_CHARS:
            raise InputError(
                named(n),
                f"{label[:40]!r}… is {len(label)} characters",
                allowed=f"1-{MAX_OPTION_CHARS} characters",
            )
        m = first.setdefault(label.casefold(), n)
        if m != n:
            again = f"--option {cleaned[m - 1]!r}" if given == "flag" else f"option {m}"
            raise InputError(named(n), f"{label!r} repeats {again}", allowed="distinct options")
    return cleaned


def decide_or_refuse(
    problem: Problem,
    *,
    options: Sequence[str] = (),
    constraints: Sequence[str] = (),
    exclusive: bool | None = None,
    options_from: str = "reader",
    reading: Decision | None = None,
) -> Decision:
    """The decision for the command line: flags checked and named in errors, and a refusal
    raised as `DecisionRefused` unless ``options_from`` is ``agents``; ``reading``: the model
    intake's reading of the text (see `decide`)."""
    if options_from not in ("reader", "agents"):
        raise InputError("--options-from", f"unknown {options_from!r}", allowed="reader or agents")
    if any(not c.strip() for c in constraints):
        raise InputError("--constraint", "a constraint is blank", allowed="a non-empty text")
    decision = decide(
        problem,
        options=checked_options(options),
        constraints=[c.strip() for c in constraints],
        exclusive=exclusive,
        exclusive_source="flag",
        options_from="agents" if options_from == "agents" else "reader",
        reading=reading,
    )
    if decision.refusal is not None:
        raise DecisionRefused(decision)
    return decision
