"""The offline model's word lists, read once from the data files in ``lexicon/``.

Each file names where its words come from in its header; words are reduced to Snowball stems
(`hivemind_lab.text.stem`, the project's one word normaliser) when loaded, so a list holds
plain English words and matches their inflections.
"""

from __future__ import annotations

import functools
from importlib import resources

from hivemind_lab.text import stem, word_stems


def _lines(name: str) -> list[str]:
    text = (
        resources.files("hivemind_lab.agents.policy")
        .joinpath("lexicon", f"{name}.txt")
        .read_text("utf-8")
    )
    return [s for line in text.splitlines() if (s := line.split("#", 1)[0].strip())]


@functools.cache
def words(name: str) -> frozenset[str]:
    """The stems of one word list (``lexicon/<name>.txt``, one word a line)."""
    return frozenset(stem(w) for line in _lines(name) for w in line.split())


@functools.cache
def families() -> tuple[frozenset[str], ...]:
    """Action families: stems that stand for the same kind of move in different words."""
    return tuple(frozenset(stem(w) for w in line.split()) for line in _lines("families"))


@functools.cache
def phrases(name: str) -> tuple[tuple[str, ...], ...]:
    """One phrase a line of ``lexicon/<name>.txt``, as Snowball stems in order (stopwords
    kept: "ought to" stays two words)."""
    return tuple(p for line in _lines(name) if (p := word_stems(line)))


@functools.cache
def raw_words(name: str) -> tuple[str, ...]:
    """The words of a list as written (lower case), for building a pattern from them."""
    return tuple(w.casefold() for line in _lines(name) for w in line.split())


def says(name: str, text: str) -> bool:
    """Whether ``text`` contains one of the phrases of ``lexicon/<name>.txt``, its words in
    order and adjacent (as Snowball stems)."""
    run = word_stems(text)
    return any(
        run[i : i + len(p)] == p for p in phrases(name) for i in range(len(run) - len(p) + 1)
    )
