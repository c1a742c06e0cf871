"""A problem's text as written blocks: headings, list items, table rows, label lines and prose.

Markdown is parsed by markdown-it-py (CommonMark with tables). A plain-text problem's own
structure is read from its lines, since CommonMark lets only a list that starts at 1 interrupt
a paragraph: a line opened by a list mark ("3.", "(b)", "4.1", "-") is an item, and a short
line without a stop ("Options", "Facts:") labels what follows. Pure text functions.
"""

from __future__ import annotations

import functools
import re
from typing import Literal, NamedTuple

from markdown_it import MarkdownIt

from hivemind_lab.text import split_sentences

__all__ = ["FIGURE", "Block", "read_blocks", "sentences", "subject"]

_MARK = re.compile(
    r"^\s*(?P<mark>[-*•▪]|\d{1,2}[.)](?:\d{1,2}\.?)?|\(?(?:[a-h]|i{1,3}|iv|v)\))\s+(?=\S)",
    re.I,
)
"""A list mark opening a line: a bullet, a number ("3." "3)" "4.1"), a letter ("(b)" "b)")."""
FIGURE = re.compile(
    r"\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|"
    r"forty|fifty|hundred|thousand|million|billion|half|third|quarter|twice|double)\b",
    re.IGNORECASE,
)
"""A figure in words or digits: facts that carry one are quoted first."""
_HEADER = re.compile(
    r"^\s*(?P<key>from|to|cc|date|sent|subject|re|fwd?)\s*:\s*(?P<value>.*)$", re.I
)
"""An email header line: the header is no fact, its subject is the problem's title."""
LABEL_WORDS = 8
"""A line of at most this many words without a stop ("Options", "What I could do:") labels
what follows."""

BlockKind = Literal["heading", "label", "item", "detail", "row", "text"]


class Block(NamedTuple):
    """One written unit of a problem's text."""

    kind: BlockKind
    """A detail is a nested item: it qualifies the item above it and is never an option."""
    text: str
    lead: str
    """What introduces it: for an item, the line right above its list; for any other block,
    the nearest heading or label above ("" when none)."""
    run: int
    """Items of one list, and rows of one table, share a run number."""
    cells: tuple[str, ...] = ()
    header: tuple[str, ...] = ()
    """A table row's cells and its table's header."""
    level: int = 0
    """A heading's level (1 for "#")."""


@functools.cache
def _parser() -> MarkdownIt:
    return MarkdownIt("commonmark").enable("table")


def _list_of(mark: str) -> str:
    """Which list a mark opens: bullets, numbers, sub-numbers ("4.1") or letters."""
    if not mark[0].isalnum() and mark[0] != "(":
        return "bullet"
    if mark[0].isdigit():
        return "sub-number" if mark[-1].isdigit() or mark.count(".") > 1 else "number"
    return "letter"


def _is_label(line: str) -> bool:
    text = line.strip()
    return 0 < len(text.split()) <= LABEL_WORDS and not text.endswith((".", "!", "?", ";", ","))


