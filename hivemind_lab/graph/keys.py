"""Comparison keys of subjects, predicates and objects (see docs/design/graph-keys.md).

Two texts that a reader cannot tell apart must get one key, or an invisible character lets a
claim slip past conflict detection (``Pa\\u200bris`` beside ``Paris``) and a look-alike letter
makes a false conflict (Cyrillic ``Раris`` against ``Paris``). A key is the text after Unicode
NFKC, without zero-width, bidi and other format or control characters, case-folded, with the
Latin, Cyrillic and Greek look-alikes of a word that mixes those scripts folded into its
dominant script (a word in one script is never folded: Russian ``кот`` is not Latin ``kot``),
and with whitespace collapsed. The original text is stored as given for display.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections import Counter
from typing import Literal

from hivemind_lab.text import terms

KEYS_VERSION = "2026-12-03"
"""The version of the rules below. Change it with the rules: a store opened later re-keys its
assertions once (`hivemind_lab.graph.rekey`). 2026-12-01: NFKC, invisible characters, look-alikes;
2026-12-03: look-alikes folded only inside words that mix scripts."""

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

Script = Literal["latin", "cyrillic", "greek"]
SCRIPTS: tuple[Script, ...] = ("latin", "cyrillic", "greek")
"""The scripts whose look-alikes are folded, in the order that breaks a tie for dominance."""

# Letters (case-folded) of Latin, Cyrillic and Greek that look alike in common fonts, upper or
# lower case (the uppercase look-alike decides: Cyrillic Н looks like H, so н is h's), one row
# per Latin letter: its Cyrillic look-alikes (the first is the one folded to) and Greek one.
_CONFUSABLES: tuple[tuple[str, str, str], ...] = (
    ("a", "а", "α"),
    ("b", "в", "β"),
    ("c", "с", ""),
    ("d", "ԁ", ""),
    ("e", "е", "ε"),
    ("ë", "ё", ""),
    ("h", "нһ", "η"),
    ("i", "і", "ι"),
    ("ï", "ї", ""),
    ("j", "ј", ""),
    ("k", "к", "κ"),
    ("l", "ӏ", ""),
    ("m", "м", "μ"),
    ("n", "", "ν"),
    ("o", "о", "ο"),
    ("p", "р", "ρ"),
    ("q", "ԛ", ""),
    ("s", "ѕ", ""),
    ("t", "т", "τ"),
    ("w", "ԝ", ""),
    ("x", "х", "χ"),
    ("y", "у", "υ"),
    ("z", "", "ζ"),
)


def _fold_tables() -> dict[Script, dict[int, str]]:
    """For each script, the translation of the other scripts' look-alikes into its letters."""
    tables: dict[Script, dict[int, str]] = {script: {} for script in SCRIPTS}
    for latin, cyrillic, greek in _CONFUSABLES:
        row: dict[Script, str] = {"latin": latin, "cyrillic": cyrillic, "greek": greek}
        for target in SCRIPTS:
            if not row[target]:
                continue
            for source in SCRIPTS:
                if source != target:
                    tables[target].update((ord(ch), row[target][0]) for ch in row[source])
    return tables


_FOLD_INTO = _fold_tables()
_CYRILLIC_OR_GREEK = re.compile(r"[\u0370-\u03ff\u0400-\u052f\u1c80-\u1c8f\u1f00-\u1fff]")


@functools.lru_cache(maxsize=8192)
def script_of(ch: str) -> Script | None:
    """The script of a letter among `SCRIPTS` (None for any other character)."""
    if ch.isascii():
        return "latin" if ch.isalpha() else None
    if not ch.isalpha():
        return None
    name = unicodedata.name(ch, "")
    for script in SCRIPTS:
        if name.startswith(script.upper()):
            return script
    return None


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


def fold_mixed_script(word: str) -> str:
    """A word whose letters mix Latin, Cyrillic and Greek, written in one of its scripts by
    folding the others' look-alikes into it; a word in one script is returned as it is.

    The idea of Unicode's confusable skeleton (UTS #39), applied only where scripts mix: a Latin
    word with one Cyrillic letter (``kоt``) is the Latin word, while Russian ``кот`` and Latin
    ``kot`` stay two words. The script folded into is one that can write every letter of the
    word (``Раrіs`` has a Latin ``r`` no Cyrillic letter looks like, so it is Latin ``paris``);
    among several, or when none can, the one with most letters (a tie goes to the first of
    `SCRIPTS`).
    """
    if len(set(map(script_of, word)) - {None}) < 2:
        return word
    counts = Counter(script for script in map(script_of, word) if script is not None)
    present = [script for script in SCRIPTS if counts[script]]
    writable = [
        target
        for target in present
        if all(script_of(ch) in (None, target) or ord(ch) in _FOLD_INTO[target] for ch in word)
    ]
    target = max(writable or present, key=lambda script: counts[script])
    return word.translate(_FOLD_INTO[target])


def _fold_word(match: re.Match[str]) -> str:
    word = match.group(0)
    return word if word.isascii() else fold_mixed_script(word)


def text_key(text: str) -> str:
    """The comparison key of a subject or object."""
    if text.isascii():  # NFKC, format characters and look-alikes cannot occur: the fast path
        return " ".join(text.translate(_ASCII_CONTROLS).casefold().split())
    flat = strip_invisible(unicodedata.normalize("NFKC", text))
    folded = unicodedata.normalize("NFKC", flat.casefold())
    if _CYRILLIC_OR_GREEK.search(folded):
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


_UNICODE_WORD = re.compile(r"\w+")


def key_terms(key: str) -> list[str]:
    """The words of a key that the query's entity index matches on: the content words
    `hivemind_lab.text.terms` takes (ASCII), plus every word of two or more letters in other
    scripts (``кот``, ``και``, ``café``), which ``terms`` cannot see; a question is keyed and
    split the same way. Scripts written without spaces (Chinese, Japanese) give one word per
    run of letters, so they match only a question word equal to the key's."""
    words = terms(key)
    if not key.isascii():
        words += [w for w in _UNICODE_WORD.findall(key) if not w.isascii() and len(w) > 1]
    return words
