"""The client's options, where the text writes them as its options, and nothing else.

Only written structure counts: items or sentences led by an option's mark ("Option A: …",
"Option B is to …", "## Option C"), a table whose first column is headed Option (or
Alternative …), a list whose lead names what it lists as options ("I have three choices:"),
sub-headings under a heading that does ("## Options"), a sentence's own enumeration after a
colon that names it ("three offers: a day-shift role …, a travel agency …, or a degree"), and
ordinal sentences ("The first is to …", "One is to … Another is to …"). A count the text gives
("three offers") must be the number of items. Options in free prose ("we could A, or B"),
stakeholders' positions and yes/no questions are not read: the model intake reads them, or the
user gives them (``--option``, ``options`` in TOML or front matter). Pure text functions.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

from hivemind_lab.problems.model import MAX_OPTION_CHARS, MAX_OPTIONS
from hivemind_lab.problems.model import OptionsSource as OptionsSource
from hivemind_lab.problems.reading.text import Block, read_blocks, sentences

__all__ = [
    "OptionReading",
    "OptionsSource",
    "extract_options",
    "read_options",
    "span",
]

_NOUN = r"option|alternative|choice|possibility|path|route|offer|proposal|scenario|plan"
_NOUNS = (
    r"options|alternatives|choices|possibilities|paths|routes|offers|proposals|scenarios|"
    r"courses\s+of\s+action|ways\s+forward"
)
NAMES_OPTIONS = re.compile(rf"\b(?:{_NOUNS})\b", re.IGNORECASE)
"""Words by which a text names what it lists as its options (a list under "Option A" is that
option's details)."""
_COUNT = re.compile(
    rf"\b(?P<n>two|three|four|five|six|seven|eight|[2-8])\s+(?:[\w-]+\s+)?(?:{_NOUNS})\b", re.I
)
_NUMBERS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8}
MARK = re.compile(
    rf"^\W*(?:{_NOUN})\s+(?P<mark>[A-H1-9]|one|two|three|four|five)\b"
    r"(?:\s*[:.)–—-]\s*|\s+(?:is|would\s+be|will\s+be)\s+to\s+|\W*$)",
    re.I,
)
"""An option's mark leading its text: "Option A: …", "Alternative 2 is to …", "Option C"."""
_ORDINAL = re.compile(
    r"^(?:(?:so|and|then|finally|lastly)\s*,?\s+)?(?:(?:the|a|an)\s+)?"
    r"(?P<nth>first|second|third|fourth|fifth|last|final|other|another|one|further)"
    rf"(?:\s+(?:{_NOUN}|idea|approach|course(?:\s+of\s+action)?))?"
    r"\s+(?:is|would\s+be|will\s+be|could\s+be)\s+to\s+(?P<item>.+)$",
    re.I,
)
"""One option a sentence, led by its ordinal: "The first is to …", "A third path would be to
…"."""
_ENUMERATION = re.compile(
    rf"\b(?:{_NOUNS})\b[^:.?!]{{0,60}}?(?::|\s[—–]\s)\s*(?P<list>\S.*)$", re.I
)
_INLINE_MARK = re.compile(r"(?:^|\s)\(?([a-h]|[1-9]|i{1,3}|iv)\)\s+", re.I)
_SEQUENCES = ("abcdefgh", "12345678", ("i", "ii", "iii", "iv"))
"""Inline marks count in their order only: (a) (b) (c), 1) 2) 3) or (i) (ii) (iii)."""
_BOUNDARY = re.compile(r",\s|;|\s[—–-]\s|:\s|\s\(")
"""Where an item's head clause ends: what follows is its cost, reason or detail."""
HEAD_WORDS = 12
"""An item longer than this is cut to its head clause (at least three words)."""


class OptionReading(NamedTuple):
    """The options a question weighs, each with the span it was read from, or why none."""

    options: tuple[tuple[str, str | None], ...]
    """(label, quote) pairs; the quote is None when the label is not the text's own words."""
    rejected: tuple[str, ...] = ()
    """What was found and not read as the options, each with why."""


