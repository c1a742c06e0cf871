"""A problem's text as Markdown blocks: headings, label lines, bullets, table rows, paragraphs.

Clients hand in Markdown as often as prose. Reading its structure first keeps a heading from
being glued to the sentence below it, a list of figures from passing as a list of options, and
a table from being one long sentence. Pure text functions.
"""

from __future__ import annotations

import re
from typing import Literal, NamedTuple

from hivemind_lab.text import split_sentences

BULLET = re.compile(r"^\s*(?:[-*•▪]|\d{1,2}[.)]|\(?[a-hA-H1-9]\))\s+(?P<item>\S.*)$")
"""A bullet (-, *, •), numbered (1. 1)) or lettered ((a) a)) line."""


FIGURE = re.compile(
    r"\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|"
    r"forty|fifty|hundred|thousand|million|billion|half|third|quarter|twice|double)\b",
    re.IGNORECASE,
)
"""A figure in words or digits: facts that carry one are quoted first."""


class Block(NamedTuple):
    """One unit of a problem's text once Markdown is read: a heading, a label line ("Facts:"),
    a bullet, a table row or a paragraph (hard-wrapped lines joined)."""

    kind: Literal["heading", "label", "bullet", "detail", "row", "text"]
    """A detail is a nested bullet: it qualifies the bullet above it ("- Expand" / "  - needs
    €4m") and is read as "Expand: needs €4m", never as an item of the list."""
    text: str
    label: str
    """The nearest heading or label line above it ("" when none)."""
    run: int
    """Bullets and rows of one list or table share a run number."""
    cells: tuple[str, ...] = ()
    header: tuple[str, ...] = ()
    """A table row's cells and its table's header."""
    level: int = 0
    """A heading's level (1 for "#")."""


_HEADING = re.compile(r"^\s{0,3}(?P<marks>#{1,6})\s+(?P<text>.*?)\s*#*\s*$")
_ROW = re.compile(r"^\s*\|(?P<cells>.*)\|\s*$")
_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)*\|?\s*$")
_EMPHASIS = re.compile(r"\*\*|__|`|(?<![\w*])\*(?=[^\s*])|(?<=[^\s*])\*(?![\w*])")


def read_blocks(text: str) -> list[Block]:
    """Read Markdown (or plain text) into blocks, so headings, lists and tables are not mistaken
    for prose and a heading is never glued to the sentence below it."""
    blocks: list[Block] = []
    label, run = "", 0
    paragraph: list[str] = []
    header: list[str] = []
    indent = 0
    width = max((len(raw.strip()) for raw in text.splitlines()), default=0)

    def flush() -> None:
        if paragraph:
            blocks.append(Block("text", " ".join(paragraph), label, 0))
            paragraph.clear()

    lines = text.replace("\ufeff", "").splitlines()
    for at, raw in enumerate(lines):
        field = _header(lines, at)
        if field is not None:  # an email's header: its subject heads the text, the rest goes
            flush()
            if field.group("key").casefold() in _SUBJECT_KEYS and field.group("value").strip():
                label = field.group("value").strip()
                blocks.append(Block("heading", label, label, 0, level=1))
                run += 1
            continue
        heading, row, bullet = _HEADING.match(raw), _ROW.match(raw), BULLET.match(raw)
        line = _EMPHASIS.sub("", raw).strip()
        in_table = bool(header) and bool(row or _RULE.match(raw))
        header = header if in_table else []
        if not line or heading or row or bullet or _RULE.match(raw):
            flush()
        if not line or _RULE.match(raw):
            continue
        if heading:
            label = _EMPHASIS.sub("", heading.group("text")).strip()
            blocks.append(Block("heading", label, label, 0, level=len(heading.group("marks"))))
            run += 1
        elif row:
            cells = [_EMPHASIS.sub("", c).strip() for c in row.group("cells").split("|")]
            if not in_table:  # a table's first row is its header
                run, header = run + 1, cells
                continue
            fields = zip(header[1:], cells[1:], strict=False)
            detail = "; ".join(f"{h}: {c}" if h else c for h, c in fields if c)
            whole = f"{cells[0]} — {detail}" if detail else cells[0]
            blocks.append(Block("row", whole, label, run, tuple(cells), tuple(header)))
        elif bullet:
            item = _EMPHASIS.sub("", bullet.group("item")).strip()
            depth = len(raw) - len(raw.lstrip())
            parent = next((b for b in reversed(blocks) if b.kind == "bullet"), None)
            if parent is not None and blocks[-1].kind in ("bullet", "detail") and depth > indent:
                blocks.append(Block("detail", f"{parent.text}: {item}", label, parent.run))
                continue
            run += not blocks or blocks[-1].kind not in ("bullet", "detail")
            indent = depth
            blocks.append(Block("bullet", item, label, run))
        elif paragraph and _continues(paragraph[-1], line, width):
            # a hard-wrapped line continues its sentence ("…have been" / "put to me:"), before
            # it can pass for a label line
            paragraph.append(line)
        elif len(line.split()) <= 8 and (
            line.endswith(":") or re.fullmatch(r"(?:\*\*[^*]+\*\*|__[^_]+__):?", raw.strip())
        ):
            flush()  # "Facts:", "**Context**": a label for what follows
            label = line.rstrip(":").strip()
            blocks.append(Block("label", label, label, 0))
        else:
            flush()
            paragraph.append(line)
    flush()
    return blocks


