"""The rule reader on the forms clients write in, each a mechanism: attribute lines are no
options, an option's own section is read once, ordinal sentences name options, a request to the
adviser is no stakeholder's position, exclusivity read through contractions and "could be
combined", and a prohibition linked to the option whose act it names. Texts written for these
tests."""

from __future__ import annotations

import pytest

from hivemind_lab.problems.reading import read_decision
from hivemind_lab.problems.reading.constraints import link
from hivemind_lab.problems.reading.exclusivity import read_exclusivity
from hivemind_lab.problems.reading.plausible import is_attribute, judge, trim


@pytest.mark.parametrize(
    ("item", "attribute"),
    [
        ("Capital required: £1.3m, of which £900,000 borrowed", True),
        ("Timing: ready for the 2027 harvest", True),
        ("Contract term: three years", True),
        ("Option B: rent storage from the co-operative", False),  # a mark, then the option
        ("Status quo: keep the shop open", False),  # a name, then a course of action
        ("Sell: the whole herd at the spring sale", False),
    ],
)
def test_a_label_and_its_value_is_an_attribute_not_a_course_of_action(item, attribute):
    assert is_attribute(item) is attribute
    assert (judge(trim(item), named=True) is not None) is attribute


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
            "and reopen the wheel. Alternatively, the trustees could sell the mill to the "
            "county. A third course would be to lease the mill to a brewery.",
            (
                "Restore the mill race and reopen the wheel",
                "Sell the mill to the county",
                "Lease the mill to a brewery",
            ),
        ),
        (
            "4. Options\n4.1 Three options were assessed.\n4.2 Option 1 is to resurface the car "
            "park.\n4.3 Option 2 is to close the car park and sell the land.\n",
            ("Resurface the car park", "Close the car park and sell the land"),
        ),
    ],
)
def test_options_stated_one_a_sentence_with_their_ordinals_are_read(text, labels):
    decision = read_decision(text)
    assert decision.refusal is None
    assert decision.labels == labels


def test_a_request_to_the_adviser_is_not_a_stakeholders_position():
    text = (
        "The owner proposes to sell the printing business to its managers. The finance "
        "director prefers to close the print works and keep the design studio. The board "
        "wants advice on which of these to back."
    )
    assert read_decision(text).labels == (
        "Sell the printing business to its managers",
        "Close the print works and keep the design studio",
    )


@pytest.mark.parametrize(
    ("sentence", "exclusive"),
    [
        ("We can only afford one of these.", True),
        ("Honestly I can only do one.", True),
        ("We can only open one shop a year.", None),  # a rate, not a choice of one
        ("These aren't all either/or.", False),
        ("We don't have to choose one.", False),
        ("These aren’t mutually exclusive.", False),
        ("Some of these could be combined, for example the first two.", False),
        ("These could not be combined.", None),
    ],
)
def test_exclusivity_is_read_through_contractions_and_named_combinations(sentence, exclusive):
    text = f"We run a garden centre. Should we open a café or add a farm shop? {sentence}"
    assert read_exclusivity(text, ["Open a café", "Add a farm shop"]).exclusive is exclusive


def test_a_prohibition_naming_an_options_act_forbids_it_and_a_limits_mention_does_not():
    options = ["Buy the empty warehouse on Dock Road", "Refit our own depot"]
    banned = "Our lender's covenant says the firm cannot take on any new property acquisition."
    assert link(banned, options) == (0,)
    leases = ["Lease twelve trucks from a dealer", "Buy twelve trucks with a bank loan"]
    capped = "The facility caps net debt at 2.5 times EBITDA; operating leases don't count."
    assert link(capped, leases) != (0,)


