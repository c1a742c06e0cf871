"""Problem understanding: options from varied phrasings, facts, and one problem loader."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from hivemind_lab.errors import InputError
from hivemind_lab.inputs import DeliberationRequest, request_for
from hivemind_lab.problems import load_problems, resolve_problem
from hivemind_lab.problems.reading import read_decision
from hivemind_lab.problems.reading.facts import extract_facts, fact_snippet
from hivemind_lab.problems.reading.options import extract_options
from tests.support import KNOWLEDGE, PRACTICALITY, PROBLEMS, child_env


@pytest.mark.parametrize(
    ("question", "options"),
    [
        (
            "The board must decide whether to enter Germany, France or Spain.",
            ("Enter Germany", "Enter France", "Enter Spain"),
        ),
        (
            "An e-bike maker has four paths: premium cargo bikes; licensing its drivetrain; a "
            "subscription service; or a sale to private equity. Its runway is 14 months.",
            (
                "Premium cargo bikes",
                "Licensing its drivetrain",
                "A subscription service",
                "A sale to private equity",
            ),
        ),
        (
            "A nurse has three offers: (1) an ICU post, (2) a travel contract paying 2,400 a "
            "week and (3) a teaching role. Which should she take?",
            ("An ICU post", "A travel contract paying 2,400 a week", "A teaching role"),
        ),
        (
            "Should Meridian respond, and if so, should it launch a low-cost product, acquire "
            "or partner with a low-cost maker, or concentrate on its high-end customers?",
            (
                "Launch a low-cost product",
                "Acquire or partner with a low-cost maker",
                "Concentrate on its high-end customers",
            ),
        ),
        (
            "Should Velora make or buy its battery packs?",
            ("Make its battery packs", "Buy its battery packs"),
        ),
        ("Should I stay or go?", ("Stay", "Go")),
        (
            "The airline faces high-speed rail. It can cut routes, lease smaller jets or partner "
            "with the rail operator. What should it do?",
            ("Cut routes", "Lease smaller jets", "Partner with the rail operator"),
        ),
        (
            "Our options:\n- Sell the business\n- Merge with a rival\n- Stay independent\n",
            ("Sell the business", "Merge with a rival", "Stay independent"),
        ),
        (
            "Halden's alternatives are to buy it, to license its software, or to build an "
            "internal team.",
            ("Buy it", "License its software", "Build an internal team"),
        ),
        ("How should Northfield respond to the discounter over the next three years?", ()),
        ("What should Ashcombe do about the mill, and how should it handle its stakeholders?", ()),
    ],
)
def test_options_are_read_from_varied_phrasings(question, options):
    assert extract_options(question) == options


def test_facts_come_from_client_and_market_data_then_the_questions_figures():
    facts = extract_facts(
        "A firm has 14 months of cash. Should it grow? It is family owned.",
        client_data=[("cd-1", "Revenue 12 million.\nDebt 3 million; covenant at 2.5x.")],
        market_data=[("md-1", "The market grows 4 percent a year.")],
    )
    assert [f.id for f in facts] == ["cd-1.1", "cd-1.2", "md-1.1", "question.1", "question.2"]
    assert all(not f.text.endswith("?") for f in facts)
    assert fact_snippet(facts[0]) == "Revenue 12 million"


def test_every_shipped_problem_lists_its_options():
    for problem in load_problems(PROBLEMS):
        assert 2 <= len(problem.options) <= 8, problem.id
        assert request_for(problem).options_source == "given"


def test_a_request_without_options_reads_them_or_says_agents_propose_their_own():
    extracted = DeliberationRequest(
        problem="Should we license or sell the patent?", sufficiency=1, feasibility=50, density=100
    )
    assert extracted.options_source == "extracted" and len(extracted.options) == 2
    open_ended = DeliberationRequest(
        problem="How should we grow?", sufficiency=1, feasibility=50, density=100
    )
    assert open_ended.options == () and open_ended.options_source == "agents"


def test_problem_argument_forms(tmp_path):
    long_text = (
        "Should the cooperative " + "expand its dairy processing capacity " * 12 + "or wait?"
    )
    assert len(long_text) > 255
    assert resolve_problem(long_text).question == long_text
    txt = tmp_path / "airline.txt"
    txt.write_text("A regional airline faces high-speed rail. Should it cut routes or partner?")
    problem = resolve_problem(str(txt))
    assert problem.id == "airline" and "high-speed rail" in problem.question
    md = tmp_path / "nurse.md"
    md.write_text("# Three offers\n\nShould Dana take the ICU post or the teaching role?\n")
    assert resolve_problem(str(md)).title == "Three offers"
    assert resolve_problem(str(PROBLEMS / "insurer-analytics-acquisition.toml")).options


@pytest.mark.parametrize("argument", ["missing/problem.txt", "typo.toml", "", "   "])
def test_bad_problem_arguments_name_the_problem(argument):
    with pytest.raises(InputError, match="problem"):
        resolve_problem(argument)


def test_a_directory_is_not_a_problem(tmp_path):
    with pytest.raises(InputError, match="is a directory"):
        resolve_problem(str(tmp_path))


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from hivemind_lab.cli import main; main()", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=child_env(Path("/nonexistent")),
    )


def test_cli_refuses_a_missing_problem_file_and_writes_nothing(tmp_path):
    out = tmp_path / "run"
    done = _cli("deliberate", "--problem", str(tmp_path / "nope.txt"), "--out", str(out))
    assert done.returncode == 2
    assert "nope.txt" in done.stderr and "does not exist" in done.stderr
    assert "Traceback" not in done.stderr
    assert not out.exists()
    blank = _cli("deliberate", "--problem", "", "--out", str(out))
    assert blank.returncode == 2 and "problem" in blank.stderr and "Traceback" not in blank.stderr
    assert not out.exists()


@pytest.mark.slow
def test_cli_runs_a_plain_text_problem_file(tmp_path):
    problem = tmp_path / "bakery.txt"
    problem.write_text(
        "A family bakery with 14 months of cash and a 9 percent margin must choose whether to "
        "open a second shop, sell wholesale to cafes, or launch online ordering. Which?"
    )
    out = tmp_path / "run"
    done = _cli(
        "deliberate",
        "--problem",
        str(problem),
        "--kb",
        str(KNOWLEDGE),
        "--practicality-kb",
        str(PRACTICALITY),
        "--out",
        str(out),
    )
    assert done.returncode == 0, done.stderr
    import json

    result = json.loads((out / "result.json").read_text())
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["request"]["options_source"] == "extracted"
    assert len(manifest["request"]["options"]) == 3
    if result["conclusions"]:
        top = result["conclusions"][0]
        options = [o.lower() for o in manifest["request"]["options"]]
        assert any(o in top["recommendations"][0].lower() for o in options)


@pytest.mark.parametrize(
    ("question", "options"),
    [
        (
            "The firm has two options. Option A: sell the bakery to a chain. Option B: open a "
            "second shop in the town centre.",
            ("Sell the bakery to a chain", "Open a second shop in the town centre"),
        ),
        (
            "Management is deciding among a price cut, a loyalty scheme and a new store format.",
            ("A price cut", "A loyalty scheme", "A new store format"),
        ),
        (
            "We are considering three paths — licensing, a joint venture, or building our own plant.",
            ("Licensing", "A joint venture", "Building our own plant"),
        ),
        (
            "The owner could 1) sell, 2) merge with a rival or 3) stay independent.",
            ("Sell", "Merge with a rival", "Stay independent"),
        ),
        ("Revenue grew 12 percent in 2025 (3) and margins held.", ()),
    ],
)
def test_more_phrasings_of_options(question, options):
    assert extract_options(question) == options


@pytest.mark.parametrize(
    ("question", "options"),
    [
        (
            "The trust is weighing a four-day week against a hiring freeze. Staff costs rose "
            "between 2021 and 2024.",
            ("A four-day week", "A hiring freeze"),
        ),
        (
            "Which of these should the lab fund in 2027: a cryo-EM facility, two new "
            "fellowships or a data platform?",
            ("A cryo-EM facility", "Two new fellowships", "A data platform"),
        ),
        (
            "The council must decide how to cut emissions by 2030: (a) electrify the bus "
            "fleet, (b) build cycle lanes, or (c) charge for city-centre parking.",
            ("Electrify the bus fleet", "Build cycle lanes", "Charge for city-centre parking"),
        ),
        (
            "Shall we rent a bigger office, or shall we go fully remote?",
            ("Rent a bigger office", "Go fully remote"),
        ),
        (
            "Should Norrland Timber buy the sawmill?",
            ("Buy the sawmill", "Decline to buy the sawmill"),
        ),
        (
            "Two choices remain. Choice one: raise the fee to 40 dollars. Choice two: cut the "
            "evening classes. Enrolment fell 8 percent.",
            ("Raise the fee to 40 dollars", "Cut the evening classes"),
        ),
        (
            "**Option A: Outsource payroll.** Saves 3 staff.\n\n**Option B: Keep it in house.**",
            ("Outsource payroll", "Keep it in house"),
        ),
        (
            "Should Žofie Nováková open her clinic in Brno or in Ostrava?",
            ("Open her clinic in Brno", "Open her clinic in Ostrava"),
        ),
        ("Revenue doubled between 2019 and 2024.", ()),
        ("Should we sell or sell?", ()),
    ],
)
def test_options_from_weighing_colons_letters_repeated_questions_and_yes_no(question, options):
    assert extract_options(question) == options


def test_a_markdown_list_of_data_is_not_the_options():
    question = (
        "# Depot decision\n\nWe are comparing a second depot with night shifts.\n\n"
        "## Key facts\n\n- Fleet: 80 vans\n- Overtime is 12% of pay\n"
    )
    assert extract_options(question) == ("A second depot", "Night shifts")
    unlabelled = (
        "Should we lease or buy the press?\n\n- Price: 2.1 million\n- Lease: 30,000 a month\n"
    )
    assert extract_options(unlabelled) == ("Lease the press", "Buy the press")
    assert extract_options("Our options:\n- Sell the farm\n- Rent out the land\n") == (
        "Sell the farm",
        "Rent out the land",
    )


def test_options_from_a_markdown_table_whose_first_column_is_the_option():
    question = (
        "Which plan should the club adopt?\n\n| Plan | What it means | Cost |\n|---|---|---|\n"
        "| Expand | Build a second pitch on the east field | high |\n| Share | Rent pitches "
        "from the school | low |\n"
    )
    assert extract_options(question) == (
        "Expand (build a second pitch on the east field)",
        "Share (rent pitches from the school)",
    )


def test_markdown_facts_are_statements_not_headings_options_or_questions():
    question = (
        "# The decision\n\nThe mill employs 210 people.\n\n## Options\n\n1. Close the mill\n"
        "2. Sell the mill\n\n## Facts\n\n- Energy costs: up 40% since 2022\n"
        "| Year | Output |\n|---|---|\n| 2024 | 51,000 tonnes |\n\nWhat should the owners do?"
    )
    options = extract_options(question)
    assert options == ("Close the mill", "Sell the mill")
    texts = [f.text for f in extract_facts(question, options=options)]
    assert texts == [
        "The mill employs 210 people.",
        "Energy costs: up 40% since 2022",
        "2024 — Output: 51,000 tonnes",
    ]


def test_a_restated_option_is_not_a_fact_but_a_figure_beside_the_options_is():
    question = (
        "A bakery with 9% margins is torn between opening a café and selling online.\n"
        "Option 1 — open a café (cost 80,000).\nOption 2 — sell online.\nRent rises in 2026."
    )
    options = extract_options(question)
    assert options == ("Open a café (cost 80,000)", "Sell online")
    texts = [f.text for f in extract_facts(question, options=options)]
    assert texts == ["A bakery with 9% margins.", "Rent rises in 2026."]


def test_a_byte_order_mark_is_not_part_of_a_problem(tmp_path):
    txt = tmp_path / "bom.txt"
    txt.write_bytes("\ufeffÅsa AB weighs a shop in Malmö against a webshop.".encode())
    assert resolve_problem(str(txt)).title.startswith("Åsa AB")
    toml = tmp_path / "bom.toml"
    toml.write_bytes('\ufeffid = "bom"\ntitle = "BOM"\nquestion = "Grow or sell?"\n'.encode())
    assert resolve_problem(str(toml)).id == "bom"


def test_a_text_problems_title_is_the_question_that_names_its_options(tmp_path):
    txt = tmp_path / "clinic.txt"
    txt.write_text(
        "Our clinic saw 14,000 patients in 2025, up 9 percent, and the lease on the main site "
        "runs out in 2027 while two partners plan to retire. Should we renew the lease or "
        "move to the new health centre? Staff are split.\n"
    )
    assert resolve_problem(str(txt)).title == (
        "Should we renew the lease or move to the new health centre?"
    )
    assert resolve_problem("# Heading\n\nShould we grow or sell?").title == "Heading"


def test_a_fact_that_lists_the_options_is_cut_before_them_and_amounts_rank_before_dates():
    question = (
        "Memo of 3 March 2026. A charity with 40% of income from one donor must choose: (a) "
        "merge with a peer, (b) cut programmes, or (c) launch a fundraising drive."
    )
    options = extract_options(question)
    assert options == ("Merge with a peer", "Cut programmes", "Launch a fundraising drive")
    texts = [f.text for f in extract_facts(question, options=options)]
    assert texts[0].startswith("A charity with 40% of income from one donor")
    assert not any(o.casefold() in texts[0].casefold() for o in options)
    assert texts[1] == "Memo of 3 March 2026."


def test_the_fallback_fact_for_an_option_is_an_amount_not_a_date():
    from hivemind_lab.agents.policy.reading import relevant_fact
    from hivemind_lab.problems.decision import Fact

    facts = [
        Fact(id="q.1", text="Prepared for the board on 14 November 2026.", source="question"),
        Fact(id="q.2", text="Debt stands at 2.1 times earnings.", source="question"),
    ]
    fact = relevant_fact("Hire staff", ("Hire staff", "Lease robots"), facts)
    assert fact is not None and fact.id == "q.2"


@pytest.mark.parametrize(
    ("question", "options"),
    [
        (
            "Is it wiser to rent the warehouse or to buy it outright?",
            ("Rent the warehouse", "Buy it outright"),
        ),
        (
            "Would you advise we open in Lyon, Lille or Nantes?",
            ("Open in Lyon", "Open in Lille", "Open in Nantes"),
        ),
        (
            "We are down to two choices - a licensing deal or a spin-out.",
            ("A licensing deal", "A spin-out"),
        ),
        (
            "Should our council ban cars downtown?",
            ("Ban cars downtown", "Decline to ban cars downtown"),
        ),
        ("The paths are A) hire, B) outsource and C) automate.", ("Hire", "Outsource", "Automate")),
        ("Renew or retire the fleet?", ("Renew the fleet", "Retire the fleet")),
        ("Is this a supply problem or a demand problem?", ()),
        ("Should we: (i) sell, (ii) hold or (iii) buy more?", ("Sell", "Hold", "Buy more")),
        (
            "She is unsure whether or not to retrain as a nurse.",
            ("Retrain as a nurse", "Decline to retrain as a nurse"),
        ),
        (
            "Which should the fund back — a bond, a loan or an equity stake?",
            ("A bond", "A loan", "An equity stake"),
        ),
        (
            "Should the Port of Tallinn build a cruise terminal, and if so when?",
            ("Build a cruise terminal", "Decline to build a cruise terminal"),
        ),
        (
            "Should the club sell the ground given debts of 4 million?",
            ("Sell the ground", "Decline to sell the ground"),
        ),
        ("Should we relocate or not?", ("Relocate", "Decline to relocate")),
    ],
)
def test_options_from_advice_dashes_capital_marks_bare_and_conditioned_questions(question, options):
    assert extract_options(question) == options


def _problem_file(tmp_path, body: str, name: str = "p.toml") -> str:
    path = tmp_path / name
    path.write_text('id = "p"\ntitle = "P"\n' + body, encoding="utf-8")
    return str(path)


@pytest.mark.parametrize(
    ("body", "field", "allowed"),
    [
        ('question = "Grow?"\noptions = ["Grow", "grow "]\n', "options", "distinct"),
        ('question = "Grow?"\noptions = ["Grow", "  "]\n', "options", "non-empty"),
        ('question = "   "\n', "question", "non-empty text"),
        ('question = "Grow?"\noptoins = ["A", "B"]\n', "optoins", "options"),
        ('question = "Grow?"\n[suggested]\nfeasibility = 150\n', "feasibility", "1-100"),
    ],
)
def test_a_bad_problem_file_is_refused_naming_file_field_and_allowed_values(
    tmp_path, body, field, allowed
):
    path = _problem_file(tmp_path, body)
    with pytest.raises(InputError) as caught:
        resolve_problem(path)
    message = str(caught.value)
    assert path in message and field in message and "allowed" in message and allowed in message


def test_a_problem_file_that_is_not_utf8_says_so(tmp_path):
    for name in ("p.toml", "p.txt"):
        path = tmp_path / name
        path.write_bytes(b'id = "p"\ntitle = "P"\nquestion = "Caf\xe9?"\n')
        with pytest.raises(InputError, match="not UTF-8"):
            resolve_problem(str(path))


def test_a_single_option_is_weighed_against_declining_it():
    request = DeliberationRequest(
        problem="Halden may buy Norvik.",
        sufficiency=1,
        feasibility=50,
        density=100,
        options=("Buy Norvik",),
    )
    assert request.options == ("Buy Norvik", "Decline to buy Norvik")
    assert request.options_source == "given"


@pytest.mark.parametrize(
    ("question", "options"),
    [
        ("Should we lease or buy the vans", ("Lease the vans", "Buy the vans")),
        ("Should the merger fail, we would lose 20 staff or 30.", ()),
    ],
)
def test_a_typed_question_may_lack_its_question_mark_but_a_condition_is_no_question(
    question, options
):
    assert extract_options(question) == options


def test_a_title_question_is_read_line_by_line():
    assert resolve_problem("Memo\r\nShould we lease or buy the vans?\r\n").title == (
        "Should we lease or buy the vans?"
    )


def test_facts_are_not_cut_at_abbreviations_and_short_figures_count():
    question = "Acme Corp. had revenue of US$4.2bn in 2024. Mr. Smith expects 3.5% growth."
    data = [("cd", "- Headcount: 12,400\n- Confidential")]
    texts = [f.text for f in extract_facts(question, data)]
    assert texts == [
        "Headcount: 12,400",
        "Acme Corp. had revenue of US$4.2bn in 2024.",
        "Mr. Smith expects 3.5% growth.",
    ]


def test_nested_bullets_qualify_their_option_and_are_facts_not_options():
    question = (
        "## Alternatives\n\n- Expand into Poland\n  - needs 4 million\n  - 18 months\n"
        "- Partner with a distributor\n  - no capex\n- Wait until 2027\n"
    )
    options = extract_options(question)
    assert options == ("Expand into Poland", "Partner with a distributor", "Wait until 2027")
    texts = [f.text for f in extract_facts(question, options=options)]
    assert "Expand into Poland: needs 4 million" in texts
    assert "Expand into Poland: 18 months" in texts


def test_a_first_person_decision_gets_the_individual_profile():
    career = "I earn 90,000 at a bank and my partner is moving. Should I quit or stay?"
    assert resolve_problem(career).profile == "individual"
    firm = "We employ 40 people and our margin is 9%. I think we should grow. Grow or sell?"
    assert resolve_problem(firm).profile == "enterprise"
    assert request_for(resolve_problem(career)).profile == "individual"


def test_options_named_by_headings_and_their_facts_carry_the_option():
    question = (
        "# Fleet\n\nOur 40 trucks are ageing.\n\n### Option A: Buy electric trucks\nCosts $12m.\n\n"
        "### Option B: Refurbish the fleet\nCosts $3m.\n\nWhich should we choose?\n"
    )
    options = extract_options(question)
    assert options == ("Buy electric trucks", "Refurbish the fleet")
    texts = [f.text for f in extract_facts(question, options=options)]
    assert texts == [
        "Our 40 trucks are ageing.",
        "Buy electric trucks: Costs $12m.",
        "Refurbish the fleet: Costs $3m.",
    ]
    nested = "## Choices\n### Expand\nOpen two plants.\n### Hold\nKeep as is.\n"
    assert extract_options(nested) == ("Expand", "Hold")
    sections = "# Options for growth\n\n## Context\nWe sell 5m units.\n\n## Question\nHow to grow?"
    assert extract_options(sections) == ()


@pytest.mark.parametrize(
    ("question", "options"),
    [
        (
            "Should we go with Supplier A, Supplier B, or build in-house?",
            ("Go with Supplier A", "Go with Supplier B", "Build in-house"),
        ),
        (
            "Two plans are on the table. Plan A: close the depot. Plan B: lease it out.",
            ("Close the depot", "Lease it out"),
        ),
        (
            "We were asked to assess: 1) a price freeze 2) Tiered pricing 3) a 5% rise",
            ("A price freeze", "Tiered pricing", "A 5% rise"),
        ),
        (
            "What do you advise: merge the charities or share back offices?",
            ("Merge the charities", "Share back offices"),
        ),
        (
            "What are the merits of renting in Porto versus buying in Lisbon?",
            ("Renting in Porto", "Buying in Lisbon"),
        ),
        ("What is the cause: pricing or service?", ()),
        ("Our problems are (1) churn at 11% and (2) debt at 3x.", ()),
    ],
)
def test_options_from_plans_numbered_lists_after_a_colon_and_versus(question, options):
    assert extract_options(question) == options


@pytest.mark.parametrize(
    ("question", "options"),
    [
        # stakeholders' positions are the options
        (
            "The CEO favours expanding into Poland while the CFO prefers paying down debt. "
            "What should the company do?",
            ("Expanding into Poland", "Paying down debt"),
        ),
        (
            "The board wants to sell the logistics arm; the unions want to keep it in-house.",
            ("Sell the logistics arm", "Keep it in-house"),
        ),
        (
            "The founder backs a price cut, whereas the investors prefer a premium tier, and the "
            "COO argues for a wait of six months.",
            ("A price cut", "A premium tier", "A wait of six months"),
        ),
        (
            "The mayor favours trams in Leeds, Bradford and York, but the council wants buses.",
            ("Trams in Leeds, Bradford and York", "Buses"),
        ),
        ("Customers want lower prices. What should we do?", ()),  # one position is no choice
        ("Our largest customer wants a 10% discount, and we need to decide soon.", ()),
        # a comma between adjectives is inside an option
        (
            "Should the foundation give fewer, larger grants or more, smaller ones?",
            ("Give fewer, larger grants", "Give more, smaller ones"),
        ),
        (
            "Should the studio offer a cheap, basic plan or a premium one?",
            ("Offer a cheap, basic plan", "Offer a premium one"),
        ),
        (
            "Should we stay closed, open new stores or sell?",
            ("Stay closed", "Open new stores", "Sell"),
        ),
        # "is it time to X?" weighs X against declining it
        (
            "Is now the time to open a second restaurant?",
            ("Open a second restaurant", "Decline to open a second restaurant"),
        ),
        (
            "Is it time to sell the family farm?",
            ("Sell the family farm", "Decline to sell the family farm"),
        ),
        (
            "Is now the right time for us to raise prices?",
            ("Raise prices", "Decline to raise prices"),
        ),
        # "do we X?" is a decision only when X is a move
        ("Do we open a second plant?", ("Open a second plant", "Decline to open a second plant")),
        (
            "Sales fell 10% in 2025. Do we merge with our rival?",
            ("Merge with our rival", "Decline to merge with our rival"),
        ),
        ("Do we expand into Spain or stay home?", ("Expand into Spain", "Stay home")),
        ("Do we expand, sell or wait?", ("Expand", "Sell", "Wait")),
        ("Do we go public, or do we stay private?", ("Go public", "Stay private")),
        ("Do we need a CFO or a COO?", ()),
        ("Do our customers buy online?", ()),  # someone else's habits, not the client's move
        ("Do we need a CFO?", ()),
        ("Do we have enough cash to expand?", ()),
        ("Do we know our customers well enough?", ()),
        ("Do we spend too much on rent?", ()),
    ],
)
def test_options_from_stakeholder_positions_adjective_lists_and_time_and_do_questions(
    question, options
):
    assert extract_options(question) == options


# -- exclusivity: one of the options, or a plan that combines them --------------------------------


@pytest.mark.parametrize(
    "question",
    [
        "Should the transit authority either make buses fare-free or raise fares by 10%?",
        "The council must choose one of: make buses fare-free, or raise fares by 10%.",
        "Only one of these options can go ahead: (a) a new depot (b) electric buses (c) a tram.",
        "Pick one of the following: (1) a new depot (2) electric buses (3) a tram line.",
        "Should we license the drivetrain instead of building cargo bikes?",
        "Should the clinic hire nurses rather than buy a scanner?",
        "Should we expand to Ohio or Texas, not both?",
        "Expand to Ohio or to Texas? We cannot afford both.",
        "Should Acme acquire Beta?",
        "Whether to go back to school.",
        "Is it time to sell the family farm?",
        "Do we open a second plant?",
    ],
)
def test_one_of_phrasings_make_the_options_exclusive(question):
    request = DeliberationRequest(problem=question, sufficiency=2, feasibility=50, density=100)
    assert request.exclusive is True
    assert request.exclusive_source == "question"


@pytest.mark.parametrize(
    ("question", "exclusive", "source"),
    [
        # no phrasing says it: today's behaviour, options may be sequenced
        ("Should we enter Poland, Czechia or Hungary?", False, "default"),
        (
            "Should the transit authority make buses fare-free or raise fares by 10%?",
            False,
            "default",
        ),
        # background, not the decision: shoppers' habits say nothing of the client's options
        (
            "Shoppers now buy online instead of in store. Should we open a web shop, cut "
            "prices or add a loyalty card?",
            False,
            "default",
        ),
        # allowing both wins over a one-of cue
        ("Should we either enter Ohio or Texas, or both?", False, "question"),
        ("Should we open a web shop and/or cut prices?", False, "question"),
    ],
)
def test_exclusivity_is_read_only_from_clear_phrasings(question, exclusive, source):
    request = DeliberationRequest(problem=question, sufficiency=2, feasibility=50, density=100)
    assert (request.exclusive, request.exclusive_source) == (exclusive, source)


def test_exclusivity_from_the_problem_file_and_an_override_say_where_it_came_from(tmp_path):
    path = tmp_path / "fares.toml"
    path.write_text(
        'id = "fares"\ntitle = "Fares"\nexclusive = true\n'
        'question = "Should the transit authority make buses fare-free or raise fares?"\n'
        'options = ["Make buses fare-free", "Raise fares by 10%"]\n'
    )
    problem = resolve_problem(str(path))
    request = request_for(problem)
    assert (request.exclusive, request.exclusive_source) == (True, "problem")
    combinable = request_for(problem, exclusive=False, exclusive_source="cli")
    assert (combinable.exclusive, combinable.exclusive_source) == (False, "cli")
    from_code = request_for(problem, exclusive=False)
    assert (from_code.exclusive, from_code.exclusive_source) == (False, "request")
    # a yes/no question stated as combinable by its client stays combinable
    yes_no = resolve_problem("Should Acme acquire Beta?")
    assert request_for(yes_no, exclusive=False).exclusive is False


@pytest.mark.parametrize("value", ['"yes"', "1", '"true"'])
def test_a_non_boolean_exclusive_names_the_field_and_its_values(tmp_path, value):
    path = tmp_path / "fares.toml"
    path.write_text(
        f'id = "fares"\ntitle = "Fares"\nexclusive = {value}\n'
        'question = "Should the transit authority make buses fare-free or raise fares?"\n'
    )
    with pytest.raises(InputError) as caught:
        resolve_problem(str(path))
    assert caught.value.field.endswith(": exclusive")
    assert "true" in str(caught.value) and "false" in str(caught.value)


def test_a_non_boolean_exclusive_in_a_request_is_refused():
    from hivemind_lab.inputs import build

    with pytest.raises(InputError) as caught:
        build(
            DeliberationRequest,
            problem="Should we A or B?",
            sufficiency=2,
            feasibility=50,
            density=100,
            exclusive="maybe",
        )
    assert caught.value.field == "exclusive"
    assert "true" in str(caught.value) and "false" in str(caught.value)


@pytest.mark.parametrize(
    "question",
    [
        "Kim: so, open the shop on Sundays or keep Sunday closing?",
        "Well, do we open the shop on Sundays or keep Sunday closing?",
        "Okay, hmm, should we open the shop on Sundays or keep Sunday closing?",
    ],
)
def test_a_discourse_marker_that_opens_a_question_is_no_option(question):
    assert read_decision(question).labels == ("Open the shop on Sundays", "Keep Sunday closing")
