"""Comparison keys of subjects, predicates and objects (see docs/design/graph-keys.md).

Two texts that a reader cannot tell apart must get one key, or an invisible character lets a
claim slip past conflict detection (``Pa\\u200bris`` beside ``Paris``) and a look-alike letter
makes a false conflict (Cyrillic ``Раris`` against ``Paris``). A key is the text after Unicode
NFKC, without zero-width, bidi and other format or control characters, case-folded, with
Cyrillic and Greek look-alikes of Latin letters folded inside words that are Latin or made only
of look-alikes, and with whitespace collapsed. The original text is stored as given for display.
"""

from __future__ import annotations

import functools
import re
import unicodedata

_SEP = re.compile(r"[\s_-]+")
_WORDS = re.compile(r"\w+")

_INVISIBLE_EXTRA = frozenset(
    {
        0x034F,  # combining grapheme joiner
        0x115F,  # Hangul choseong filler
        0x1160,  # Hangul jungseong filler
        0x3164,  # Hangul filler
        0xFFA0,  # halfwidth Hangul filler
        0x2800,  # braille pattern blank
        *range(0xFE00, 0xFE10),  # variation selectors
        *range(0xE0100, 0xE01F0),  # variation selectors supplement
    }
)

# Cyrillic and Greek letters (case-folded) that look like a Latin letter in common fonts, upper
# or lower case (the uppercase look-alike decides: Cyrillic Н looks like H, so н keys as h).
_LOOK_ALIKES = str.maketrans(
    {
        "а": "a",
        "в": "b",
        "е": "e",
        "ё": "ë",
        "к": "k",
        "м": "m",
        "н": "h",
        "о": "o",
        "р": "p",
        "с": "c",
        "т": "t",
        "у": "y",
        "х": "x",
        "і": "i",
        "ї": "ï",
        "ј": "j",
        "ѕ": "s",
        "ԁ": "d",
        "һ": "h",
        "ӏ": "l",
        "ԛ": "q",
        "ԝ": "w",
        "α": "a",
        "β": "b",
        "ε": "e",
        "ζ": "z",
        "η": "h",
        "ι": "i",
        "κ": "k",
        "μ": "m",
        "ν": "n",
        "ο": "o",
        "ρ": "p",
        "τ": "t",
        "υ": "y",
        "χ": "x",
    }
)
_FOLDABLE = frozenset(chr(c) for c in _LOOK_ALIKES)


_ASCII_CONTROLS = {c: None for c in range(0x20) if not chr(c).isspace()} | {0x7F: None}


@functools.lru_cache(maxsize=8192)
def _visible(ch: str) -> bool:
    if ord(ch) in _INVISIBLE_EXTRA:
        return False
    category = unicodedata.category(ch)
    if category == "Cf" or category == "Cs" or category == "Co":
        return False  # format (zero-width, bidi, soft hyphen, BOM), surrogates, private use
    return category != "Cc" or ch.isspace()  # control characters, except whitespace


def strip_invisible(text: str) -> str:
    """The text without zero-width, bidi, other format and control characters (whitespace kept)."""
    return "".join(ch for ch in text if _visible(ch))


def _fold_word(match: re.Match[str]) -> str:
    word = match.group(0)
    letters = [ch for ch in word if ch.isalpha()]
    latin = any(ch.isascii() or "LATIN" in unicodedata.name(ch, "") for ch in letters)
    if latin or (letters and all(ch in _FOLDABLE for ch in letters)):
        return word.translate(_LOOK_ALIKES)
    return word


def text_key(text: str) -> str:
    """The comparison key of a subject or object."""
    if text.isascii():  # NFKC, format characters and look-alikes cannot occur: the fast path
        return " ".join(text.translate(_ASCII_CONTROLS).casefold().split())
    flat = strip_invisible(unicodedata.normalize("NFKC", text))
    folded = unicodedata.normalize("NFKC", flat.casefold())
    if not _FOLDABLE.isdisjoint(folded):
        folded = _WORDS.sub(_fold_word, folded)
    return " ".join(folded.split())


@functools.lru_cache(maxsize=4096)
def predicate_key(predicate: str) -> str:
    """The comparison key of a predicate: a text key with words joined by ``_`` (so ``is a``,
    ``is-a`` and ``IS_A`` are one predicate)."""
    return _SEP.sub("_", text_key(predicate)).strip("_")


def has_visible(text: str) -> bool:
    """Whether the text shows anything: a name made only of invisible, control or space
    characters is refused."""
    return bool(text_key(text))
