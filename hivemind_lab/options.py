"""The client's options: the courses of action a problem's text enumerates.

Pure text functions. A problem file may list its options; a plain-text or Markdown problem
states them in its own words — "whether to A, B or C", "should X A or B?", "weighing A against
B", "Option 1 — …", "(a) … (b) …", a bulleted list or a table — or asks a yes/no question, which
weighs the move against declining it. Reading them here lets every agent argue about this
client's actual choice.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from hivemind_lab.problem_text import FIGURE, Block, read_blocks, sentences
from hivemind_lab.subjects import tie_subjects, untie

MAX_OPTIONS = 8
"""Option lists are bounded so every output schema can bound its references to them."""
MAX_OPTION_CHARS = 160

OptionsSource = Literal["given", "extracted", "agents"]
"""given: listed by the problem; extracted: read from the question; agents: none found, so
the agents propose their own courses of action."""


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
_CAPITAL = "A-ZÀ-ÖØ-ÞĀ-ſΑ-ΩА-Я\u4e00-\u9fff\u3040-\u30ff\uac00-\ud7af"
"""Letters that start a name: capitals of Latin, Greek and Cyrillic scripts, and the caseless
CJK scripts (whose names have no capitals)."""
_NAME = rf"[{_CAPITAL}][\w&.'’-]*"
_SUBJECT = (
    r"(?:it|we|they|i|he|she|you|"
    r"(?i:the|an?|our|my|your|their|its|his|her|this|that)\s+(?:[\w-]+\s+){0,2}?[\w-]+"
    rf"(?:\s+(?:of|for)\s+(?:the\s+)?{_NAME}(?:\s+{_NAME}){{0,2}})?|"
    rf"(?:{_NAME})(?:\s+{_NAME}){{0,3}})"
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
        3,
        re.compile(
            r"\b(?i:whether)\s+(?:or\s+not\s+)?(?:" + _SUBJECT + r"\s+should\s+)?(?P<list>.+)"
        ),
    ),
    (
        3,
        re.compile(
            # the last "should <subject>" of the question: "Should X respond, and if so,
            # should it A, B or C?" lists A, B and C.
            r"^.*\b(?i:should|could|can|shall|must|would)\s+"
            + _SUBJECT
            + r"(?::\s*|\s+)(?P<list>[^?]+)\?",
        ),
    ),
    (
        3,  # a typed one-liner may lack its "?": "Should we expand or sell" (no clause after)
        re.compile(r"^(?i:should|shall)\s+" + _SUBJECT + r"\s+(?P<list>[^?,;]+)$"),
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
    (0, re.compile(r"\b" + _SUBJECT + r"\s+(?i:can|could|may|might)\s+(?P<list>[^?]+)\.?$")),
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
LEAD = re.compile(
    r"^(?:(?:either|or|and|to|whether\s+to|whether|by|it\s+should|should)\s+)+", re.IGNORECASE
)
_PREPOSITIONS = frozenset(
    ["in", "at", "to", "into", "from", "for", "with", "on", "by", "via", "through"]
)
_QUESTION_WORD = re.compile(r"^(?:how|what|which|why|when|where|who|whom)\b", re.IGNORECASE)
_DETERMINER = re.compile(r"^(?:a|an|the|its|their|his|her|our|my)\b", re.IGNORECASE)


def _clean(item: str) -> str:
    item = re.sub(r"\s+", " ", item).strip(" \t,;:.?!\"'“”")
    item = LEAD.sub("", item).strip(" ,;:")
    return item[:1].upper() + item[1:] if item else item


def _split_list(text: str, *, between: bool = False) -> list[str]:
    """Items of an inline enumeration; [] when it is not one."""
    text = re.sub(r"\bvs\.", "vs", text)
    text = re.split(r"[?]|\.(?:\s|$)", text, maxsplit=1)[0]
    text = re.sub(r",?\s+and\s+if\s+so\b(?!,).*$", "", text, flags=re.IGNORECASE)
    # "would you recommend we A, B or C": the advice verb and its subject are no option
    text = re.sub(
        r"^(?:recommend|advise|suggest|propose)s?\s+(?:that\s+)?" + _SUBJECT + r"\s+", "", text
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
            # "make or buy its battery packs": both verbs share the object.
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

    items = [_clean(r) for r in raw]
    return [i[:MAX_OPTION_CHARS] for i in items]


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


def _is_data(items: Sequence[str], label: str) -> bool:
    """Whether a list holds the client's data rather than its options: its label says so
    ("Facts", "Context", "Constraints"), or most items read "Label: figure" or start with one."""
    if _DATA_LABEL.search(label) and not _OPTION_LABEL.search(label):
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


def _bullets(blocks: Sequence[Block]) -> list[str]:
    """The longest list of two or more bullet or numbered lines that holds options."""
    best: list[str] = []
    for run in _runs(blocks, "bullet"):
        items = [_clean(b.text)[:MAX_OPTION_CHARS] for b in run]
        if len(items) > len(best) and not _is_data(items, run[0].label):
            best = items
    return best[:MAX_OPTIONS] if len(best) >= 2 else []


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
            items.append(
                _clean(f"{name} ({_lower(detail)})" if detail else name)[:MAX_OPTION_CHARS]
            )
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
                items.append(_clean(below.text)[:MAX_OPTION_CHARS])
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


_YES_NO = (
    re.compile(
        r"^(?i:should|shall|ought)\s+" + _SUBJECT + r"\s+(?:(?i:to)\s+)?(?P<move>[^?]{3,160})\??$"
    ),
    re.compile(r"\b(?i:whether)\s+(?:or\s+not\s+)?to\s+(?P<move>[^?.;]{3,160})[?.]?$"),
)
_CONDITION = re.compile(
    r",?\s+(?:and\s+if\s+so|given|considering|despite|in\s+light\s+of|in\s+view\s+of|"
    r"now\s+that|because|since|while)\b.*$",
    re.IGNORECASE,
)


def _yes_no(said: Sequence[str]) -> list[str]:
    """A yes/no decision ("Should Acme acquire Beta?", "whether to go back to school") weighs
    the move against declining it; its conditions ("given 2.4x leverage") are facts."""
    for sentence in reversed(said):
        for pattern in _YES_NO:
            match = pattern.search(sentence.strip())
            if not match:
                continue
            if not sentence.rstrip().endswith("?") and "," in match.group("move"):
                continue  # "Should the merger fail, we would …" is a condition, not a question
            move = _clean(_CONDITION.sub("", match.group("move")))
            move = re.sub(r"\s+or\s+not$", "", move, flags=re.IGNORECASE)
            words = move.split()
            if (
                1 <= len(words) <= 16
                and not re.search(r"\b(?:or|should|how|what|which|whether)\b", move, re.I)
                and not words[0].lower().endswith(("ing", "ed"))
            ):
                return [move[:MAX_OPTION_CHARS], declining(move)]
    return []


def declining(move: str) -> str:
    """The other side of a yes/no decision: "Acquire Beta" → "Decline to acquire Beta"."""
    return f"Decline to {_lower(move)}"[:MAX_OPTION_CHARS]


def question_sentences(text: str) -> list[str]:
    """A problem's sentences, read block by block (a line break ends a heading or a list item,
    so "Line one" and the question below it are two sentences)."""
    return _sentences(read_blocks(text))


def _lower(text: str) -> str:
    word = text.split(" ", 1)[0]
    return text[:1].lower() + text[1:] if word[1:].islower() or word == "A" else text


def extract_options(question: str) -> tuple[str, ...]:
    """The courses of action a question enumerates, in its order ([] when it names none).

    A list of options wins (bullets or a table, but never a list of the client's data);
    then "Option A: …" labels; then the strongest inline enumeration: a "whether to …",
    "should X …?" or "do we A, or do we B?" clause, then "options …: …" or "weighing A against
    B", then "between …". A bare yes/no question weighs the move against declining it.
    Options are distinct (a repeat is dropped), and one option alone is no choice.
    """
    unique = list(dict.fromkeys(untie(o) for o in _find_options(question)))
    unique = [
        o for i, o in enumerate(unique) if o.casefold() not in {u.casefold() for u in unique[:i]}
    ]
    return tuple(unique) if len(unique) >= 2 else ()


def _find_options(question: str) -> tuple[str, ...]:
    blocks = read_blocks(question)
    listed = _bullets(blocks) or _table_options(blocks) or _heading_options(blocks)
    if listed:
        return tuple(listed)
    said = [tie_subjects(sentence) for sentence in _sentences(blocks)]
    prose = "\n".join(b.text for b in blocks)  # "### Option A: …" headings name options too
    labelled = [_clean(m.group("item"))[:MAX_OPTION_CHARS] for m in _LABELLED.finditer(prose)]
    if 2 <= len(labelled) <= MAX_OPTIONS:  # "Option A: … Option B: …"
        return tuple(labelled)
    best: tuple[int, int, list[str]] | None = None
    for position, sentence in enumerate(said):
        for priority, pattern in _TRIGGERS:
            for match in pattern.finditer(sentence):
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
                items = _split_list(found, between="between" in match.group(0))
                if items and (best is None or (priority, position) >= best[:2]):
                    best = (priority, position, items)
    if best:
        return tuple(best[2])
    return tuple(_yes_no(said))
