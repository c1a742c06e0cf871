"""The rule reader on the written forms clients use, each a mechanism: an option's own section
is read once, marked and ordinal sentences name options, a list is read only when its lead
names it as options (and counts it right), a sentence's own enumeration after a colon, an
email's header and a list's lead-in are no facts. Texts written for these tests."""

from __future__ import annotations

import pytest

from hivemind_lab.problems.reading import read_decision

BAKERY_SECTIONS = """# Ovens for the bakery

We must decide how to bake for the new wholesale contract before Easter.

## Option A
- Buy a second deck oven for the Mill Lane kitchen
- Capital required: £85,000, of which £60,000 on finance
- Effect on night shifts
- Timing: installed by February

## Option B
- Bake the wholesale bread at a partner bakery in Stroud
- Cost per loaf: 31p

Only one of these will go ahead.
"""


def test_a_list_under_one_option_mark_is_that_options_details_and_its_first_line_the_option():
    decision = read_decision(BAKERY_SECTIONS)
    assert decision.labels == (
        "Buy a second deck oven for the Mill Lane kitchen",
        "Bake the wholesale bread at a partner bakery in Stroud",
    )


@pytest.mark.parametrize(
    ("text", "labels"),
    [
        (
            "We have savings of £40,000 and two ideas. One is to buy the van outright and "
            "repaint it. The other is to lease a new electric van from the dealer. Which?",
            ("Buy the van outright and repaint it", "Lease a new electric van from the dealer"),
        ),
        (
            "The trust has looked at its ways forward. The first is to restore the mill race "
            "and reopen the wheel. The second would be to sell the mill to the county.",
            ("Restore the mill race and reopen the wheel", "Sell the mill to the county"),
        ),
        (
            "4. Options\n4.1 Three options were assessed.\n4.2 Option 1 is to resurface the car "
            "park.\n4.3 Option 2 is to close the car park and sell the land.\n",
            ("Resurface the car park", "Close the car park and sell the land"),
        ),
        (
            "Two plans are on the table. Plan A: close the depot. Plan B: lease it out.",
            ("Close the depot", "Lease it out"),
        ),
    ],
)
def test_options_stated_one_a_sentence_with_their_marks_or_ordinals_are_read(text, labels):
    decision = read_decision(text)
    assert decision.refusal is None
    assert decision.labels == labels


@pytest.mark.parametrize(
    ("lead", "read"),
    [
        ("As I see it, I have three choices:", True),
        ("The trustees have been looking at three possibilities:", True),
        ("Our options are these:", True),
        ("I have two choices:", False),  # it announces two and lists three
        ("What I could do:", False),  # a lead that does not name them as options
        ("Next steps:", False),
    ],
)
def test_a_list_is_read_only_when_its_lead_names_it_as_options_and_counts_it_right(lead, read):
    text = (
        "Dear Ms Osei,\n\nMy father is 81 and lives alone.\n\n"
        f"{lead}\n\n1. Reduce my hours to three days a week\n"
        "2. Apply for a 12-month unpaid career break\n3. Stay full-time and pay for care visits\n"
    )
    decision = read_decision(text)
    assert (decision.refusal is None) is read
    if read:
        assert decision.labels[0] == "Reduce my hours to three days a week"


@pytest.mark.parametrize(
    ("text", "labels"),
    [
        (
            "Priya has three offers: a day-shift role at St Anne's, a travel-nursing agency "
            "contract, or a fully funded nursing degree. Which should she take?",
            (
                "A day-shift role at St Anne's",
                "A travel-nursing agency contract",
                "A fully funded nursing degree",
            ),
        ),
        (
            "An e-bike maker has four paths: premium cargo bikes; licensing its drivetrain; a "
            "subscription service; or a sale to private equity.",
            (
                "Premium cargo bikes",
                "Licensing its drivetrain",
                "A subscription service",
                "A sale to private equity",
            ),
        ),
        (
            "The council must decide how to cut emissions by 2030: (a) electrify the bus fleet, "
            "(b) build cycle lanes, or (c) charge for city-centre parking.",
            ("Electrify the bus fleet", "Build cycle lanes", "Charge for city-centre parking"),
        ),
        ("Priya has three offers: a day-shift role or a degree.", ()),  # two, not three
        ("Our problems are (1) churn at 11% and (2) debt at 3x.", ()),  # no lead names options
        ("The offer: £2.6m for 100%, a three-year contract, the brand kept.", ()),  # one offer
        ("We could (b) sell or (a) hold.", ()),  # marks out of order
    ],
)
def test_a_sentences_own_enumeration_after_a_colon_that_names_it(text, labels):
    assert read_decision(text).labels == labels


def test_a_table_headed_option_and_headings_under_a_heading_that_names_options():
    table = (
        "Which plan should the club adopt?\n\n| Plan | What it means | Cost |\n|---|---|---|\n"
        "| Expand | Build a second pitch on the east field | high |\n| Share | Rent pitches "
        "from the school | low |\n"
    )
    assert read_decision(table).labels == (
        "Expand (build a second pitch on the east field)",
        "Share (rent pitches from the school)",
    )
    assert read_decision("## Choices\n### Expand\nOpen two plants.\n### Hold\nKeep.\n").labels == (
        "Expand",
        "Hold",
    )
    parts = "# Options for growth\n\n## Context\nWe sell 5m units.\n\n## Question\nHow to grow?"
    assert read_decision(parts).labels == ()


def test_an_email_s_subject_is_its_title_and_its_header_lines_are_no_facts():
    from hivemind_lab.problems.loading import problem_from_text

    email = (
        "From: Omar Reyes <omar@example.org>\n"
        "Sent: Tuesday 9 June 2026 08:40\n"
        "To: The allotment committee\n"
        "Cc: Parish clerk\n"
        "Subject: Plot fees for next season\n"
        "\n"
        "Dear all, should we raise the plot fee to £60 or keep it at £45? Water costs rose by a "
        "third this year.\n"
    )
    assert problem_from_text(email).title == "Plot fees for next season"
    facts = [f.text for f in read_decision(email).facts]
    assert "Water costs rose by a third this year." in facts
    assert not any(f.split(":")[0] in {"From", "Sent", "To", "Cc", "Subject"} for f in facts)


def test_a_hard_wrapped_sentence_is_one_fact_and_a_list_s_lead_in_is_none():
    text = (
        "Our kitchen in Ripon cooks for four care homes, and the trust that runs them asked\n"
        "whether the college could take over the evening meals from April.\n"
        "After the review two ways forward have been\n"
        "suggested to us:\n"
        "\n"
        "- Build a second kitchen at the Harrogate home\n"
        "- Buy ready meals from a contract caterer\n"
    )
    decision = read_decision(text)
    assert decision.labels == (
        "Build a second kitchen at the Harrogate home",
        "Buy ready meals from a contract caterer",
    )
    facts = [f.text for f in decision.facts]
    assert facts == [
        "Our kitchen in Ripon cooks for four care homes, and the trust that runs them asked "
        "whether the college could take over the evening meals from April."
    ]


def test_lines_of_one_item_each_are_not_joined_though_they_end_with_no_stop():
    text = (
        "Options\n"
        "Sell the whole flock at the autumn sale and rent the grazing to the estate\n"
        "Keep the ewes and hand the lambing over to our neighbour's son next spring\n"
        "Lease the farm to the water company for ten years and keep the farmhouse\n"
    )
    facts = [f.text for f in read_decision(text).facts]
    assert len(facts) == 3 and all(len(f.split()) < 16 for f in facts)
