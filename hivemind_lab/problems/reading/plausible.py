"""Whether a candidate option reads as a course of action, so the rule reader can fail closed.

A list in a client's text is not always a list of options: it may be the client's data, the
questions put to the adviser, a to-do list or a row of figures. A candidate is trimmed to its
head clause (the option's own words, not the costs and reasons that follow), then judged: it
must start with a verb in its base or -ing form ("Sell the site", "Moving to Leeds"), or, when
the text names the list as options, be a short noun phrase ("A second depot"). It must not be a
question fragment, a figure, a place or name, a heading, a "Label: value" attribute, a statement
about the client or a whole paragraph. Generic reading: word classes come from lemminflect's dictionary, never from one
problem's words. Pure text functions.
"""

from __future__ import annotations

import re

from hivemind_lab.problems.reading.subjects import word_classes

MAX_VERB_WORDS = 24
"""A course of action led by a verb fits in one clause of this many words."""
MAX_NOUN_WORDS = 8
"""A named option written as a noun phrase is short ("Buy in", "A second depot")."""

_LEAD_IN = re.compile(
    r"^(?:"
    r"(?:option|alternative|path|choice|scenario|plan|proposal|route|approach)\s+"
    r"(?:[A-H1-9]|one|two|three|four|five)\b\s*[:.)–—-]?\s*|"
    r"(?:the\s+)?(?:first|second|third|fourth|fifth|last|final|other|one|another)\s+"
    r"(?:(?:option|alternative|path|choice|idea|route)\s+)?(?=(?:is|would\s+be|will\s+be)\b)"
    r")"
    r"(?:(?:is|would\s+be|will\s+be|involves|means)\s+)?(?:to\s+)?",
    re.IGNORECASE,
)
""""Option A is to …", "Option 2: …", "The second would be to …": the label, not the option."""
_PRONOUN_LEAD = re.compile(
    r"^(?:(?:finally|simply|just|perhaps|maybe|probably|possibly|alternatively|instead|also|"
    r"then|either|or)\s+)*"
    r"(?:(?:do|does|should|shall|can|could|would|will|must)\s+(?:we|i|you|they|it)\s+|"
    r"(?:us|we|me|i|them|it)\s+(?:to\s+)?|to\s+)?",
    re.IGNORECASE,
)
"""A question's lead ("do we"), a subject ("us to", "we") or an adverb ("finally") before the
option's verb."""
_ONE_CLAUSE = 12
"""An item this short is one clause: its commas join ("a cheap, basic plan"), not detail."""
_BOUNDARY = re.compile(r",\s|;|\s[—–]\s|\s-\s|:\s|\.\s+(?=[A-Z\"“(])|\s\(")
"""Where an option's head clause ends: what follows is its cost, reason or detail."""

_QUESTION_START = re.compile(
    r"^(?:(?:in|on|at|by|for|to|from|with|of)\s+)?"
    r"(?:what|which|whose|who|whom|how|why|when|where|whether|is|are|was|were|do|does|did|"
    r"should|shall|could|can|would|will|may|might|must)\b",
    re.IGNORECASE,
)
_QUESTION_CLAUSE = re.compile(
    r"\b(?:what|which|how|why|when|where|whether)\s+(?:we|i|you|they|it|he|she)\b", re.IGNORECASE
)
_ASKS_ADVISER = re.compile(
    r"^(?:please\s+)?(?:advise|tell|help|show|let|give|send|recommend|suggest|explain)\s+"
    r"(?:us|me)\b",
    re.IGNORECASE,
)
""""Advise us to do", "Tell me which": a request to the adviser, not the client's course."""
_DANGLING = frozenset(
    """to do of the a an and or with for from by in on at into as than that which who our my
    their its your his her this these those is are be""".split()  # noqa: SIM905
)
"""A candidate ending on one of these was cut from a longer sentence."""
_FIGURE_START = re.compile(r"^[$€£¥]?\s?\d")
_DIGIT_TOKEN = re.compile(r"\d")
_FINITE = re.compile(
    r"\b(?:is|are|was|were|has|have|had|will|would|could|can|won't|isn't|aren't|"
    r"don't|doesn't|didn't|wasn't)\b",
    re.IGNORECASE,
)
_FIRST_PERSON = re.compile(r"^(?:i|i'm|i'd|i've|we|we're|we'd|our|my|us|me)\b", re.IGNORECASE)
_SECTION = re.compile(
    r"^(?:the\s+)?(?:question|questions|summary|introduction|overview|background|purpose|"
    r"recommendations?|decision|appendix|conclusions?|next steps|risks?|key risks|timeline|"
    r"problem|goals?|objectives?|scope|context|constraints?|facts?|notes?|finances?|budget|"
    r"arguments?|pros|cons|actions?|agenda|minutes|attendees|apologies|options?)\b",
    re.IGNORECASE,
)
_PREPOSITIONS = frozenset(
    """at about above across after against along among around before behind below beside
    between beyond by despite during except for from in inside into near of off on onto per
    since than through throughout till toward towards under until upon via with within without
    plus""".split()  # noqa: SIM905
)
_NAME_GLUE = frozenset({"of", "and", "the", "de", "la", "le", "von", "van", "&", "upon", "on"})


