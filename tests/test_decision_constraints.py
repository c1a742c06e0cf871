"""The rule reader records as a binding constraint only what binds the decider: a law, a
covenant, a cap, a deadline, something withheld from the client. What others cannot do, what
could not be done in the past, a hypothetical or a denied ban are facts, and must neither be
listed among the constraints nor veto an option. Texts written for these tests."""

from __future__ import annotations

import pytest

from hivemind_lab.problems.decision import decide
from hivemind_lab.problems.loading import problem_from_text
from hivemind_lab.problems.reading import read_decision

QUESTION = "Should the guesthouse add four rooms in the loft or convert the barn into a café? "


def constraint_texts(text: str) -> list[str]:
    return [c.text for c in read_decision(text).constraints]


@pytest.mark.parametrize(
    "fact",
    [
        # others' means and abilities: market facts
        "Most walkers who pass the village cannot afford hotel prices in high season.",
        "Our competitors can't offer evening meals because of their licences.",
        "My sister helps with bookings but can't do any cleaning.",
        "Day visitors who come by coach couldn't find anywhere to eat.",
        # what could not be done in the past
        "The previous owners could not get a drinks licence in 2011.",
        # a hypothetical and a ban that does not exist
        "If the county were to ban holiday lets in the village, the rooms would still earn.",
        "There is no planning cap on rooms in the village.",
    ],
)
def test_what_does_not_bind_the_decider_is_no_constraint(fact):
    assert constraint_texts(QUESTION + fact) == []


@pytest.mark.parametrize(
    "bar",
    [
        "Our loan agreement caps further borrowing at £150,000.",
        "The barn is listed, so its roof cannot be altered.",
        "We cannot close during the summer season under the tourist board grant.",
        "The brewery says it can't supply us with cask beer after May.",
        "The village design code bans any extension above the roof line.",
        "Our bank will not lend for any new building this year.",
        "The planning application must be lodged by 30 June.",
        "The staff were told to expect that the lease bans any change of use.",  # no "if"
    ],
)
def test_a_bar_on_the_decider_itself_is_still_read(bar):
    assert constraint_texts(QUESTION + bar) == [bar]


def test_others_inability_never_vetoes_the_option_that_shares_its_words():
    """Before, a third party's "cannot" shared two words with an option and forbade it."""
    problem = problem_from_text(
        "We run a small guesthouse and must choose what to build next. Rival guesthouses in "
        "the valley cannot convert their barns into cafés."
    )
    options = ["Convert the barn into a café", "Add four rooms in the loft"]
    assert decide(problem, options=options).forbidden() == ()
    barred = problem_from_text(
        "We run a small guesthouse and must choose what to build next. Our barn cannot be "
        "converted into a café: the listing forbids it."
    )
    assert decide(barred, options=options).forbidden() == (0,)


def test_a_bar_that_holds_only_if_something_happens_limits_and_even_if_still_forbids():
    options = ["Sell the orchard to the school", "Build holiday cabins in the orchard"]
    conditional = problem_from_text(
        "We need to choose what to do with the orchard. If we sell the orchard, we cannot "
        "build holiday cabins there."
    )
    decision = decide(conditional, options=options)
    assert decision.forbidden() == ()
    assert [c.limits for c in decision.constraints] == [(1,)]
    lender = problem_from_text(
        "We need to choose what to do with the orchard. The bank will not lend for holiday "
        "cabins in the orchard if our debt passes three times profit."
    )
    assert decide(lender, options=options).forbidden() == ()
    regardless = problem_from_text(
        "We need to choose what to do with the orchard. The covenant forbids building holiday "
        "cabins in the orchard, even if the council agreed."
    )
    assert decide(regardless, options=options).forbidden() == (1,)


def test_an_option_word_inside_another_party_s_name_links_only_to_that_name():
    """ "our choir hall" speaks of the client's own hall, not of the Riverside Choir Hall
    Trust an option would merge with."""
    options = ["Sell the hall to Northgate Homes", "Merge with the Riverside Choir Hall Trust"]
    own = problem_from_text(
        "Which way should the society go? Our choir hall lease cannot be assigned to a "
        "housebuilder."
    )
    assert decide(own, options=options).forbidden() == ()
    named = problem_from_text(
        "Which way should the society go? The Riverside Choir Hall Trust cannot be merged "
        "into another charity under its deed."
    )
    assert decide(named, options=options).forbidden() == (1,)
