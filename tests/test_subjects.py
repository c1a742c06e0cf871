"""A decision question's subject ends where its verb begins, however many words it has."""

from __future__ import annotations

import pytest

from hivemind_lab.problems.reading.options import extract_options
from hivemind_lab.problems.reading.subjects import JOINER, subject_length, tie_subjects


@pytest.mark.parametrize(
    ("question", "options"),
    [
        ("Should the regional grocer cut prices?", ("Cut prices", "Decline to cut prices")),
        (
            "Should a small bakery open a second shop?",
            ("Open a second shop", "Decline to open a second shop"),
        ),
        ("Should the oil major exit refining?", ("Exit refining", "Decline to exit refining")),
        (
            "Should the city build a new bridge?",
            ("Build a new bridge", "Decline to build a new bridge"),
        ),
        ("Should its founder retire?", ("Retire", "Decline to retire")),
        ("Should our small firm enter Poland or Spain?", ("Enter Poland", "Enter Spain")),
        (
            "Should the city council raise taxes, cut services or borrow?",
            ("Raise taxes", "Cut services", "Borrow"),
        ),
        ("Whether the regional grocer should cut prices or exit.", ("Cut prices", "Exit")),
        (
            "Should the hospital trust merge with its neighbour or stay independent?",
            ("Merge with its neighbour", "Stay independent"),
        ),
    ],
)
def test_options_do_not_start_inside_the_subject(question, options):
    assert extract_options(question) == options


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


def test_only_subjects_of_several_words_are_tied_and_other_text_is_kept():
    tied = tie_subjects("Should the regional grocer cut prices?", lookup)
    assert tied == f"Should the regional{JOINER}grocer cut prices?"
    assert tie_subjects("Should the grocer cut prices?", lookup) == "Should the grocer cut prices?"
    assert tie_subjects("Prices fell 4 % last year.", lookup) == "Prices fell 4 % last year."
