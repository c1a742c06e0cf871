"""The client's decision: the options it weighs and the facts it brings.

Pure text functions. Options come from a problem file's ``options`` list or, for a plain-text
problem, from the question's own enumeration ("whether to A, B or C", "three offers: …", a bullet
list); facts are the client-cleared and market data (and the question's own figures), cut into
short, citable statements. Agents reason over both, so every conclusion is about this client.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from hivemind_lab.text import split_sentences

MAX_OPTIONS = 8
"""Option lists are bounded so every output schema can bound its references to them."""
MAX_OPTION_CHARS = 160
MAX_FACTS = 24
MAX_FACT_CHARS = 320

OptionsSource = Literal["given", "extracted", "agents"]
"""given: listed by the problem; extracted: read from the question; agents: none found, so
the agents propose their own courses of action."""
FactSource = Literal["client", "market", "question"]


class Fact(BaseModel):
    """One client or market statement an agent can name and cite."""

    model_config = ConfigDict(frozen=True)

    id: str
    """``<data id>.<n>`` or ``question.<n>``: stable citation key."""
    text: str = Field(max_length=MAX_FACT_CHARS)
    source: FactSource


_BULLET = re.compile(r"^\s*(?:[-*•▪]|\d{1,2}[.)]|\(?[a-hA-H1-9]\))\s+(?P<item>\S.*)$")
_INLINE_MARK = re.compile(
    r"(?:\(\s*(?:[a-h]|[1-9]|i{1,3}|iv|v)\s*\)|(?<![\w,.])[1-9]\))\s*", re.IGNORECASE
)
_LABELLED = re.compile(
    r"\b(?:option|alternative|path|offer|choice|scenario)\s+(?:[A-H1-9]|one|two|three|four|five)"
    r"\s*[:.)–—-]\s*(?P<item>[^;\n]+?)(?=[.;]?\s*(?:\b(?:option|alternative|path|offer|choice|"
    r"scenario)\s+(?:[A-H1-9]|one|two|three|four|five)\s*[:.)–—-]|$|\n))",
    re.IGNORECASE,
)
_SUBJECT = (
    r"(?:it|we|they|i|he|she|you|(?i:the)\s+(?:[a-z-]+\s+){0,2}?[a-z-]+|"
    r"(?:[A-Z][\w&.'’-]*)(?:\s+[A-Z][\w&.'’-]*){0,3})"
)
_TRIGGERS: tuple[tuple[int, re.Pattern[str]], ...] = (
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
            r"^.*\b(?i:should|could|can|shall|must|would)\s+" + _SUBJECT + r"\s+(?P<list>[^?]+)\?",
        ),
    ),
    (
        2,
        re.compile(
            r"\b(?:options?|alternatives?|choices?|paths?|routes?|offers?|courses? of action|"
            r"possibilities|proposals)\b[^:.?]{0,60}?(?::|—|–|\binclude\b|\bincluding\b|\bare\b|"
            r"\bis\b)\s*(?P<list>.+)",
            re.IGNORECASE,
        ),
    ),
    (
        1,
        re.compile(
            r"\b(?:split\s+between|choose\s+between|choosing\s+between|deciding\s+between|"
            r"torn\s+between|between|among|considering|weighing|weighs|choose|decide)\s+"
            r"(?P<list>.+)",
            re.IGNORECASE,
        ),
    ),
    (0, re.compile(r"\b" + _SUBJECT + r"\s+(?i:can|could|may|might)\s+(?P<list>[^?]+)\.?$")),
)
_LEAD = re.compile(
    r"^(?:(?:either|or|and|to|whether\s+to|whether|by|it\s+should|should)\s+)+", re.IGNORECASE
)
_QUESTION_WORD = re.compile(r"^(?:how|what|which|why|when|where|who|whom)\b", re.IGNORECASE)
_DETERMINER = re.compile(r"^(?:a|an|the|its|their|his|her|our|my)\b", re.IGNORECASE)
_FIGURE = re.compile(
    r"\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|"
    r"forty|fifty|hundred|thousand|million|billion|half|third|quarter|twice|double)\b",
    re.IGNORECASE,
)


def _clean(item: str) -> str:
    item = re.sub(r"\s+", " ", item).strip(" \t,;:.?!\"'“”")
    item = _LEAD.sub("", item).strip(" ,;:")
    return item[:1].upper() + item[1:] if item else item


def _split_list(text: str, *, between: bool = False) -> list[str]:
    """Items of an inline enumeration; [] when it is not one."""
    text = re.split(r"[?]|\.(?:\s|$)", text, maxsplit=1)[0]
    if _INLINE_MARK.search(text):
        parts = [p for p in _INLINE_MARK.split(text) if p.strip()]
        parts = [re.sub(r"[,;]?\s*(?:and|or)?\s*$", "", p) for p in parts]
    elif ";" in text:
        parts = text.split(";")
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
    raw = [re.sub(r"\s+", " ", _LEAD.sub("", p.strip(" ,;:.?!"))).strip() for p in parts]
    raw = [r for r in raw if r and not re.fullmatch(r"(?i)(?:and\s+)?if so|or|and", r)]
    if not 2 <= len(raw) <= MAX_OPTIONS or any(len(r.split()) > 24 for r in raw):
        return []
    if any(_QUESTION_WORD.match(r) or re.search(r"\bshould\b", r, re.I) for r in raw):
        return []  # "what should X do, and how should it …": questions, not options
    head = raw[0].split()
    if (
        len(head) >= 2
        and head[0].islower()
        and not _DETERMINER.match(raw[0])
        and all(len(r.split()) <= 3 and (r[:1].isupper() or _DETERMINER.match(r)) for r in raw[1:])
    ):
        # "enter Germany, France or Spain": the first item's verb governs the rest.
        raw = [raw[0], *(f"{head[0]} {r}" for r in raw[1:])]
    items = [_clean(r) for r in raw]
    return [i[:MAX_OPTION_CHARS] for i in items]


def _bullets(text: str) -> list[str]:
    """The longest run of two or more bullet or numbered lines."""
    best: list[str] = []
    run: list[str] = []
    for line in [*text.splitlines(), ""]:
        match = _BULLET.match(line)
        if match:
            run.append(_clean(match.group("item"))[:MAX_OPTION_CHARS])
            continue
        if len(run) > len(best):
            best = run
        run = []
    return best[:MAX_OPTIONS] if len(best) >= 2 else []


def extract_options(question: str) -> tuple[str, ...]:
    """The courses of action a question enumerates, in its order ([] when it names none).

    A bullet or numbered list wins; otherwise the strongest inline enumeration: a "whether
    to …" or "should X …?" clause, then "options/paths/offers …: …", then "between …".
    """
    listed = _bullets(question)
    if listed:
        return tuple(listed)
    labelled = [_clean(m.group("item"))[:MAX_OPTION_CHARS] for m in _LABELLED.finditer(question)]
    if 2 <= len(labelled) <= MAX_OPTIONS:  # "Option A: … Option B: …"
        return tuple(labelled)
    best: tuple[int, int, list[str]] | None = None
    sentences = split_sentences(question.replace("\n", " "))
    for position, sentence in enumerate(sentences):
        for priority, pattern in _TRIGGERS:
            for match in pattern.finditer(sentence):
                items = _split_list(match.group("list"), between="between" in match.group(0))
                if items and (best is None or (priority, position) >= best[:2]):
                    best = (priority, position, items)
    return tuple(best[2]) if best else ()


def _short(text: str, limit: int = MAX_FACT_CHARS) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    if len(text) <= limit:
        return text
    cut = text[: limit - 1].rsplit(" ", 1)[0]
    return cut.rstrip(",;:") + "…"


def extract_facts(
    question: str,
    client_data: Sequence[tuple[str, str]] = (),
    market_data: Sequence[tuple[str, str]] = (),
) -> tuple[Fact, ...]:
    """Short, citable statements: every line of client and market data, then the question's
    own statements (figures first), never its questions."""
    facts: list[Fact] = []
    sources: tuple[tuple[FactSource, Sequence[tuple[str, str]]], ...] = (
        ("client", client_data),
        ("market", market_data),
    )
    for source, documents in sources:
        for doc_id, text in documents:
            n = 0
            for line in text.splitlines():
                for sentence in split_sentences(line):
                    if len(sentence.split()) < 3:
                        continue
                    n += 1
                    facts.append(Fact(id=f"{doc_id}.{n}", text=_short(sentence), source=source))
    statements = [
        s
        for s in split_sentences(question.replace("\n", " "))
        if not s.rstrip().endswith("?") and len(s.split()) >= 4 and not extract_options(s)
    ]  # a sentence that lists the options states the decision, not a fact
    ranked = sorted(range(len(statements)), key=lambda i: (not _FIGURE.search(statements[i]), i))
    for i in ranked:
        facts.append(Fact(id=f"question.{i + 1}", text=_short(statements[i]), source="question"))
    client = [f for f in facts if f.source != "question"]
    question_facts = [f for f in facts if f.source == "question"]
    return tuple([*client, *question_facts][:MAX_FACTS])


def fact_snippet(fact: Fact, limit: int = 240) -> str:
    """A fact short enough to quote in a recommendation: the whole statement when it fits,
    else the clause that carries its figure."""
    whole = fact.text.rstrip(".…")
    if len(whole) <= limit:
        return whole
    clauses = [c.strip() for c in re.split(r";|,\s+(?=[a-z])", fact.text) if c.strip()]
    with_figure = [c for c in clauses if _FIGURE.search(c) and len(c.split()) >= 3]
    chosen = (with_figure or clauses or [fact.text])[0]
    return _short(chosen.rstrip("."), limit)