@pytest.mark.parametrize(
    "bar",
    [
        "The council refused planning permission in March for converting the stables.",
        "Converting a listed building without consent is a criminal offence.",
        "The trust's deed says the trustees will not permit converting the stables.",
    ],
)
def test_a_refusal_or_an_offence_forbids_the_move_it_names(bar):
    text = f"Should we convert the old stables into a café? {bar} Cash covers 9 months."
    decision = read_decision(text)
    assert decision.labels[0] == "Convert the old stables into a café"
    assert decision.forbidden() == (0,)


def test_a_typed_constraint_that_a_lender_will_not_fund_an_act_forbids_the_option_leading_with_it():
    from hivemind_lab.problems.decision import decide
    from hivemind_lab.problems.loading import problem_from_text

    problem = problem_from_text("Our warehouse lease ends in March. What should we do?")
    decision = decide(
        problem,
        options=["Renew the lease on Unit 4", "Buy the empty unit next door"],
        constraints=["The bank will not lend for any property purchase this year."],
    )
    assert decision.forbidden() == (1,)


def test_a_hard_wrapped_sentence_that_goes_on_with_a_figure_stays_one_fact():
    text = (
        "Should we repair the roof or close the east wing? Visitor numbers were 61,000 last "
        "year, down from\n74,000 in 2019.\n\nBackground\n74 staff work here."
    )
    facts = [f.text for f in read_decision(text).facts]
    assert "Visitor numbers were 61,000 last year, down from 74,000 in 2019." in facts
    assert "74 staff work here." in facts  # a figure after a heading starts its own sentence


def test_a_between_pair_ends_where_a_new_clause_begins():
    pair = read_decision(
        "We are torn between leasing new vans and buying used ones, and the bank meets us on "
        "Friday."
    )
    assert pair.labels == ("Leasing new vans", "Buying used ones")
    places = read_decision(
        "We are deciding between Porto and Valencia for a second office, and the partners "
        "meet on the 14th."
    )
    assert places.labels == () and places.refusal is not None  # places, never the clause


def test_a_prohibition_with_a_way_out_limits_and_never_forbids_the_option_that_meets_it():
    text = (
        "Should we repair the gallery roof or close the east wing? The insurers will not renew "
        "cover for the gallery roof unless repairs begin by March."
    )
    decision = read_decision(text)
    assert decision.labels == ("Repair the gallery roof", "Close the east wing")
    assert decision.forbidden() == ()
    [insurer] = decision.constraints
    assert insurer.limits == (0,)
    banned = read_decision(text.replace("unless repairs begin by March", "from March"))
    assert banned.forbidden() == (0,)  # the same words without the condition rule it out


@pytest.mark.parametrize(
    "label", ["Next steps:", "Actions:", "To do:", "Questions for you:", "Our goals this year:"]
)
def test_a_to_do_list_or_a_list_of_questions_is_no_list_of_options(label):
    text = (
        "Our bakery's lease on Fore Street ends in June. What should we do about the shop?\n\n"
        f"{label}\n- Call the landlord about the rent review\n- Get two quotes for a new oven\n"
    )
    decision = read_decision(text)
    assert decision.labels == () and decision.refusal is not None


def test_positions_stated_as_what_someone_says_or_thinks_we_should_do_are_the_options():
    text = (
        "Our accountant says we should incorporate. My wife thinks we should wait a year. I "
        "think we should just carry on as sole traders and see. The bank said they would lend "
        "us £40k either way."
    )
    assert read_decision(text).labels == (
        "Incorporate",
        "Wait a year",
        "Carry on as sole traders and see",
    )


def test_a_prohibition_naming_what_only_one_options_sentence_names_forbids_that_option():
    """The label is the option's head clause; the detail the ban speaks of is later in its
    sentence ("…, funded by selling the Quarry Lane site")."""
    text = (
        "The club has three options. Option 1 is to repair the clubhouse. Option 2 is to build "
        "a new clubhouse on the school field at a cost of £2.1m, funded by selling the Quarry "
        "Lane ground to a developer. Option 3 is to share the rugby club's hall in Elm Park. "
        "The 1962 covenant on the Quarry Lane ground restricts it to sport; the ground cannot "
        "be sold for housing."
    )
    decision = read_decision(text)
    assert decision.labels[1] == "Build a new clubhouse on the school field at a cost of £2.1m"
    assert decision.forbidden() == (1,)