def trim(item: str) -> str:
    """An option's head clause: its label ("Option A is to"), a leading "to"/"we"/"us to" and
    what follows its first clause boundary (cost, reason, detail) dropped."""
    text = re.sub(r"\s+", " ", item).strip(" \t,;:.!\"'“”")
    text = _LEAD_IN.sub("", text, count=1).strip()
    text = _PRONOUN_LEAD.sub("", text, count=1).strip()
    for boundary in _BOUNDARY.finditer(text if len(text.split()) > _ONE_CLAUSE else ""):
        if len(text[: boundary.start()].split()) >= 3:
            text = text[: boundary.start()]
            break
    if text.count("(") > text.count(")"):
        text += ")"
    text = text.strip(" ,;:.!\"'“”")
    return text[:1].upper() + text[1:] if text else text


def _is_verb(word: str, *, ing: bool) -> bool:
    """Whether a word is a verb in its base form (or -ing form when ``ing``): "Sell", "Merge",
    "Repower" (re- + a verb), "Life-extend" (the last part of a compound)."""
    word = word.lower().strip("\"'“”()")
    if "-" in word:
        word = word.rsplit("-", 1)[1]
    lemmas = word_classes()(word).get("VERB", ())
    if word in lemmas or (ing and word.endswith("ing") and lemmas):
        return True
    if word.startswith("re") and len(word) > 4 and not lemmas:
        return _is_verb(word[2:], ing=ing)
    return False


def _is_name(words: list[str]) -> bool:
    """Whether words are only a name or a place ("Northern Ireland", "Bilbao"): capitalised,
    joined by "of", "and", "the" at most, and none of them a verb."""
    content = [w for w in words if w.lower() not in _NAME_GLUE]
    return (
        bool(content)
        and all(w[:1].isupper() for w in content)
        and not any(_is_verb(w, ing=False) for w in content)
        and (len(content) >= 2 or not word_classes()(content[0].lower()))
    )


_ATTRIBUTE = re.compile(r"^(?P<key>[^:]{1,40}?)\s*:\s+(?P<value>\S.*)$")
"""A "Label: value" line: "Capital required: £1.3m", "Timing: ready in 2027"."""
_AMOUNT = re.compile(
    r"^(?:[$€£¥]|\d|(?:one|two|three|four|five|six|seven|eight|nine|ten|twelve|twenty|a\s+few|"
    r"several|about|around|roughly|approximately|up\s+to|over|under|nearly|almost|at\s+least)\b)",
    re.IGNORECASE,
)
"""A value that is an amount: a figure, a number word or an approximate one."""


def _leads_with_verb(words: list[str]) -> bool:
    """Whether words start with a verb that is not also an adjective ("keep the shop", not
    "ready in 2027")."""
    return bool(words) and _is_verb(words[0], ing=False) and not _is_adjective(words[0])


def is_attribute(item: str) -> bool:
    """Whether an item is a label and its value (a detail of an option or of the client, not a
    course of action): its value is an amount ("Build cost: £4.1m", "Term: three years"), or
    neither its value nor a one-word label is a verb ("Timing: ready for the 2027 harvest").
    "Sell: the whole herd" and "Status quo: keep the shop open" name a course, so they are not."""
    text = _LEAD_IN.sub("", re.sub(r"\s+", " ", item).strip(), count=1)
    found = _ATTRIBUTE.match(text)
    if found is None:
        return False
    key, value = found.group("key").split(), found.group("value")
    if _AMOUNT.match(value):
        return True
    if _leads_with_verb(value.split()):
        return False
    return not (len(key) == 1 and _is_verb(key[0], ing=False))


def _is_adjective(word: str) -> bool:
    classes = word_classes()(word.lower().strip("\"'“”()"))
    return "ADJ" in classes


def judge(label: str, *, named: bool) -> str | None:
    """Why a trimmed candidate is not a plausible course of action, or None when it is.

    Args:
        label: the candidate, trimmed (see `trim`).
        named: the text introduces the list as options (a heading or label "Options", a table
            headed Option, "Option A: …", "the options are …"), so short noun phrases count.
    """
    words = label.split()
    if not words:
        return "empty"
    if "?" in label or _QUESTION_START.match(label) or _QUESTION_CLAUSE.search(label):
        return "a question, not a course of action"
    if words[0].lower() in _PREPOSITIONS:
        return "a qualifier (it starts with a preposition), not a course of action"
    if _ASKS_ADVISER.match(label):
        return "a request to the adviser, not a course of action"
    if _FIGURE_START.match(label) or 2 * len([w for w in words if _DIGIT_TOKEN.search(w)]) > len(
        words
    ):
        return "a figure or measurement, not a course of action"
    if len(words) > MAX_VERB_WORDS or re.search(r"[.!]\s+[A-Z]", label):
        return "a paragraph or over-long clause, not one course of action"
    if words[-1].strip(",;:") in _DANGLING:  # "Supplier A" ends on a name, not "a"
        return "a fragment cut from a sentence"
    if _SECTION.fullmatch(label.rstrip(":")):
        return "a heading, not a course of action"
    if is_attribute(label):
        return "a label and its value (an attribute), not a course of action"
    if _is_verb(words[0], ing=True) and not _FINITE.search(" ".join(words[1:4])):
        return None
    if _FIRST_PERSON.match(label):
        return "a statement about the client, not a course of action"
    if _SECTION.match(label) and len(words) <= 4:
        return "a heading, not a course of action"
    if _is_name(words):
        return "a place or a name, not a course of action"
    if not named:
        return "not led by a verb, and the text does not name it as an option"
    if len(words) > MAX_NOUN_WORDS:
        return "a long phrase without a verb, not one course of action"
    if _FINITE.search(label):
        return "a statement, not a course of action"
    return None
