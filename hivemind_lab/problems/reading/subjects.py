"""Where a question's subject ends, for the stand-in's policy (its own course on an open
question): "Should the village bakery | add a café or stay as it is?".

A pattern cannot tell how many words a subject introduced by a determiner has ("the city |
build", "the village bakery | add"), so a dictionary of English word classes decides: the
subject's last word can be a noun and the next word is a verb in its base form (or a modal).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping

_MODALS = frozenset({"should", "shall", "can", "could", "may", "might", "will", "would", "must"})
_MAX_SUBJECT_WORDS = 4

Lemmas = Callable[[str], Mapping[str, tuple[str, ...]]]


@functools.cache
def word_classes() -> Lemmas:
    """English word classes of a word's lemmas (lemminflect), loaded on first use."""
    from lemminflect import getAllLemmas  # ~0.4 s to load: only when a subject needs it

    return getAllLemmas


def subject_length(words: list[str], lemmas: Lemmas | None = None) -> int | None:
    """How many of ``words`` (the words after a determiner) are the subject, or None when no
    split reads as noun then verb. A verb that cannot be a noun wins ("small firm | enter"),
    then one that cannot be an adjective either ("the oil major | exit", not "the oil | major
    exit": such words sit in noun phrases), then the shortest subject ("the city | build")."""
    lookup = lemmas or word_classes()
    best: tuple[bool, bool, int] | None = None
    for k in range(1, min(_MAX_SUBJECT_WORDS, len(words) - 1) + 1):
        word, last = words[k].lower(), words[k - 1]
        forms = lookup(word)
        verb = word in _MODALS or word in forms.get("VERB", ())
        if not verb or not ("NOUN" in lookup(last.lower()) or last[:1].isupper()):
            continue
        key = ("NOUN" in forms, "ADJ" in forms, k)
        if best is None or key < best:
            best = key
    return None if best is None else best[2]
