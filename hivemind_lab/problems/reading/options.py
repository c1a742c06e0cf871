"""The client's options: the courses of action a problem's text enumerates.

Pure text functions. A problem file may list its options; a plain-text or Markdown problem
states them in its own words — "whether to A, B or C", "should X A or B?", "weighing A against
B", "Option 1 — …", "(a) … (b) …", "The first is to … The other is to …", a section under each
option's mark, a bulleted list or a table — or sets stakeholders' positions
against each other ("the CEO favours A while the CFO prefers B"), or asks a yes/no question
(`hivemind_lab.problems.reading.yes_no`), which weighs the move against declining it. Reading them here lets
every agent argue about this client's actual choice.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

from hivemind_lab.problems.model import OptionsSource as OptionsSource
from hivemind_lab.problems.reading.option_text import LEAD, MAX_OPTION_CHARS, MAX_OPTIONS, SUBJECT
from hivemind_lab.problems.reading.option_text import clean as _clean
from hivemind_lab.problems.reading.option_text import lower_first as _lower
from hivemind_lab.problems.reading.plausible import is_attribute, judge, trim
from hivemind_lab.problems.reading.subjects import tie_subjects, untie, word_classes
from hivemind_lab.problems.reading.text import FIGURE, Block, read_blocks, sentences
from hivemind_lab.problems.reading.yes_no import declining, is_move, yes_no

__all__ = [
    "INLINE_MARK",
    "LABEL_WORD",
    "LEAD",
    "MAX_OPTIONS",
    "MAX_OPTION_CHARS",
    "Candidates",
    "OptionReading",
    "OptionsSource",
    "candidate_sets",
    "declining",
    "extract_options",
    "question_sentences",
    "read_options",
    "span",
]


INLINE_MARK = re.compile(
    r"(?:\(\s*(?:[a-h]|[1-9]|i{1,3}|iv|v)\s*\)|(?<![\w,.])(?:[1-9]|(?-i:[A-H]))\))\s*",
    re.IGNORECASE,
)
LABEL_WORD = (
    r"\b(?:option|alternative|path|offer|choice|scenario|plan|proposal|strategy|route|approach)\s+"
    r"(?:[A-H1-9]|one|two|three|four|five)"
    r"\s*[:.)–—-]"
)
_LABELLED = re.compile(
    LABEL_WORD + r"\s*(?P<item>[^;\n]+?)(?=[.;]?\s*(?:" + LABEL_WORD + r"|$|\n)|"
    r"[.!?]\s+[\"“(]?[A-Z])",
    re.IGNORECASE,
)
_AUX = r"(?:do|does|should|shall|will|would|can|could|must)"
_TRIGGERS: tuple[tuple[int, re.Pattern[str]], ...] = (
    (
        3,
        re.compile(
            # "do we go public, or do we stay private?": one question per option.
            r"\b(?P<aux>" + _AUX + r")\s+(?P<subj>we|i|they|it|you|he|she)\s+(?P<list>[^?]+?,?\s+"
            r"or\s+(?P=aux)\s+(?P=subj)\s+[^?]+)\?",
            re.IGNORECASE,
        ),
    ),
    (
        3,  # "Do we expand into Spain or stay home?" when its verb is a move (see yes_no.is_move)
        re.compile(
            r"^(?i:do)\s+(?i:we|i)\s+(?![^?]*\bor\s+do\s+(?i:we|i)\b)"
            r"(?P<move>(?P<list>[^?]+\bor\b[^?]+))\?$"
        ),
    ),
    (
        3,
        re.compile(
            r"\b(?i:whether)\s+(?:or\s+not\s+)?(?:" + SUBJECT + r"\s+should\s+)?(?P<list>.+)"
        ),
    ),
    (
        3,
        re.compile(
            # the last "should <subject>" of the question: "Should X respond, and if so,
            # should it A, B or C?" lists A, B and C.
            r"^.*\b(?i:should|could|can|shall|must|would)\s+"
            + SUBJECT
            + r"(?::\s*|\s+)(?P<list>[^?]+)\?",
        ),
    ),
    (
        3,  # a typed one-liner may lack its "?": "Should we expand or sell" (no clause after)
        re.compile(r"^(?i:should|shall)\s+" + SUBJECT + r"\s+(?P<list>[^?,;]+)$"),
    ),
    (
        2,
        re.compile(
            r"\b(?:options?|alternatives?|choices?|paths?|routes?|offers?|courses? of action|"
            r"possibilities|proposals)\b[^:.?]{0,60}?(?::|—|–|\s-\s|\binclude\b|\bincluding\b|\bare\b|"
            r"\bis\b)\s*(?P<list>.+)",
            re.IGNORECASE,
        ),
    ),
    (
        2,
        re.compile(
            r"\b(?:weigh(?:s|ing)?\s+(?P<list>.+?\s(?:against|versus|vs\.?)\s.+)|"
            r"compar(?:e|es|ing)\s+(?P<first>.+?)\s(?:with|to|against|versus|vs\.?)\s(?P<second>.+))",
            re.IGNORECASE,
        ),
    ),
    (
        1,
        re.compile(
            r"\b(?:split\s+between|choose\s+between|choosing\s+between|deciding\s+between|"
            r"torn\s+between|between|among|considering|weighing|weighs|choose|decide)(?::\s*|\s+)"
            r"(?P<list>.+)",
            re.IGNORECASE,
        ),
    ),
    (
        2,
        re.compile(
            r"\b(?:better|best|wiser|preferable|smarter|right)\s+to\s+(?P<list>[^?]+\bor\b[^?]+)",
            re.IGNORECASE,
        ),
    ),
    (
        0,
        re.compile(  # "Keep or kill the product line?" (not "Is this A or B?", a diagnosis)
            r"^(?!(?i:is|are|was|were|do|does|did|has|have|had|will|would|can|could|should|"
            r"shall|must|may|might|how|what|which|why|when|where|who)\b)"
            r"(?P<list>(?:\S+\s+){0,10}?or\s+(?:\S+\s+){0,8}?\S+)\?$"
        ),
    ),
    (0, re.compile(r"\b" + SUBJECT + r"\s+(?i:can|could|may|might)\s+(?P<list>[^?]+)\.?$")),
    (
        1,  # "the board asked us to evaluate: 1) status quo 2) a JV 3) an acquisition"
        re.compile(
            r"\b(?:evaluate|assess|consider|compare|choose|pick|select|recommend|weigh|decide)\w*"
            r"[^.?]{0,40}?:\s*(?P<list>\(?(?:[1-9a-h]|i{1,3}|iv|v)\).+)",
            re.IGNORECASE,
        ),
    ),
    (
        1,  # "pros and cons of moving to Dublin versus staying in London?"
        re.compile(r"\b(?:of|on|about)\s+(?P<list>[^?]+?\s(?:versus|vs\.?)\s[^?]+)", re.I),
    ),
    (
        0,  # "What do you recommend: license the IP or spin it out?"
        re.compile(
            r"^(?!(?i:is|are|was|were|(?:what|which|where|who)\s+(?:is|are|was|were))\b)[^:—–?]*"
            r"[:—–]\s*(?P<list>(?:\S+\s+){0,10}?or\s+(?:\S+\s+){0,8}?\S+)\?$"
        ),
    ),
)
_PREPOSITIONS = frozenset(
    ["in", "at", "to", "into", "from", "for", "with", "on", "by", "via", "through"]
)
_QUESTION_WORD = re.compile(r"^(?:how|what|which|why|when|where|who|whom)\b", re.IGNORECASE)
_DETERMINER = re.compile(
    r"^(?:a|an|the|its|their|his|her|our|my|more|fewer|less|several|many)\b", re.IGNORECASE
)
_PAUSE = "\ue000"
"""Stands for a comma inside an option ("fewer, larger grants") while the list is split."""


def _is_adjective(word: str) -> bool:
    classes = word_classes()(word.lower())
    return "ADJ" in classes and word.lower() not in classes.get("VERB", ())


def _tie_adjectives(text: str) -> str:
    """Commas between adjectives that go on to a noun join them: "fewer, larger grants or
    more, smaller ones" lists two options, not four (a base-form verb after the comma starts
    an option of its own: "stay closed, open new stores or sell")."""

    def tie(match: re.Match[str]) -> str:
        before, after, noun = match.group("before", "after", "noun")
        if noun.lower() in {"or", "and", "nor", "but"}:
            return match.group(0)
        if _is_adjective(before) and _is_adjective(after):
            return f"{before}{_PAUSE} {after} {noun}"
        return match.group(0)

    return re.sub(
        r"\b(?P<before>[A-Za-z]+),\s+(?P<after>[A-Za-z]+)\s+(?P<noun>[A-Za-z]+)", tie, text
    )


def _split_list(text: str, *, between: bool = False) -> list[str]:
    """Items of an inline enumeration; [] when it is not one."""
    text = _tie_adjectives(re.sub(r"\bvs\.", "vs", text))
    text = re.split(r"[?]|\.(?:\s|$)", text, maxsplit=1)[0]
    text = re.sub(r",?\s+and\s+if\s+so\b(?!,).*$", "", text, flags=re.IGNORECASE)
    if between:  # "between A and B, and the board meets …": the pair ends at the clause
        text = re.split(r",\s+(?:and|but|so|while|as|which|because)\s", text, maxsplit=1)[0]
    # "would you recommend we A, B or C": the advice verb and its subject are no option
    text = re.sub(
        r"^(?:recommend|advise|suggest|propose)s?\s+(?:that\s+)?" + SUBJECT + r"\s+", "", text
    )
    for mark in (": ", " — ", " – ", " - "):  # "which should we pursue — A, B or C"
        if mark in text:
            after = _split_list(text.rsplit(mark, 1)[1], between=between)
            if after:
                return after
    if INLINE_MARK.search(text):
        first = INLINE_MARK.search(text)
        lead = text[: first.start()] if first else ""
        parts = [p for p in INLINE_MARK.split(text[len(lead) :]) if p.strip()]
        parts = [re.sub(r"[,;]?\s*(?:and|or)?\s*$", "", p) for p in parts]
        between = True  # numbered items are whole: no verb is shared among them
    elif ";" in text:
        parts = text.split(";")
    elif re.search(r"\s(?:against|versus|vs)\s", text):
        parts = re.split(r"\s(?:against|versus|vs)\s", text)  # "weighing A against B"
        between = True  # two whole options: the first's verb does not govern the second
    elif re.search(r",\s", text):
        parts = re.split(r",(?=\s)", text)  # "2,400" is a number, not a list
        if not any(re.match(r"\s*or\s", p) for p in parts[1:]) and " or " in parts[-1]:
            # "A, B or C" (no serial comma): the last part holds two items.
            parts = [*parts[:-1], *parts[-1].rsplit(" or ", 1)]
        elif (
            " or " not in text
            and not any(re.match(r"\s*and\s", p) for p in parts[1:])
            and " and " in parts[-1]
        ):
            parts = [*parts[:-1], *parts[-1].rsplit(" and ", 1)]  # "A, B and C"
    elif between and " and " in text:
        parts = text.split(" and ", 1)
    elif " or " in text:
        parts = text.split(" or ")
        if len(parts) == 2 and " " not in parts[0].strip() and " " in parts[1].strip():
            # "make or buy its delivery vans": both verbs share the object.
            rest = parts[1].strip().partition(" ")[2]
            parts = [f"{parts[0].strip()} {rest}", parts[1]]
    else:
        return []
    bare = [re.sub(r"\s+", " ", p.strip(" ,;:.?!")) for p in parts]
    bare = [re.sub(r"^(?:(?:either|or|and)\s+)+", "", b, flags=re.I) for b in bare]
    if len(bare) >= 2 and all(
        len(b.split()) <= 3 and b.split()[0] in _PREPOSITIONS and f" {b.split()[0]} " in bare[0]
        for b in bare[1:]
    ):
        # "open a store in Malmö or in Göteborg": the first item's move goes to each place.
        parts = [
            bare[0],
            *(bare[0][: bare[0].rfind(f" {b.split()[0]} ") + 1] + b for b in bare[1:]),
        ]
    raw = [re.sub(r"\s+", " ", LEAD.sub("", p.strip(" ,;:.?!"))).strip() for p in parts]
    raw = [r for r in raw if r and not re.fullmatch(r"(?i)(?:and\s+)?if so|or|and", r)]
    if any(re.fullmatch(r"(?i)not|no|not at all", r) for r in raw):
        return []  # "should we go or not?" is a yes/no decision
    if not 2 <= len(raw) <= MAX_OPTIONS or any(len(r.split()) > 24 for r in raw):
        return []
    if any(_QUESTION_WORD.match(r) or re.search(r"\bshould\b", r, re.I) for r in raw):
        return []  # "what should X do, and how should it …": questions, not options
    if any(not re.search(r"[^\W\d_]{2}|^[^\W\d_]$", r) for r in raw):
        return []  # "between 2019 and 2024": figures, not courses of action
    head = raw[0].split()
    if (
        not between
        and len(head) >= 2
        and head[0].islower()
        and not _DETERMINER.match(raw[0])
        and any(len(r.split()) <= 3 and (r[:1].isupper() or _DETERMINER.match(r)) for r in raw[1:])
    ):
        # "enter Germany, France or Spain", "expand to Ohio or Texas", "acquire a rival or a
        # supplier": the first item's move, up to its object, governs the rest.
        cut = next((k for k, w in enumerate(head) if _DETERMINER.match(w)), None)
        if cut is None or not all(_DETERMINER.match(r) for r in raw[1:]):
            cut = len(head)
            while cut > 1 and head[cut - 1][:1].isupper():
                cut -= 1
        verb = " ".join(head[: max(cut, 1)]) if cut < len(head) else ""
        # only noun phrases take the verb: in "go with A, B or build in-house" the last has its own
        raw = [
            raw[0],
            *(
                f"{verb} {r}"
                if verb and len(r.split()) <= 3 and (r[:1].isupper() or _DETERMINER.match(r))
                else r
                for r in raw[1:]
            ),
        ]

    items = [_clean(r).replace(_PAUSE, ",") for r in raw]
    return items


_OPTION_LABEL = re.compile(
    r"\b(?:options?|alternatives?|choices?|scenarios?|paths?|routes?|offers?|proposals?|"
    r"courses? of action|candidates?|plans?|strateg(?:y|ies)|approach(?:es)?)\b",
    re.IGNORECASE,
)
_DATA_LABEL = re.compile(
    r"\b(?:facts?|context|data|background|figures?|numbers?|metrics?|constraints?|situation|"
    r"financials?|finances|budget|assumptions?|notes?|details?|kpis?|statistics?|evidence|"
    r"position|profile|about)\b",
    re.IGNORECASE,
)
_DATUM = re.compile(r"^(?:[^:]{1,48}:\s*\S|[$€£¥]?\d)")
_TASK_LABEL = re.compile(
    r"\b(?:next\s+steps?|action\s+points?|actions?\s+(?:agreed|arising|required)|to[- ]?dos?|"
    r"tasks?|follow[- ]?ups?|agenda|questions?|pros|cons|advantages|disadvantages|risks?|"
    r"requirements?|goals?|objectives?|aims?|priorities|targets?|values|principles)\b|"
    r"^\W*actions?\W*$",
    re.IGNORECASE,
)
"""Labels of lists that are no options: a to-do list, questions, pros and cons, risks, goals."""


def _is_data(items: Sequence[str], label: str) -> bool:
    """Whether a list holds the client's data rather than its options: its label says so
    ("Facts", "Context", "Constraints", or "Next steps", "Questions", "Pros": tasks and
    arguments), or most items read "Label: figure" or start with one."""
    if (_DATA_LABEL.search(label) or _TASK_LABEL.search(label)) and not _OPTION_LABEL.search(label):
        return True
    if _OPTION_LABEL.search(label):
        return False
    data = [i for i in items if _DATUM.match(i) and FIGURE.search(i)]
    return 2 * len(data) > len(items)


def _runs(blocks: Sequence[Block], kind: str) -> list[list[Block]]:
    runs: dict[int, list[Block]] = {}
    for block in blocks:
        if block.kind == kind:
            runs.setdefault(block.run, []).append(block)
    return list(runs.values())


def _bullets(blocks: Sequence[Block]) -> list[tuple[list[str], bool]]:
    """Lists of two or more bullet or numbered lines that may hold options (never a list of the
    client's data), longest first, each with whether its label names it as options."""
    found = []
    for run in _runs(blocks, "bullet"):
        items = [_clean(b.text) for b in run]
        if _ONE_OPTION.match(run[0].label):
            continue  # a list under "Option A" describes that one option: not a list of options
        if 2 <= len(items) <= MAX_OPTIONS and not _is_data(items, run[0].label):
            found.append((items, bool(_OPTION_LABEL.search(run[0].label))))
    return sorted(found, key=lambda f: len(f[0]), reverse=True)


_ONE_OPTION = re.compile(
    r"^\W*(?:option|alternative|choice|path|route|offer|scenario|proposal)\s+"
    r"(?:[A-H1-9]|one|two|three|four|five)\W*$",
    re.IGNORECASE,
)
"""A heading or label that is only one option's mark ("Option A", "**Alternative 2:**")."""


def _sections(blocks: Sequence[Block]) -> list[str]:
    """Options written as sections under their marks ("## Option A" then "- Build a store",
    "Option B:" then a paragraph): the first line under each mark (its first sentence), the
    rest being that option's details."""
    items: list[str] = []
    marks: set[str] = set()
    for k, block in enumerate(blocks):
        if block.kind not in ("heading", "label") or not _ONE_OPTION.match(block.text):
            continue
        mark = block.text.casefold().strip(" *:_")
        below = next(
            (b for b in blocks[k + 1 :] if b.kind in ("bullet", "text", "heading", "label")), None
        )
        if mark in marks or below is None or below.kind in ("heading", "label"):
            return []  # a mark repeated, or one with nothing under it: not one option a section
        marks.add(mark)
        first = sentences(below.text)[0] if below.kind == "text" else below.text
        items.append(_clean(first))
    return items if 2 <= len(items) <= MAX_OPTIONS else []


def _table_options(blocks: Sequence[Block]) -> list[str]:
    """A table whose first column is headed Option (or Alternative, Choice …): one option a
    row: its first cell, with the next column's prose description in brackets ("Freemium (keep
    a free tier …)") so a plan naming two options still reads as one sentence."""
    for run in _runs(blocks, "row"):
        if not _OPTION_LABEL.search(run[0].header[0]) or not 2 <= len(run) <= MAX_OPTIONS:
            continue
        items = []
        for row in run:
            cells = row.cells
            name = cells[0] if cells else ""
            detail = cells[1] if len(cells) > 1 and len(cells[1].split()) >= 3 else ""
            items.append(_clean(f"{name} ({_lower(detail)})" if detail else name))
        if all(items):
            return items
    return []


def _heading_options(blocks: Sequence[Block]) -> list[str]:
    """Sub-headings under a heading that announces options ("## Choices" / "### Expand" /
    "### Hold"): one option each."""
    for k, block in enumerate(blocks):
        if block.kind != "heading" or not _OPTION_LABEL.search(block.text):
            continue
        items: list[str] = []
        for below in blocks[k + 1 :]:
            if below.kind == "heading" and below.level <= block.level:
                break
            if below.kind == "heading" and below.level == block.level + 1:
                items.append(_clean(below.text))
        if 2 <= len(items) <= MAX_OPTIONS and not any(
            _DATA_LABEL.search(i) or _SECTION.search(i) for i in items
        ):
            return items
    return []


_SECTION = re.compile(
    r"^(?:the\s+)?(?:question|summary|introduction|overview|recommendations?|decision|appendix|"
    r"conclusions?|next steps|risks?|timeline|ask|problem|goals?|objectives?|scope)\b",
    re.IGNORECASE,
)
"""Sub-headings that structure a brief rather than name an option."""


def _sentences(blocks: Sequence[Block]) -> list[str]:
    """The prose of a problem, sentence by sentence (bullets and rows are their own)."""
    return [
        sentence
        for block in blocks
        if block.kind != "label"
        for sentence in (sentences(block.text) if block.kind == "text" else [block.text])
    ]


_STANCE = (
    r"(?:favou?rs?|prefers?|wants?|backs?|supports?|advocates?|proposes?|urges?|"
    r"(?:pushe?s?|argues?|calls?|lobb(?:y|ies))\s+for|would\s+rather|leans?\s+towards?|"
    r"(?:is|are)\s+(?:in\s+favou?r\s+of|keen\s+on|for)|"
    r"(?:says?|said|thinks?|thought|believes?|feels?|reckons?|suggests?|advises?)\s+(?:that\s+)?"
    r"(?:we|i|you|they|us|he|she)\s+(?:should|ought\s+to|must|need\s+to))"
)
_POSITION = re.compile(
    r"^(?:[^,;]{0,60},\s+)?(?P<who>(?:[\w'’.&-]+\s+){0,3}?[\w'’.&-]+),?\s+" + _STANCE + r"\s+"
    r"(?P<item>.+?)[.!]?$",
    re.IGNORECASE,
)
_REQUEST = re.compile(
    r"^(?:(?:independent|your|our|some|expert|urgent)\s+)?(?:advice|help|guidance|input|"
    r"views?|opinions?|an?\s+(?:recommendation|answer|opinion|view|steer)|to\s+(?:know|hear|"
    r"understand|be\s+advised|be\s+told))\b",
    re.IGNORECASE,
)
"""What someone wants from the adviser ("the board wants advice on which to back"): a request,
not a position on the options."""
_TURN = re.compile(r"(\s*;\s*|,?\s+(?:while|whereas|but|and)\s+|,\s+)", re.IGNORECASE)
_NOT_WHO = re.compile(r"\b(?:not|no|nobody|none|should|would|could|if|what|which)\b", re.I)


def _positions(said: Sequence[str]) -> list[str]:
    """Stakeholders' positions as the options: "the CEO favours A while the CFO prefers B",
    "the board wants A; the unions want B" (the last sentence that states two or more)."""
    for sentence in reversed(said):
        pieces = _TURN.split(sentence.strip())
        items: list[str] = []
        for k in range(0, len(pieces), 2):
            match = _POSITION.match(pieces[k])
            if (
                match
                and not _NOT_WHO.search(match.group("who"))
                and not _REQUEST.match(match.group("item"))
            ):
                items.append(match.group("item"))
            elif items:  # "… A, B and C while …": the clause goes on
                items[-1] += pieces[k - 1] + pieces[k]
            else:
                break
        found = [_clean(i) for i in items]
        if 2 <= len(found) <= MAX_OPTIONS and all(found):
            return found
    return []


def _positions_apart(said: Sequence[str]) -> list[str]:
    """Stakeholders' positions stated one a sentence ("Karen wants to lease the trucks." …
    "Phil wants us to buy them."): two or more, in the text's order."""
    items = []
    for sentence in said:
        match = _POSITION.match(sentence.strip())
        if (
            match
            and not _NOT_WHO.search(match.group("who"))
            and not _REQUEST.match(match.group("item"))
        ):
            items.append(_clean(match.group("item")))
    return items if 2 <= len(items) <= MAX_OPTIONS else []


_ORDINAL = re.compile(
    r"^(?:\(?\d+(?:\.\d+)*\)?\s+)?"  # a numbered paragraph ("3.2 Option 1 is to …")
    r"(?:(?:so|and|then|finally|lastly|firstly|secondly|thirdly)\s*,?\s+)?"
    r"(?:(?:the|a|an)\s+)?"
    r"(?:(?P<nth>first|second|third|fourth|fifth|last|final|other|another|one|further)"
    r"(?:\s+(?:option|alternative|path|choice|route|course(?:\s+of\s+action)?|scenario|"
    r"proposal|idea|possibility|approach|way(?:\s+forward)?))?|"
    r"(?:option|alternative|path|choice|route|scenario|proposal)\s+"
    r"(?P<mark>[A-H1-9]|one|two|three|four|five))"
    r"(?:\s+(?:open\s+to|for|before|on\s+the\s+table\s+for)\s+[^,]{1,40}?)?"
    r"\s+(?:is|was|would\s+be|will\s+be|could\s+be|involves|means)\s+to\s+"
    r"(?P<item>.+)$",
    re.IGNORECASE,
)
"""One option a sentence, led by its ordinal or mark: "The first is to …", "One is to …",
"The other is to …", "A third course would be to …", "Option 2 is to …". Not "The first
scenario is that I retire …, take …, and draw …": such a scenario is a chain of moves whose
first clause alone under-states it (measured on the development set, it cost precision)."""
_ALTERNATIVELY = re.compile(
    r"^(?:or\s*,?\s+)?alternatively\s*,?\s+(?:" + SUBJECT + r"\s+)?"
    r"(?:could|might|may|can|would)\s+(?P<item>.+)$",
    re.IGNORECASE,
)
"""A further option in a run of ordinal ones: "Alternatively, the trustees could close …"."""
_STARTS = frozenset({"first", "one", "a", "1"})


def _ordinals(said: Sequence[str]) -> list[str]:
    """Options stated one a sentence with their ordinals ("The first is to A. … The second is
    to B."), in the text's order: the longest run that a first ordinal starts ("first", "one",
    "Option A" or "1"), an "Alternatively, X could B" sentence counting inside a run."""
    runs: list[list[str]] = []
    for sentence in said:
        text = sentence.strip()
        found = _ORDINAL.match(text)
        if found is not None:
            nth = (found.group("nth") or found.group("mark") or "").casefold()
            if nth in _STARTS or not runs:
                runs.append([])
            runs[-1].append(found.group("item"))
            continue
        further = _ALTERNATIVELY.match(text)
        if further is not None and runs and runs[-1]:
            runs[-1].append(further.group("item"))
    best = max(runs, key=len, default=[])
    items = [_clean(i) for i in best]
    return items if 2 <= len(items) <= MAX_OPTIONS and all(items) else []


def question_sentences(text: str) -> list[str]:
    """A problem's sentences, read block by block (a line break ends a heading or a list item,
    so "Line one" and the question below it are two sentences)."""
    return _sentences(read_blocks(text))


class Candidates(NamedTuple):
    """One way of reading a problem's options: what was found, and how."""

    method: str
    """bullets, table, headings, labelled, trigger, positions or yes/no."""
    items: tuple[str, ...]
    named: bool
    """The text calls them options (a label, a heading, a table column, "Option A")."""


_DISCOURSE = re.compile(
    r"^((?:[A-Z][\w .'’-]{0,30}:\s*)?)(?:(?:so|well|ok|okay|right|anyway|look|honestly|alright|"
    r"hmm+|um+|er+)\s*,\s*)+",
    re.IGNORECASE,
)
"""A discourse marker that opens a sentence, after a speaker's name or not ("Ana: so, expand
or stay?"): it is no item of the list that follows."""


def candidate_sets(question: str) -> list[Candidates]:
    """Every reading of a question's options, strongest first.

    A list of options (bullets or a table, but never a list of the client's data) comes
    first, then "Option A: …" labels, then the inline enumerations by strength (a "whether to
    …", "should X …?" or "do we A, or do we B?" clause, then "options …: …" or "weighing A
    against B", then "between …"; later sentences first), then stakeholders' positions, then
    a bare yes/no question, which weighs the move against declining it.
    """
    found: list[Candidates] = []
    blocks = read_blocks(question)
    prose = "\n".join(b.text for b in blocks)  # "### Option A: …" headings name options too
    labelled = [_clean(m.group("item")) for m in _LABELLED.finditer(prose)]
    if 2 <= len(labelled) <= MAX_OPTIONS:  # "Option A: … Option B: …"
        found.append(Candidates("labelled", tuple(labelled), True))
    for items, named in _bullets(blocks):
        marked = [i for i in items if _OPTION_MARK.match(i)]
        if 2 <= len(marked) < len(items):  # "5. Three options were assessed. 6. Option A is …"
            found.append(Candidates("labelled items", tuple(marked), True))
        found.append(Candidates("bullets", tuple(items), named))
    table = _table_options(blocks)
    if table:
        found.append(Candidates("table", tuple(table), True))
    headings = _heading_options(blocks)
    if headings:
        found.append(Candidates("headings", tuple(headings), True))
    marked = _sections(blocks)
    if marked:
        found.append(Candidates("sections", tuple(marked), True))
    said = [tie_subjects(_DISCOURSE.sub(r"\1", sentence)) for sentence in _sentences(blocks)]
    ordinals = _ordinals(said)
    if ordinals:
        found.append(Candidates("ordinals", tuple(ordinals), False))
    triggered: list[tuple[int, int, bool, list[str]]] = []
    for position, sentence in enumerate(said):
        for priority, pattern in _TRIGGERS:
            for match in pattern.finditer(sentence):
                if _OPTION_MARK.search(match.group(0)[:40]):
                    continue  # "Option C is to A, at B": one labelled option, not a list
                items = _trigger_items(match)
                if items:
                    named = True  # the objects of a choice ("among A, B and C"): noun phrases count
                    triggered.append((priority, position, named, items))
    for _, _, named, items in sorted(triggered, key=lambda t: t[:2], reverse=True):
        found.append(Candidates("trigger", tuple(items), named))
    positions = _positions(said)
    if positions:
        found.append(Candidates("positions", tuple(positions), True))
    apart = _positions_apart(said)
    if apart:
        found.append(Candidates("positions", tuple(apart), False))
    asked = yes_no(said)
    if asked:
        found.append(Candidates("yes/no", tuple(asked), False))
    return [
        Candidates(c.method, unique, c.named)
        for c in found
        if len(unique := _distinct(c.items)) >= 2
    ]


_OPTION_MARK = re.compile(
    r"^\W*(?:option|alternative|choice|path|route|offer|scenario|proposal)\s+"
    r"(?:[A-H1-9]|one|two|three|four|five)\b",
    re.IGNORECASE,
)
"""An item labelled as one option ("Option A is to …", "Alternative 2: …")."""
_NAMED_TRIGGER = 5
"""Index in `_TRIGGERS` of "options …: A, B": the text names its list as options."""


def _trigger_items(match: re.Match[str]) -> list[str]:
    found = match.group("list") or ""
    if "aux" in match.groupdict():  # "do we A, or do we B?"
        found = re.sub(
            r",?\s+or\s+"
            + re.escape(match.group("aux"))
            + r"\s+"
            + re.escape(match.group("subj"))
            + r"\s+",
            " or ",
            found,
            flags=re.IGNORECASE,
        )
    if match.groupdict().get("second"):  # "comparing A with B"
        found = f"{match.group('first')} versus {match.group('second')}"
    if "move" in match.groupdict() and not is_move(found):
        return []  # "Do we need a CFO or a COO?" asks about a state
    return _split_list(found, between="between" in match.group(0))


def _distinct(items: Sequence[str]) -> tuple[str, ...]:
    """Items untied and without repeats (case-insensitive), in order."""
    seen: set[str] = set()
    kept = []
    for item in (untie(i) for i in items):
        if item.casefold() not in seen:
            seen.add(item.casefold())
            kept.append(item)
    return tuple(kept)


class OptionReading(NamedTuple):
    """The options a question weighs, each with the span it was read from, or why none."""

    options: tuple[tuple[str, str | None], ...]
    """(label, quote) pairs; the quote is None when the label is not the text's own words."""
    rejected: tuple[str, ...] = ()
    """Candidate sets that were not trusted, each with why."""


def read_options(question: str) -> OptionReading:
    """The first reading of a question's options in which every candidate is a plausible course
    of action (see `hivemind_lab.problems.reading.plausible`); none when no reading is.

    One implausible item condemns its whole set: a list that holds a figure or a question is
    not a list of options, and a wrong option is worse than none.
    """
    rejected: list[str] = []
    for found in candidate_sets(question):
        labels, reasons = [], []
        for item in found.items:
            label = trim(item)
            reason = judge(label, named=found.named)
            if reason is None and is_attribute(item):  # its label was cut at a later comma
                reason = "a label and its value (an attribute), not a course of action"
            if reason is None and len(label) > MAX_OPTION_CHARS:
                reason = "a paragraph or over-long clause, not one course of action"
            if reason:
                reasons.append(f"{item[:80]!r}: {reason}")
            labels.append(label)
        forms = {_verb_form(label) for label in labels} - {None}
        inline = found.method in ("trigger", "positions", "yes/no")
        if not reasons and inline and forms == {"base", "ing"}:  # "Lease A, adding 40 lists"
            reasons.append("base and -ing forms mixed: a participle clause, not an option")
        if reasons:
            rejected.append(f"{found.method}: " + "; ".join(reasons))
            continue
        if len({label.casefold() for label in labels}) < len(labels):
            rejected.append(f"{found.method}: two candidates read as one option")
            continue
        return OptionReading(tuple((label, span(question, label)) for label in labels))
    return OptionReading((), tuple(rejected))


def _verb_form(label: str) -> str | None:
    first = label.split()[0].lower() if label.split() else ""
    if not first.endswith("ing"):
        return "base" if word_classes()(first).get("VERB") else None
    return "ing" if word_classes()(first).get("VERB") else None


def span(text: str, phrase: str) -> str | None:
    """The exact span of ``text`` that says ``phrase`` (case of its first letter and spacing
    aside), or None when the text does not say it in these words."""
    words = phrase.split()
    if not words:
        return None
    pattern = r"\s+".join(re.escape(w) for w in words)
    match = re.search(pattern, text, re.IGNORECASE)
    return match.group(0) if match else None


def extract_options(question: str) -> tuple[str, ...]:
    """The courses of action a question weighs, in its order; () when it names none or the
    reader does not trust what it found (see `read_options`)."""
    return tuple(label for label, _ in read_options(question).options)