WRAPPED = (
    "Our kitchen in Ripon now cooks for four care homes, and the trust that runs them has asked the\n"
    "Ripon College catering school whether it could take over the evening meals from April.\n"
    "After the review two ways forward have been\n"
    "suggested to us:\n"
    "\n"
    "- Build a second kitchen at the Harrogate home\n"
    "- Buy ready meals from a contract caterer\n"
    "\n"
    "Minutes of the catering committee of the trust board\n"
    "Held in the Ripon office on the first Monday of March\n"
    "\n"
    "Ana: we could also just do fewer hot meals on weekdays and keep the kitchen as it is\n"
    "Ben: Saturday is the busy one though\n"
)


def test_a_hard_wrapped_sentence_is_joined_whatever_its_next_line_starts_with():
    facts = [f.text for f in read_decision(WRAPPED).facts]
    assert (
        "Our kitchen in Ripon now cooks for four care homes, and the trust that runs them has "
        "asked the Ripon College catering school whether it could take over the evening meals "
        "from April." in facts
    )
    assert not any(f.endswith("have been") for f in facts)  # "suggested to us:" is no label
    assert read_decision(WRAPPED).labels == (
        "Build a second kitchen at the Harrogate home",
        "Buy ready meals from a contract caterer",
    )


def test_a_title_line_a_list_and_a_chat_turn_are_never_joined_to_the_line_above():
    facts = [f.text for f in read_decision(WRAPPED).facts]
    assert not any("Board Held" in f or "trust board Held" in f for f in facts)  # a title line
    assert not any("Ben:" in f and "Ana:" in f for f in facts)  # one turn each
    assert not any("caterer Minutes" in f or "home Buy" in f for f in facts)  # list items


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


def test_a_field_line_inside_the_body_is_no_email_header():
    from hivemind_lab.problems.loading import problem_from_text

    note = (
        "# Allotment fees\n"
        "We could raise the plot fee to £60 or keep it at £45, and the treasurer wrote to\n"
        "Re: the water bill, which rose by a third this year.\n"
    )
    assert problem_from_text(note).title == "Allotment fees"
    assert any("Re: the water bill" in f.text for f in read_decision(note).facts)


def test_a_forwarded_email_s_header_is_no_fact_either():
    text = (
        "Can we talk about this on Monday?\n"
        "\n"
        "-------- Original Message --------\n"
        "From: Harbour Marina <berths@example.net>\n"
        "Date: 2 February 2026\n"
        "\n"
        "Your berth licence ends on 31 March. We can renew it for one year at £2,400 or for three "
        "years at £6,300.\n"
    )
    facts = [f.text for f in read_decision(text).facts]
    assert "Your berth licence ends on 31 March." in facts
    assert not any("Original Message" in f or "berths@example.net" in f for f in facts)


def test_a_sentence_that_leads_into_a_list_is_no_fact():
    facts = [f.text for f in read_decision(WRAPPED).facts]
    assert not any(f.endswith(":") for f in facts)  # "… have been suggested to us:"
    assert any(f.startswith("Our kitchen in Ripon") for f in facts)


def test_lines_of_one_item_each_are_not_joined_though_they_end_with_no_stop():
    text = (
        "Options\n"
        "Sell the whole flock at the autumn sale and rent the grazing to the estate\n"
        "Keep the ewes and hand the lambing over to our neighbour's son next spring\n"
        "Lease the farm to the water company for ten years and keep the farmhouse\n"
    )
    facts = [f.text for f in read_decision(text).facts]
    assert len(facts) == 3 and all(len(f.split()) < 16 for f in facts)