_HEADER = re.compile(
    r"^\s*(?P<key>from|to|cc|bcc|date|sent|subject|subj|re|fwd?)\s*:\s*(?P<value>.*)$",
    re.IGNORECASE,
)
_SUBJECT_KEYS = frozenset({"subject", "subj", "re"})
_FIELD = re.compile(r"^\s*[A-Z][\w.'’&()/ -]{0,30}:\s")
_FORWARDED = re.compile(
    r"^\s*-{2,}\s*(?P<key>forwarded|original)\s+message\s*-{2,}\s*$(?P<value>)", re.IGNORECASE
)
"""The line that opens a forwarded or quoted email's header: no fact either."""
_HEADER_LINES = 12
"""Header lines stand among a text's first lines."""


def _header(lines: list[str], at: int) -> re.Match[str] | None:
    """An email header line ("From: …", "To: …", "Subject: …"): among the text's first lines,
    at its top, after a blank line or after another "Field: …" line, never inside a paragraph."""
    found = _HEADER.match(lines[at]) if at < _HEADER_LINES else None
    if found is None:
        return _FORWARDED.match(lines[at]) if at < _HEADER_LINES else None
    above = lines[at - 1] if at else ""
    return found if not above.strip() or _FIELD.match(above) or _FORWARDED.match(above) else None


def subject(text: str) -> str | None:
    """An email's subject line, when its header has one: the text's title."""
    lines = text.replace("\ufeff", "").splitlines()
    for at in range(min(len(lines), _HEADER_LINES)):
        found = _header(lines, at)
        if found and found.group("key").casefold() in _SUBJECT_KEYS and found["value"].strip():
            return str(found["value"]).strip()
    return None


_SPEAKER = re.compile(
    r"^[A-Z][\w.'’&()/ -]{0,40}:(?:\s|$)|^\[|^\d{1,2}:\d\d\b|^\d{1,2}/\d{1,2}/|"
    r"^\d{1,2}\.\d{1,2}\s+[A-Z]"
)
"""A line that opens a turn, a field, a timestamp or a numbered paragraph ("Mo: …", "Date: …",
"[03/05] …", "19:06 …", "2.1 Members …"): it never continues the line above."""


_OPEN_END = re.compile(
    r"(?:,|\b(?:and|or|but|nor|the|a|an|of|to|in|on|at|by|for|with|from|into|between|than|"
    r"as|that|which|who|whose|our|their|its|his|her|my|your|this|these|those|is|are|was|were|"
    r"be|been|has|have|had|will|would|could|should|can|may|must|about|over|under|per|via))$",
    re.IGNORECASE,
)
"""How a hard-wrapped line ends mid-phrase: a comma or a word that needs what follows."""


def _continues(previous: str, line: str, width: int) -> bool:
    """Whether ``line`` carries on a hard-wrapped sentence of ``previous``: the previous line
    ends with no stop, and the line starts in lower case ("…, down from" / "74,000 in 2019."),
    or, after a line too long to be a heading (over 8 words), with a figure; or with a capital
    after such a line that fills most of the text's widest line (``width``) and ends
    mid-phrase, on a comma or a word that needs what follows ("…the lease was signed by the" /
    "Harbour Board in 2019"). A line that ends on a content word before a capital is left
    alone: lines of one item each ("Sell the farm …" / "Keep the farm …") look the same. A line
    that opens a turn or a field never continues."""
    if re.search(r"[.!?:;]$", previous):
        return False
    if line[:1].islower():
        return True
    if len(previous.split()) <= 8 or _SPEAKER.match(line):
        return False
    return bool(re.match(r"[$€£¥]?\d", line)) or (
        line[:1].isupper() and len(previous) >= 0.6 * width and bool(_OPEN_END.search(previous))
    )


_ABBREVIATION = re.compile(
    r"\b(?:(?i:mr|mrs|ms|dr|prof|st|co|corp|inc|ltd|plc|llc|bros|no|nos|jr|sr|vs|etc|approx|"
    r"est|dept|fig|mio|mn|bn|e\.g|i\.e|u\.s|u\.k|e\.u|a\.m|p\.m)|[A-Z])\.(?=\s)"
)
_HELD_DOT = "\u2024"  # one-dot leader: stands in for an abbreviation's full stop


def sentences(text: str) -> list[str]:
    """Sentences of prose; an abbreviation's full stop ("Acme Corp.", "Mr. Smith", "J. Doe")
    ends no sentence, so a fact is never cut at one."""
    held = _ABBREVIATION.sub(lambda m: m.group(0)[:-1] + _HELD_DOT, text)
    return [s.replace(_HELD_DOT, ".") for s in split_sentences(held)]
