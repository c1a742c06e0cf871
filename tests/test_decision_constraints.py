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
        "Guests who were unable to book online rang the office instead.",
        "Our regular guests say they can't afford a rise in the room rate.",
        "Rival guesthouses cannot deliver breakfast to the rooms.",
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
        "The planners say they cannot approve a second storey on the barn.",
        "Under the premises licence, customers cannot buy drinks after 11pm.",
        "Our landlord says he cannot extend the lease beyond 2029.",
        "Our suppliers say they cannot deliver the new ovens before March.",
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
    standing = problem_from_text(
        "We need to choose what to do with the orchard. If building holiday cabins in the "
        "orchard breaches our covenant, the bank can call in the loan."
    )
    decision = decide(standing, options=options)  # a covenant in force, not a hypothesis
    assert decision.forbidden() == () and [c.limits for c in decision.constraints] == [(1,)]
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


def test_a_course_the_text_says_would_break_a_stated_cap_is_forbidden_and_one_under_it_limited():
    options = [
        "Take out a bank loan to buy the Selby depot",
        "Rent the Selby depot from the council",
    ]
    text = (
        "We need the Selby depot: take out a bank loan to buy it, or rent it from the council. "
        "Our bank agreement caps borrowing at 2 times EBITDA; a loan for the Selby depot would "
        "take us to {figure} times."
    )
    over = decide(problem_from_text(text.format(figure="2.4")), options=options)
    assert over.forbidden() == (0,)
    under = decide(problem_from_text(text.format(figure="1.7")), options=options)
    assert under.forbidden() == () and [c.limits for c in under.constraints] == [(0,)]


def test_a_share_capped_under_half_forbids_the_option_that_takes_most_of_it():
    text = (
        "Should we {option} or train four more drivers of our own? Our school transport "
        "contract caps routes run by subcontractors at 25% of the timetable."
    )
    most = "hand most of the school routes to subcontractors"
    some = "hand a few school routes to subcontractors"
    for option, forbidden in ((most, (0,)), (some, ())):
        options = [option.capitalize(), "Train four more drivers of our own"]
        decision = decide(problem_from_text(text.format(option=option)), options=options)
        assert decision.forbidden() == forbidden


@pytest.mark.parametrize(
    "lookalike",
    [
        "The Christmas market is open until 23 December.",  # a venue's hours
        "It took us three months to fit out the last rooms.",  # what happened
        "Our guests can afford about £60 a night.",  # others' means
        "A heat pump could save up to £900 a year.",  # a saving
        "We need 30% of customers to come back to break even.",  # a target
        "The cricket season ends in September.",  # nothing the client holds
    ],
)
def test_dates_figures_and_shares_that_bound_nothing_are_no_constraint(lookalike):
    assert constraint_texts(QUESTION + lookalike) == []


@pytest.mark.parametrize(
    "guess",
    [
        "Families with young children may not enjoy a room under the eaves.",
        "A few of our walkers may not notice the café at all.",
        "The barn may not be big enough for twenty covers.",
        "It may not pay to open the café before Easter.",
        "The coach firms may not even stop in the village next year.",
        "Birdwatchers may not come back once the barn is busy, the warden feared.",
        "Our guests may not like the new house rules on noise.",  # a rule named after the guess
        "We might not be able to open the café before Easter.",  # a guess at our own ability
    ],
)
def test_a_may_not_that_guesses_what_others_will_like_or_do_is_no_constraint(guess):
    assert constraint_texts(QUESTION + guess) == []


@pytest.mark.parametrize(
    "rule",
    [
        "Guests may not cook in the rooms.",
        "The barn may not be converted without listed building consent.",
        "Under our tenancy, we may not sell hot food after 9pm.",
        "Staff living on site may not take paying guests of their own.",
        "Staff may not accept tips from guests under the owner's code of conduct.",
    ],
)
def test_a_may_not_that_states_a_rule_is_still_a_constraint(rule):
    assert constraint_texts(QUESTION + rule) == [rule]


def test_an_obligation_with_a_minimum_forbids_only_an_option_that_counts_the_same_thing_under_it():
    options = [
        "Cut the market from twenty stalls to twelve",
        "Keep twenty stalls and raise the pitch fee",
        "Cut opening to two days a week",
    ]
    text = (
        "Should the town market cut from twenty stalls to twelve, keep twenty stalls and raise "
        "the pitch fee, or cut opening to two days a week? The market charter obliges the "
        "council to let at least fifteen stalls on every market day."
    )
    [minimum] = decide(problem_from_text(text), options=options).constraints
    assert minimum.forbids == (0,)  # twelve stalls < fifteen; days are not stalls


def test_a_minimum_per_week_is_not_compared_with_a_level_per_month_nor_a_wish_with_a_rule():
    options = ["Cut home visits to ten visits a month", "Cut home visits to two visits a week"]
    question = "Should we cut home visits to ten visits a month or to two visits a week? "
    rule = "The care contract requires us to make at least three visits a week to each client."
    [minimum] = decide(problem_from_text(question + rule), options=options).constraints
    assert minimum.forbids == (1,)
    wish = "We would need at least three visits a week to keep clients happy."
    assert decide(problem_from_text(question + wish), options=options).constraints == ()


def test_a_minimum_span_of_time_is_not_compared_with_an_option_s_own_span():
    options = ["Lease the barn to the school for three years", "Open the barn on two days a week"]
    text = (
        "Should we lease the barn to the school for three years or open the barn on two days a "
        "week? The restoration grant obliges us to keep the barn in community use for at least "
        "ten years, and to open it on at least three days a week."
    )
    [grant] = decide(problem_from_text(text), options=options).constraints
    assert grant.forbids == (1,)  # three years is no level of use; two days a week is


def test_a_figure_an_option_adds_is_no_level_under_a_minimum():
    options = [
        "Open three branches in the valley",
        "Add two branches a year",
        "Cut the network to three branches",
    ]
    text = (
        "Should the credit union open three branches in the valley, add two branches a year or "
        "cut the network to three branches? Its licence requires it to keep at least five "
        "branches open."
    )
    [licence] = decide(problem_from_text(text), options=options).constraints
    assert licence.forbids == (2,)  # three or two more add to the five; "to three" is a level
