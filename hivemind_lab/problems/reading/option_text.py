"""How an option is written: its bounds, its cleaning and the subject of a decision question.

Shared by the readers of options (`hivemind_lab.problems.reading.options`) and of yes/no decisions
(`hivemind_lab.problems.reading.yes_no`), so both write an option the same way. Pure text functions.
"""

from __future__ import annotations

import re

from hivemind_lab.problems.model import MAX_OPTION_CHARS, MAX_OPTIONS

__all__ = ["LEAD", "MAX_OPTIONS", "MAX_OPTION_CHARS", "NAME", "SUBJECT", "clean", "lower_first"]

_CAPITAL = "A-ZÀ-ÖØ-ÞĀ-ſΑ-ΩА-Я\u4e00-\u9fff\u3040-\u30ff\uac00-\ud7af"
"""Letters that start a name: capitals of Latin, Greek and Cyrillic scripts, and the caseless
CJK scripts (whose names have no capitals)."""
NAME = rf"[{_CAPITAL}][\w&.'’-]*"
SUBJECT = (
    r"(?:it|we|they|i|he|she|you|"
    r"(?i:the|an?|our|my|your|their|its|his|her|this|that)\s+(?:[\w-]+\s+){0,2}?[\w-]+"
    rf"(?:\s+(?:of|for)\s+(?:the\s+)?{NAME}(?:\s+{NAME}){{0,2}})?|"
    rf"(?:{NAME})(?:\s+{NAME}){{0,3}})"
)
"""The subject of a decision question: a pronoun, a determiner-led phrase or a name."""
LEAD = re.compile(
    r"^(?:(?:either|or|and|to|whether\s+to|whether|by|it\s+should|should)\s+)+", re.IGNORECASE
)


def clean(item: str) -> str:
    """An option as written: spaces collapsed, punctuation and leading connectives dropped,
    first letter capitalised."""
    item = re.sub(r"\s+", " ", item).strip(" \t,;:.?!\"'“”")
    item = LEAD.sub("", item).strip(" ,;:")
    return item[:1].upper() + item[1:] if item else item


def lower_first(text: str) -> str:
    """Lower-case the first word to use it mid-sentence (names and acronyms keep their case)."""
    word = text.split(" ", 1)[0]
    return text[:1].lower() + text[1:] if word[1:].islower() or word == "A" else text
