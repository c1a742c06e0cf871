"""The rule reader: a client's text → a suggested `Decision`, read from its written structure
only, refusing when the text writes no options.

`text` reads the text's blocks (markdown-it-py for Markdown, list marks and label lines for
plain text); `options` reads the options the text writes as its options (marked items, a table,
a named list, headings, an enumeration, ordinal sentences); `facts` cuts the text into citable
statements. Exclusivity and binding constraints are not read from prose: the problem file, the
flags or the model intake state them. Measured on labelled problems by
``benchmarks/decision_reading.py``.
"""

from __future__ import annotations

from collections.abc import Sequence

from hivemind_lab.problems.model import Decision, Option, Refusal
from hivemind_lab.problems.reading.facts import extract_facts
from hivemind_lab.problems.reading.options import read_options

__all__ = ["READER_VERSION", "REFUSAL_HINT", "read_decision"]

READER_VERSION = "structure-1"
"""Bumped whenever the rule reader reads differently; recorded in every `Decision`."""

REFUSAL_HINT = (
    "give the options explicitly: --option 'first course' --option 'second course' (repeat "
    "for each), `options = [...]` in a .toml problem, or `options:` in a Markdown problem's "
    "front matter; write them as a list under a line that names them ('Our options:'); "
    "let a language model read the text (--backend openai or local); or let the agents "
    "propose their own with --options-from agents"
)
"""How to go on after a refusal (the CLI prints it)."""


def read_decision(
    text: str,
    *,
    client_data: Sequence[tuple[str, str]] = (),
    market_data: Sequence[tuple[str, str]] = (),
) -> Decision:
    """Read a decision from a problem's text: the options it writes as its options (or a
    refusal saying what was found and why none was read) and its facts."""
    reading = read_options(text)
    labels = [label for label, _ in reading.options]
    refusal = None
    if not labels:
        reason = (
            "the text writes no options as a marked list, table, headings, enumeration or "
            "ordinal sentences"
            if not reading.rejected
            else "what the text lists is not written as its options"
        )
        refusal = Refusal(reason=reason, found=reading.rejected)
    return Decision(
        options=tuple(
            Option(label=label, source="reader", quote=quote) for label, quote in reading.options
        ),
        options_source="reader" if labels else "agents",
        facts=extract_facts(text, client_data, market_data, options=labels),
        reader_version=READER_VERSION,
        refusal=refusal,
    )
