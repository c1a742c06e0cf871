"""A decision question's subject ends where its verb begins, however many words it has (the
stand-in's own course on an open question addresses that subject)."""

from __future__ import annotations

from hivemind_lab.problems.reading.subjects import subject_length

FORMS = {
    "regional": {"ADJ": ("regional",), "NOUN": ("regional",)},
    "grocer": {"NOUN": ("grocer",)},
    "cut": {"NOUN": ("cut",), "VERB": ("cut",)},
    "prices": {"NOUN": ("price",), "VERB": ("price",)},
    "firm": {"ADJ": ("firm",), "NOUN": ("firm",), "VERB": ("firm",)},
    "small": {"ADJ": ("small",), "NOUN": ("small",)},
    "enter": {"VERB": ("enter",)},
}


def lookup(word: str) -> dict:
    return FORMS.get(word, {})


def test_subject_length_reads_noun_then_base_verb():
    assert subject_length(["regional", "grocer", "cut", "prices"], lookup) == 2
    # "firm" could be a verb, but a verb that cannot be a noun or adjective wins.
    assert subject_length(["small", "firm", "enter", "Poland"], lookup) == 2
    # "prices" is not a base form; nothing reads as noun-then-verb: no split.
    assert subject_length(["grocer", "prices"], lookup) is None
    assert subject_length(["grocer"], lookup) is None
    assert subject_length(["grocer", "should", "cut"], lookup) == 1  # a modal starts the move