def label(item: str) -> str:
    """An item as an option: its first sentence, cut to its head clause when long, without
    leading connectives or trailing punctuation, first letter capitalised."""
    text = re.sub(r"\s+", " ", item).strip(" \t,;:.!?\"'“”")
    text = re.sub(r"^(?:(?:either|or|and|to)\s+)+", "", (sentences(text) or [text])[0], flags=re.I)
    for boundary in _BOUNDARY.finditer(text if len(text.split()) > HEAD_WORDS else ""):
        if len(text[: boundary.start()].split()) >= 3:
            text = text[: boundary.start()]
            break
    text = text.strip(" ,;:.!?\"'“”") + (")" if text.count("(") > text.count(")") else "")
    if len(text) > MAX_OPTION_CHARS:
        text = text[: MAX_OPTION_CHARS - 1].rsplit(" ", 1)[0] + "…"
    return text[:1].upper() + text[1:]


def _count(lead: str) -> int | None:
    found = _COUNT.search(lead)
    return None if found is None else _NUMBERS.get(found["n"].casefold()) or int(found["n"])


def _units(blocks: Sequence[Block]) -> list[tuple[int, str]]:
    """Each block's text, prose sentence by sentence, with the block's index."""
    return [
        (k, s)
        for k, b in enumerate(blocks)
        for s in (sentences(b.text) if b.kind == "text" else [b.text])
    ]


def _marked(blocks: Sequence[Block]) -> list[str]:
    """Options led by their marks, each mark once, in the text's order; a mark alone (a
    heading "Option A") is followed by its option's first line."""
    items: dict[str, str] = {}
    for k, text in _units(blocks):
        found = MARK.match(text) if blocks[k].kind != "detail" else None
        if found is None or found["mark"].casefold() in items:
            continue
        rest = text[found.end() :].strip()
        below = rest or next((b.text for b in blocks[k + 1 :] if b.kind in ("item", "text")), "")
        items[found["mark"].casefold()] = below
    return list(items.values())


def _runs(blocks: Sequence[Block], kind: str) -> list[list[Block]]:
    runs: dict[int, list[Block]] = {}
    for block in blocks:
        if block.kind == kind:
            runs.setdefault(block.run, []).append(block)
    return list(runs.values())


def _lists(blocks: Sequence[Block], rejected: list[str]) -> list[list[str]]:
    """Lists whose lead names them as options (and gives their number, when it gives one);
    what other lists were found is noted in ``rejected``."""
    found = []
    for run in _runs(blocks, "item"):
        lead, count = run[0].lead, _count(run[0].lead)
        if not NAMES_OPTIONS.search(lead):
            rejected.append(f"a list of {len(run)} under {lead[:60]!r}: not named as options")
        elif count is not None and count != len(run):
            rejected.append(f"a list of {len(run)} under {lead[:60]!r}, which announces {count}")
        else:
            found.append([b.text for b in run])
    return found


def _table(blocks: Sequence[Block]) -> list[str]:
    """A table whose first column is headed Option (or Alternative …): one option a row, its
    first cell with the next cell's description in brackets when it is prose."""
    for run in _runs(blocks, "row"):
        if run[0].header and re.match(rf"\W*(?:{_NOUN})", run[0].header[0], re.I):
            return [
                f"{r.cells[0]} ({r.cells[1][:1].lower()}{r.cells[1][1:]})"
                if len(r.cells) > 1 and len(r.cells[1].split()) >= 3
                else r.cells[0]
                for r in run
            ]
    return []


def _headings(blocks: Sequence[Block]) -> list[str]:
    """Sub-headings, one level down, under a heading that is the name of options ("## Choices",
    "## Our three options"; not "# Options for growth", whose sections are its parts)."""
    for k, block in enumerate(blocks):
        if block.kind == "heading" and re.search(rf"\b(?:{_NOUNS})\W*$", block.text, re.I):
            items = []
            for below in blocks[k + 1 :]:
                if below.kind == "heading" and below.level <= block.level:
                    break
                if below.kind == "heading" and below.level == block.level + 1:
                    items.append(below.text)
            if items:
                return items
    return []


