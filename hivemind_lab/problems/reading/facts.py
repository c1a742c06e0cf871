"""Facts: the client-cleared and market data (and the question's own statements), cut into
short, citable statements — never a heading, a question or a restated option.

Pure text functions. Agents reason over the facts and the options, so every conclusion is about
this client.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from hivemind_lab.problems.model import MAX_FACT_CHARS, Fact, FactSource
from hivemind_lab.problems.reading.options import MARK
from hivemind_lab.problems.reading.text import FIGURE, read_blocks, sentences
from hivemind_lab.text import overlap, stems

__all__ = ["MAX_FACTS", "extract_facts", "fact_snippet", "has_quantity"]

MAX_FACTS = 24


def _short(text: str, limit: int = MAX_FACT_CHARS) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    if len(text) <= limit:
        return text
    cut = text[: limit - 1].rsplit(" ", 1)[0]
    return cut.rstrip(",;:") + "…"


def _words(text: str) -> list[str]:
    return re.findall(r"[^\W_]+", text.casefold())


def _restates(statement: str, options: Sequence[str]) -> bool:
    """Whether a statement only restates an option ("Option 2 — hire 30 nurses."): the option
    is already in every prompt, so it is not a fact about the client."""
    said = _words(MARK.sub("", statement.strip(), count=1))
    for option in options:
        named = _words(option)
        if named and said and (said[: len(named)] == named or named[: len(said)] == said):
            return True
    return False


def _lists(sentence: str, options: Sequence[str]) -> bool:
    """Whether a sentence states two or more of the options whole (every content word of each,
    stemmed: "is split between matching the discounter on price, repositioning …"): it states
    the decision, which every prompt already carries."""
    said = frozenset(stems(sentence))
    return sum(overlap(frozenset(stems(o)), said) == 1 for o in options) >= 2


_DATE = re.compile(
    r"\b\d{1,2}(?:st|nd|rd|th)?\s+(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?|"
    r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d{1,2}(?:st|nd|rd|th)?\b|"
    r"\b(?:1[5-9]|20)\d{2}(?:[/–-]\d{2,4})?\b",
    re.IGNORECASE,
)


def has_quantity(text: str) -> bool:
    """Whether a text gives an amount (a price, a share, a count), not only a date or a year:
    "Prepared on 14 November 2026" is not a figure to plan on."""
    return bool(FIGURE.search(_DATE.sub(" ", text)))


def _statements(text: str, *, question: bool = False, options: Sequence[str] = ()) -> list[str]:
    """A text's statements: prose sentences, list items and table rows, never its headings or
    labels; of a question, never its questions, the line that leads into a list, a restated
    option or the sentence that lists the options either. Prose under a heading that names an
    option speaks of that option."""
    found = []
    for block in read_blocks(text):
        if block.kind in ("heading", "label"):
            continue
        prose = block.kind == "text"
        named = next((o for o in options if question and _restates(block.lead, [o])), None)
        for part in sentences(block.text) if prose else [block.text]:
            whole = " ".join(block.cells) if block.kind == "row" else part
            restated = block.kind != "detail" and _restates(whole, options)  # a detail adds to it
            restated |= _lists(part, options)
            if question and (part.rstrip().endswith(("?", ":")) or restated):
                continue
            if named and prose:
                part = f"{named}: {part}"
            least = 4 if question and prose else 3
            if len(part.split()) < least - (1 if FIGURE.search(part) else 0):
                continue  # "Headcount: 12,400" is a fact; "Confidential." is not
            found.append(part)
    return found


def extract_facts(
    question: str,
    client_data: Sequence[tuple[str, str]] = (),
    market_data: Sequence[tuple[str, str]] = (),
    *,
    options: Sequence[str] = (),
) -> tuple[Fact, ...]:
    """Short, citable statements: every line, item or table row of client and market data,
    then the question's own statements (figures first), never its questions, headings or a
    restated option."""
    facts: list[Fact] = []
    sources: tuple[tuple[FactSource, Sequence[tuple[str, str]]], ...] = (
        ("client", client_data),
        ("market", market_data),
    )
    for source, documents in sources:
        for doc_id, text in documents:
            for n, sentence in enumerate(_statements(text), start=1):
                facts.append(Fact(id=f"{doc_id}.{n}", text=_short(sentence), source=source))
    statements = _statements(question, question=True, options=options)
    ranked = sorted(
        range(len(statements)),
        key=lambda i: (not has_quantity(statements[i]), not FIGURE.search(statements[i]), i),
    )
    for i in ranked:
        facts.append(Fact(id=f"question.{i + 1}", text=_short(statements[i]), source="question"))
    return tuple(facts[:MAX_FACTS])


def fact_snippet(fact: Fact, limit: int = 240) -> str:
    """A fact short enough to quote in a recommendation: the whole statement when it fits,
    else the clause that carries its figure."""
    whole = fact.text.rstrip(".…")
    if len(whole) <= limit:
        return whole
    clauses = [c.strip() for c in re.split(r";|,\s+(?=[a-z])", fact.text) if c.strip()]
    with_figure = [c for c in clauses if FIGURE.search(c) and len(c.split()) >= 3]
    chosen = (with_figure or clauses or [fact.text])[0]
    return _short(chosen.rstrip("."), limit)
