"""Whether the client's options exclude each other: one of them, or a plan that combines them.

Some decisions are one-of choices (make buses fare-free *or* raise fares), others allow a
sequence (enter Poland, then Czechia). Word matching cannot tell in general, so the client says
it (a problem's ``exclusive`` field, ``deliberate --exclusive/--combinable``); when it does
not, only clear phrasings are read here ("either A or B", "choose one of", "rather than", "A or
B, not both"), and a yes/no decision ("X" against "Decline to X") is exclusive by construction.
Anything else keeps the default: options may be combined or sequenced. Pure text functions.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

from hivemind_lab.problems.model import ExclusiveSource as ExclusiveSource
from hivemind_lab.problems.reading.options import declining, question_sentences

_ONE_OF = re.compile(
    r"\b(?:choose|chooses|choosing|pick|picks|picking|select|selects|selecting|decide on|"
    r"go with|settle on|commit to)\s+(?:only\s+|just\s+|exactly\s+)?(?:one|a single)\b|"
    r"\b(?:only|exactly|just)\s+one\s+(?:of|option|alternative|choice|path|course)\b|"
    r"\bonly\s+(?:[a-z]+\s+){1,2}?one\b(?=\s*(?:[.;,!]|$|of\s+(?:these|them|those|the)\b))|"
    r"\bonly\s+one\s+(?:to\s+be|can|could|will|may)\b|"
    r"\bone of the (?:following|options|alternatives|choices|two|three|four)\b|"
    r"\bnot both\b|\bmutually exclusive\b|\bone or the other\b|"
    r"\b(?:cannot|can't|can not|won't|will not)\s+(?:do|have|afford)\s+both\b",
    re.IGNORECASE,
)
"""Phrasings that make the options alternatives wherever they stand: the client takes one."""
_ONE_OF_POSED = re.compile(
    r"\beither\b[^.?!;]*\bor\b|\binstead of\b|\brather than\b", re.IGNORECASE
)
"""Phrasings that make the options alternatives in the sentence that poses the decision only:
in background prose they describe something else ("shoppers buy online instead of in store")."""
_COMBINABLE = re.compile(
    r"\bor both\b|\band/or\b|\bin (?:sequence|combination)\b|\bone after the other\b|"
    r"\b(?:combine|combining|sequence|sequencing)\s+(?:them|these|the options|both)\b",
    re.IGNORECASE,
)
"""Phrasings that allow doing several options ("A or B, or both")."""
_COMBINABLE_NAMED = re.compile(
    r"\b(?:these|they|them|both|options|paths|routes|alternatives|proposals|courses)\b[^.;!?]{0,40}?"
    r"\b(?:can|could|may|might)\s+(?:(?!not\b|never\b)[a-z]+\s+){0,2}?be\s+"
    r"(?:combined|mixed|sequenced|done\s+together)\b|"
    r"\bcombination\s+of\s+(?:the\s+)?(?:options|paths|routes|alternatives|proposals|these)\b|"
    r"\balongside\s+(?:any|all|each|either)\s+of\s+the\s+other",
    re.IGNORECASE,
)
"""Phrasings that allow combining and name the options as what is combined ("some of these
could be combined", "a combination of paths", "alongside any of the other options"), read in
any sentence (a bare "could be combined" may speak of two companies in the background)."""
_DECIDING = re.compile(
    r"\?\s*$|\b(?:whether|should|choose|decide|pick|select|option|alternative|weigh|must)",
    re.IGNORECASE,
)


def is_yes_no(options: Sequence[str]) -> bool:
    """Whether the options are a move and declining it: one of the two, by construction."""
    return any(declining(o) in options for o in options)


_NEGATED_ONE_OF = re.compile(
    r"(?:\b(?:not|never|no\s+need\s+to|need\s+not)|n['’]t)\s+(?:\w+\s+){0,3}?"
    r"(?:mutually\s+exclusive|either[-/ ]or|one\s+or\s+the\s+other|(?:choose|pick|select)\s+"
    r"(?:just\s+|only\s+)?(?:one|between))\b",
    re.IGNORECASE,
)
"""A one-of phrasing denied ("not all mutually exclusive", "we don't have to choose one",
"these aren't either/or"; a contraction's "n't" has no word boundary before it): the options
may be combined."""


class Exclusivity(NamedTuple):
    """Exclusivity as the text states it, with the sentence it was read from."""

    exclusive: bool | None
    quote: str | None = None


def read_exclusivity(question: str, options: Sequence[str] = ()) -> Exclusivity:
    """Exclusivity as the question states it (and where), or None when it does not say.

    A denied one-of phrasing ("not all mutually exclusive") allows combining, as does "or
    both". "Either", "instead of" and "rather than" count only in a sentence that poses the
    decision (a question, or one that names an option or a deciding word), so "shoppers buy
    online instead of in store" in the client's background does not make the options
    exclusive. Allowing both wins over a one-of cue ("either A or B, or both").
    """
    if is_yes_no(options):
        return Exclusivity(True)
    said = question_sentences(question)
    for sentence in said:
        if _NEGATED_ONE_OF.search(sentence):
            return Exclusivity(False, sentence)
    firsts = [" ".join(o.casefold().split()[:3]) for o in options if o.strip()]
    posing = [
        s for s in said if _DECIDING.search(s) or any(f and f in s.casefold() for f in firsts)
    ]
    for sentence in said:
        if _COMBINABLE_NAMED.search(sentence):
            return Exclusivity(False, sentence)
    for sentence in posing:
        if _COMBINABLE.search(sentence):
            return Exclusivity(False, sentence)
    for sentence in posing:
        if _ONE_OF_POSED.search(sentence):
            return Exclusivity(True, sentence)
    for sentence in said:
        if _ONE_OF.search(sentence):
            return Exclusivity(True, sentence)
    return Exclusivity(None)


def read_exclusive(question: str, options: Sequence[str] = ()) -> bool | None:
    """Exclusivity as the question states it, or None when it does not say."""
    return read_exclusivity(question, options).exclusive
