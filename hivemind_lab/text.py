"""Small, deterministic text utilities shared by retrieval, the offline model and the monitor."""

from __future__ import annotations

import functools
import re
import unicodedata
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # loaded with the first stem, not with the module (the CLI's start-up)
    import snowballstemmer

_SENTENCE_END = re.compile(r"(?<=[.!?])[\"'”’)]*\s+(?=[\"'“‘(]?[A-Z0-9])")
_WORD = re.compile(r"[a-z0-9][a-z0-9'-]*[a-z0-9]|[a-z0-9]")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_SPACE = re.compile(r"\s+")

STOPWORDS = frozenset(
    """
    a about above after again against all also am an and any are as at be because been before
    being below between both but by can could did do does doing down during each either else
    few for from further had has have having he her here hers him his how i if in into is it
    its itself just least less may me might more most must my neither no nor not of off on once
    only or other our ours out over own per rather same shall she should so some such than that
    the their theirs them then there these they this those through thus to too under until up
    upon us very via was we were what when where whether which while who whom whose why will
    with within without would yet you your
    """.split()  # noqa: SIM905
)


def normalise(text: str) -> str:
    """Case-fold, NFKC-normalise and collapse whitespace (for comparing claims)."""
    return _SPACE.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


def strip_control(text: str) -> str:
    """Remove control characters (keeps newlines and tabs)."""
    return _CONTROL.sub("", text)


def split_sentences(text: str) -> list[str]:
    """Split prose into sentences at terminal punctuation followed by a capital or digit."""
    flat = _SPACE.sub(" ", text).strip()
    if not flat:
        return []
    return [s.strip() for s in _SENTENCE_END.split(flat) if s.strip()]


def terms(text: str) -> list[str]:
    """Lower-case content words (stopwords removed), in order, for overlap measures."""
    return [w for w in _WORD.findall(text.casefold()) if w not in STOPWORDS and len(w) > 2]


def term_set(text: str) -> frozenset[str]:
    """The set of content words of a text."""
    return frozenset(terms(text))


def overlap(a: frozenset[str], b: frozenset[str]) -> float:
    """Overlap coefficient |a ∩ b| / min(|a|, |b|) (0 when either is empty)."""
    if not a or not b:
        return 0.0
    return len(a & b) / min(len(a), len(b))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """Jaccard similarity of two term sets (1.0 for two empty sets)."""
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


@functools.cache
def _stemmer() -> snowballstemmer.stemmer:
    import snowballstemmer

    return snowballstemmer.stemmer("english")


@functools.lru_cache(maxsize=131072)
def stem(word: str) -> str:
    """The Snowball (Porter 2) stem of one word, case-folded: the project's one word
    normaliser ("acquisitions" → "acquisit", "international" → "internat" ≠ "internal")."""
    return str(_stemmer().stemWord(word.casefold().strip("'-")))


@functools.lru_cache(maxsize=65536)
def stems(text: str) -> tuple[str, ...]:
    """The stems of a text's content words (stopwords removed), in order."""
    return tuple(stem(w) for w in terms(text))


def words(text: str) -> tuple[str, ...]:
    """Every word of a text, case-folded, in order: the words `word_stems` stems, for lists
    whose words must match as written ("hardly" is a negator, "hard" is not)."""
    return tuple(w for w in (w.strip("'-") for w in _WORD.findall(text.casefold())) if w)


def word_stems(text: str, *, skip: frozenset[str] = frozenset()) -> tuple[str, ...]:
    """The stems of every word of a text in order, stopwords kept (for phrases: "build our
    own" must not shrink to "build"), except the words in ``skip``."""
    return tuple(stem(w) for w in words(text) if w not in skip)
