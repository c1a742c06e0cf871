"""What the offline model's agents share when they put a decision into words: how clear a
stance must be, when two options are sequenced, and how a text is fitted to the schema's bounds
or quotes a client fact. Its own module, so the proposal paths (options, own courses, open
questions) and the critic all build on it without importing one another."""

from __future__ import annotations

from hivemind_lab.problems.decision import Fact, fact_snippet

MAX_TEXT = 400
"""The stand-in's own bound on a sentence it writes: its phrasing was tuned to it, and stays
when the wire's bound (`hivemind_lab.agents.schemas.MAX_TEXT`) grows for capable models."""

CLEAR = 0.08
"""An option score beyond ±CLEAR is a clear stance; inside it, no stance."""
SEQUENCE_MARGIN = 0.15
"""Two options closer than this are sequenced, the less committing one first."""


def shorten(label: str, limit: int = 70) -> str:
    if len(label) <= limit:
        return label
    return label[: limit - 1].rsplit(" ", 1)[0] + "…"


def fit_text(text: str) -> str:
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1].rsplit(" ", 1)[0] + "…"


def quoting(lead: str, fact: Fact) -> str:
    """A recommendation that quotes a client fact in quotation marks, so the client's own words
    stand apart from the agent's ("judged against “I have an offer …”"); the quote is shortened
    to fit, never cut open."""
    if len(lead) > MAX_TEXT - 45:
        lead = lead[: MAX_TEXT - 47].rsplit(" ", 1)[0] + "… "
    room = MAX_TEXT - len(lead) - 3
    return f"{lead}“{fact_snippet(fact, room)}”."
