"""The rule reader: a client's text → a suggested `Decision`, refusing when it is not sure.

`text` reads Markdown structure; `options` (with `option_text`, `yes_no`, `subjects`) finds
candidate lists of options, `plausible` keeps a list only when every item reads as a course of
action; `exclusivity` reads whether one option is to be taken (negation included);
`constraints` reads prohibitions and limits and links them to options; `facts` cuts the text
into citable statements. Measured on labelled problems by ``benchmarks/decision_reading.py``.
"""

from __future__ import annotations

from collections.abc import Sequence

from hivemind_lab.problems.model import Constraint, Decision, Option, Refusal
from hivemind_lab.problems.reading.constraints import link_by_names, read_constraints, rules_out
from hivemind_lab.problems.reading.exclusivity import read_exclusivity
from hivemind_lab.problems.reading.facts import extract_facts
from hivemind_lab.problems.reading.options import question_sentences, read_options

__all__ = ["READER_VERSION", "REFUSAL_HINT", "read_decision"]

READER_VERSION = "rule-6"
"""Bumped whenever the rule reader reads differently; recorded in every `Decision`."""

REFUSAL_HINT = (
    "give the options explicitly: --option 'first course' --option 'second course' (repeat "
    "for each), `options = [...]` in a .toml problem, or `options:` in a Markdown problem's "
    "front matter; or let the agents propose their own with --options-from agents"
)
"""How to go on after a refusal (the CLI prints it)."""


def read_decision(
    text: str,
    *,
    client_data: Sequence[tuple[str, str]] = (),
    market_data: Sequence[tuple[str, str]] = (),
) -> Decision:
    """Read a decision from a problem's text: options (or a refusal), exclusivity, binding
    constraints and facts, each marked as read by the rule reader."""
    reading = read_options(text)
    labels = [label for label, _ in reading.options]
    exclusivity = read_exclusivity(text, labels)
    said = question_sentences(text)
    statements = [  # each option's own sentence, for what its label (a head clause) left out
        next((s for s in said if quote and quote in s), label) for label, quote in reading.options
    ]
    constraints = tuple(
        Constraint(
            id=f"constraint.{n}",
            text=c.text,
            quote=c.quote,
            kind=c.kind,
            forbids=c.forbids
            or (link_by_names(c.text, statements) if rules_out(c.text) and not c.limits else ()),
            limits=c.limits,
            source="reader",
        )
        for n, c in enumerate(read_constraints(text, labels), start=1)
    )
    refusal = None
    if not labels:
        reason = (
            "the lists and phrasings that might name options do not read as courses of action"
            if reading.rejected
            else "the text names no options the reader can find"
        )
        refusal = Refusal(reason=reason, found=reading.rejected)
    return Decision(
        options=tuple(
            Option(label=label, source="reader", quote=quote) for label, quote in reading.options
        ),
        options_source="reader" if labels else "agents",
        facts=extract_facts(text, client_data, market_data, options=labels),
        constraints=constraints,
        exclusive=exclusivity.exclusive,
        exclusive_quote=exclusivity.quote,
        exclusive_source=None if exclusivity.exclusive is None else "reader",
        reader_version=READER_VERSION,
        refusal=refusal,
    )
