"""Yes/no decisions: one move weighed against declining it.

"Should Acme acquire Beta?", "whether to go back to school", "Is now the time to open a second
shop?" and "Do we open a second plant?" each pose one move; the client's choice is the move or
"Decline to …" it. "Do we …?" asks about a move only when its verb is one: "Do we need a CFO?",
"Do we have enough cash?" ask about the client's state (stative verbs: need, have, know, want …)
and "Do we spend too much?" about how things are, so neither is a decision. Pure text functions.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from hivemind_lab.problems.reading.option_text import MAX_OPTION_CHARS, SUBJECT, clean, lower_first
from hivemind_lab.problems.reading.subjects import word_classes

_YES_NO = (
    re.compile(
        r"^(?i:should|shall|ought)\s+" + SUBJECT + r"\s+(?:(?i:to)\s+)?(?P<move>[^?]{3,160})\??$"
    ),
    re.compile(r"\b(?i:whether)\s+(?:or\s+not\s+)?to\s+(?P<move>[^?.;]{3,160})[?.]?$"),
    re.compile(  # "Is now the time to …?", "Is it the right moment for us to …?"
        r"^(?i:is)\s+(?i:now|it|this|today)\s+(?i:the\s+|a\s+)?(?i:(?:right|best|good)\s+)?"
        r"(?i:time|moment)\s+(?i:(?:for\s+\S+(?:\s+\S+)?\s+)?to)\s+(?P<move>[^?]{3,160})\?$"
    ),
)
_DO = re.compile(r"^(?i:do)\s+(?i:we|i)\s+(?P<move>[^?]{3,160})\?$")
"""'Do we X?': a decision only when X is a course of action (see `is_move`) and the client
asks about itself ("Do our customers buy online?" asks about someone else's habits)."""
_STATIVE = frozenset(
    """need have know want like love believe think understand mean own owe deserve matter seem
    feel hope wish prefer remember care agree see hear exist belong contain consist depend
    include lack require cost mind doubt trust suppose expect recognise recognize""".split()  # noqa: SIM905
)
"""Verbs of being, having, knowing and wanting: they state how things are, never a move."""
_HOW_THINGS_ARE = re.compile(
    r"\b(?:too|enough|really|actually|already|still|currently|usually|often|ever|always|"
    r"sufficiently|well)\b",
    re.IGNORECASE,
)
"""Degree and frequency words: "Do we spend too much on rent?" asks a diagnosis."""
_CONDITION = re.compile(
    r",?\s+(?:and\s+if\s+so|given|considering|despite|in\s+light\s+of|in\s+view\s+of|"
    r"now\s+that|because|since|while)\b.*$",
    re.IGNORECASE,
)


def is_move(move: str) -> bool:
    """Whether a "do we" question's predicate is a course of action: it starts with a verb in
    its base form that is not stative, and asks nothing about degree or frequency."""
    first = move.split()[0].lower().strip(",;:")
    lemmas = word_classes()(first)
    return (
        first in lemmas.get("VERB", ())
        and first not in _STATIVE
        and not _HOW_THINGS_ARE.search(move)
    )


def yes_no(said: Sequence[str]) -> list[str]:
    """A yes/no decision ("Should Acme acquire Beta?", "whether to go back to school") weighs
    the move against declining it; its conditions ("given 2.4x leverage") are facts."""
    for sentence in reversed(said):
        text = sentence.strip()
        matches = [m for pattern in _YES_NO if (m := pattern.search(text))]
        do = _DO.search(text)
        if do and is_move(do.group("move")):
            matches.append(do)
        for match in matches:
            if not sentence.rstrip().endswith("?") and "," in match.group("move"):
                continue  # "Should the merger fail, we would …" is a condition, not a question
            move = clean(_CONDITION.sub("", match.group("move")))
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
    return f"Decline to {lower_first(move)}"[:MAX_OPTION_CHARS]