class _Blocks:
    """Blocks as they are read, with the label and list run they fall under."""

    def __init__(self) -> None:
        self.blocks: list[Block] = []
        self.label = ""
        self.run = 0

    def add(self, kind: BlockKind, text: str, lead: str | None = None, **more: object) -> None:
        lead = self.label if lead is None else lead
        block = Block(kind, text.strip(), lead, self.run, **more)  # type: ignore[arg-type]
        self.blocks.append(block)

    def before(self) -> str:
        """The text right above what comes next: a list's lead when nothing in its own
        paragraph leads it (of prose, its last sentence)."""
        if not self.blocks:
            return ""
        last = self.blocks[-1]
        return (sentences(last.text) or [""])[-1] if last.kind == "text" else last.text

    def lines(self, lines: list[str], lead: str) -> None:
        """A paragraph's lines: marked lines are items (one list a kind of mark, led by the
        line above it), a line that follows an item continues it, a short line without a stop
        labels what follows, the rest is prose (a line break ends a sentence unless the next
        line starts in lower case, a hard-wrapped one)."""
        prose: list[str] = []
        kind = ""
        for k, line in enumerate(lines):
            mark = _MARK.match(line)
            if mark is not None:
                self.flush(prose)
                if _list_of(mark["mark"]) != kind:
                    kind, self.run = _list_of(mark["mark"]), self.run + 1
                    lead = _MARK.sub("", lines[k - 1]).strip() if k else lead
                self.add("item", line[mark.end() :], lead)
            elif kind and not (line.strip().endswith(":") and _is_label(line)):
                last = self.blocks.pop()  # a wrapped item goes on
                self.blocks.append(last._replace(text=f"{last.text} {line.strip()}"))
            elif prose and line[:1].islower():
                prose.append(f"{prose.pop()} {line.strip()}")
            elif _is_label(line) and not "".join(lines[k + 1 : k + 2])[:1].islower():
                self.flush(prose)
                kind, self.label = "", line.strip().rstrip(":").strip()
                self.add("label", self.label)
            else:
                prose.append(line.strip())
        self.flush(prose)

    def flush(self, prose: list[str]) -> None:
        if prose:
            ended = [p if p.endswith((".", "!", "?", ":", ";")) else f"{p}." for p in prose]
            self.add("text", " ".join(ended))
            prose.clear()


def read_blocks(text: str) -> list[Block]:
    """Read Markdown (or plain text) into blocks, so headings, lists and tables are never taken
    for prose and a heading is never glued to the sentence below it. An email's header goes,
    its subject heading the text."""
    found = _Blocks()
    lines = text.replace("\ufeff", "").splitlines()
    top = next((k for k, line in enumerate(lines) if line.strip() and not _HEADER.match(line)), 0)
    said = subject(text)
    if said and top:
        found.label = said
        found.add("heading", said, level=1)
    opened: list[str] = []
    cells: list[str] = []
    header: tuple[str, ...] = ()
    pending = False  # a list item whose first line is still to come
    level, lead = 0, ""
    for token in _parser().parse("\n".join(lines[top:])):
        if token.nesting == 1:
            opened.append(token.type)
            if (
                token.type in ("bullet_list_open", "ordered_list_open")
                and opened.count("list_item_open") == 0
            ):
                found.run += 1
                lead = found.before()
            pending = pending or token.type == "list_item_open"
            level = int(token.tag[1]) if token.type == "heading_open" else level
            cells = [] if token.type == "tr_open" else cells
            continue
        if token.nesting == -1:
            opened.pop()
            if token.type == "tr_close" and "thead_open" in opened:
                header, found.run = tuple(cells), found.run + 1
            elif token.type == "tr_close" and cells:
                detail = "; ".join(
                    f"{h}: {c}" if h else c
                    for h, c in zip(header[1:], cells[1:], strict=False)
                    if c
                )
                found.add(
                    "row",
                    f"{cells[0]} — {detail}" if detail else cells[0],
                    cells=tuple(cells),
                    header=header,
                )
            continue
        if token.type != "inline":
            continue
        content = token.content.replace("**", "").replace("__", "").replace("`", "")
        first, *rest = content.splitlines() or [""]
        depth = opened.count("list_item_open")
        if "heading_open" in opened:
            found.run += 1
            found.label = content.strip()
            found.add("heading", found.label, level=level)
        elif "th_open" in opened or "td_open" in opened:
            cells.append(content.strip())
        elif pending and depth > 1 and (parent := _last_item(found.blocks)) is not None:
            found.add("detail", f"{parent.text}: {first}", parent.lead)
            pending = False
            found.lines(rest, first)
        elif pending:
            found.add("item", first, lead)
            pending = False
            found.lines(rest, first)
        else:
            found.lines(content.splitlines(), found.label)
    return found.blocks


def _last_item(blocks: list[Block]) -> Block | None:
    return next((b for b in reversed(blocks) if b.kind == "item"), None)


def subject(text: str) -> str | None:
    """An email's subject line, when its header has one: the text's title."""
    for line in text.replace("\ufeff", "").strip().splitlines():
        header = _HEADER.match(line)
        if header is None:
            return None
        if header["key"].casefold() in ("subject", "re") and header["value"].strip():
            return str(header["value"]).strip()
    return None


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