def _enumeration(blocks: Sequence[Block], rejected: list[str]) -> list[str]:
    """A sentence's own list: marked in order ("assess: (a) …, (b) … or (c) …") after a colon
    or a word that names options, or after a colon or dash that follows such a word ("four
    paths: A; B; C; or D"), split at its semicolons, else its commas and last "or"; a count it
    gives must be the number of items."""
    for _, text in _units(blocks):
        first = _INLINE_MARK.search(text)
        marks = [m.casefold() for m in _INLINE_MARK.findall(text)]
        lead = text[: first.start()] if first else ""
        ordered = len(marks) >= 2 and any(list(s[: len(marks)]) == marks for s in _SEQUENCES)
        found = _ENUMERATION.search(text)
        if ordered and (lead.rstrip().endswith(":") or NAMES_OPTIONS.search(lead)):
            items = _INLINE_MARK.split(text)[2::2]
        elif found is not None and not marks:
            listed = found["list"]
            lead = text[: found.start("list")]
            items = (
                listed.split(";")
                if ";" in listed
                else re.split(r",\s+(?:(?:or|and)\s+)?|\s+or\s+", listed)
            )
            if (
                ";" not in listed
                and " or " not in listed
                and len(items) >= 2
                and " and " in items[-1]
            ):
                items = [*items[:-1], *items[-1].rsplit(" and ", 1)]
        else:
            continue
        items = [
            re.sub(r"^\s*(?:and|or)\s+|[,;\s]+(?:and|or)?\s*$", "", i.rstrip(" .?!"))
            for i in items
            if i.strip(" ,;")
        ]
        count = _count(lead)
        if count is not None and count != len(items):
            rejected.append(f"{text[:60]!r}: {len(items)} items where it announces {count}")
        elif len(items) >= 2:
            return items
    return []


def _ordinals(blocks: Sequence[Block]) -> list[str]:
    """Options stated one a sentence with their ordinals, in the text's order: the longest run
    that a first ordinal ("first", "one") starts."""
    runs: list[list[str]] = []
    for _, text in _units(blocks):
        found = _ORDINAL.match(text.strip())
        if found is not None:
            if found["nth"].casefold() in ("first", "one") or not runs:
                runs.append([])
            runs[-1].append(found["item"])
    return max(runs, key=len, default=[])


def read_options(question: str) -> OptionReading:
    """The options the text writes as its options, strongest form first (marks, a table, a
    named list, headings, an enumeration, ordinals); none, with what was found and why it was
    not read, when it writes none. Two to eight distinct options, or none."""
    blocks = read_blocks(question)
    rejected: list[str] = []
    readings = [("marked", _marked(blocks)), ("table", _table(blocks))]
    readings += [("list", items) for items in _lists(blocks, rejected)]
    readings += [("headings", _headings(blocks)), ("enumeration", _enumeration(blocks, rejected))]
    readings.append(("ordinals", _ordinals(blocks)))
    for method, items in readings:
        labels = [label(i) for i in items]
        if not items or (len(items) == 1 and method == "marked"):
            continue
        if not 2 <= len(labels) <= MAX_OPTIONS or not all(labels):
            rejected.append(f"{method}: {len(labels)} options (two to {MAX_OPTIONS} are read)")
        elif len({x.casefold() for x in labels}) < len(labels):
            rejected.append(f"{method}: the same option twice")
        else:
            return OptionReading(tuple((x, span(question, x)) for x in labels))
    return OptionReading((), tuple(rejected))


def span(text: str, phrase: str) -> str | None:
    """The exact span of ``text`` that says ``phrase`` (case of its first letter and spacing
    aside), or None when the text does not say it in these words."""
    words = phrase.rstrip("…").split()
    if not words or phrase.endswith("…"):
        return None
    match = re.search(r"\s+".join(re.escape(w) for w in words), text, re.IGNORECASE)
    return match.group(0) if match else None


def extract_options(question: str) -> tuple[str, ...]:
    """The options a question writes as its options, in its order; () when it writes none."""
    return tuple(label for label, _ in read_options(question).options)
