"""Problem understanding: options from written structure (prose is refused), facts, and one
problem loader."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from hivemind_lab.errors import InputError
from hivemind_lab.inputs import DeliberationRequest, request_for
from hivemind_lab.problems import load_problems, problem_from_text, resolve_problem
from hivemind_lab.problems.decision import decide
from hivemind_lab.problems.reading.facts import extract_facts, fact_snippet
from hivemind_lab.problems.reading.options import extract_options
from tests.support import KNOWLEDGE, PRACTICALITY, PROBLEMS, child_env


@pytest.mark.parametrize(
    ("question", "options"),
    [
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
            "Our options:\n- Sell the business\n- Merge with a rival\n- Stay independent\n",
            ("Sell the business", "Merge with a rival", "Stay independent"),
        ),
        (
            "The firm has two options. Option A: sell the bakery to a chain. Option B: open a "
            "second shop in the town centre.",
            ("Sell the bakery to a chain", "Open a second shop in the town centre"),
        ),
        (
            "We are considering three paths — licensing, a joint venture, or building our own plant.",
            ("Licensing", "A joint venture", "Building our own plant"),
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
        ("The paths are A) hire, B) outsource and C) automate.", ("Hire", "Outsource", "Automate")),
        ("Should we: (i) sell, (ii) hold or (iii) buy more?", ("Sell", "Hold", "Buy more")),
        (
            "We were asked to assess: 1) a price freeze 2) Tiered pricing 3) a 5% rise",
            ("A price freeze", "Tiered pricing", "A 5% rise"),
        ),
        (
            "## Alternatives\n\n| Option | What it means |\n|---|---|\n| Expand | Build a second "
            "pitch on the east field |\n| Share | Rent pitches |\n",
            ("Expand (build a second pitch on the east field)", "Share"),
        ),
        (
            "# Fleet\n\nOur 40 trucks are ageing.\n\n### Option A: Buy electric trucks\nCosts $12m."
            "\n\n### Option B: Refurbish the fleet\nCosts $3m.\n\nWhich should we choose?\n",
            ("Buy electric trucks", "Refurbish the fleet"),
        ),
        # prose, however clear, is the model intake's to read or the user's to give
        ("The board must decide whether to enter Germany, France or Spain.", ()),
        ("Should Velora make or buy its battery packs?", ()),
        ("Should I stay or go?", ()),
        ("Halden's alternatives are to buy it, to license its software, or to build a team.", ()),
        ("The CEO favours expanding into Poland while the CFO prefers paying down debt.", ()),
        ("Should Norrland Timber buy the sawmill?", ()),
        ("The owner could 1) sell, 2) merge with a rival or 3) stay independent.", ()),
        # written structure that is not a list of options
        ("Revenue grew 12 percent in 2025 (3) and margins held.", ()),
        ("What is the cause: pricing or service?", ()),
        ("Our problems are (1) churn at 11% and (2) debt at 3x.", ()),
        ("Two choices: sell or sell.", ()),
        ("# Depot\n\n## Key facts\n\n- Fleet: 80 vans\n- Overtime is 12% of pay\n", ()),
        ("How should Northfield respond to the discounter over the next three years?", ()),
    ],
)
def test_options_are_read_from_written_structure_and_prose_is_refused(question, options):
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


def test_a_problem_without_options_has_them_read_or_says_agents_propose_their_own():
    extracted = request_for(
        problem_from_text("Our options:\n- License the patent\n- Sell the patent\n")
    )
    assert extracted.options_source == "extracted" and len(extracted.options) == 2
    open_ended = request_for(
        problem_from_text("How should we grow?"),
        decision=decide(problem_from_text("How should we grow?"), options_from="agents"),
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
        "A family bakery with 14 months of cash and a 9 percent margin has three options: "
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
    assert manifest["decision"]["options_source"] == "reader"
    assert len(manifest["decision"]["options"]) == 3
    if result["conclusions"]:
        top = result["conclusions"][0]
        options = [o["label"].lower() for o in manifest["decision"]["options"]]
        assert any(o in top["recommendations"][0].lower() for o in options)


def test_markdown_facts_are_statements_not_headings_options_or_questions():
    question = (
        "# The decision\n\nThe mill employs 210 people.\n\n## Options\n\n1. Close the mill\n"
        "2. Sell the mill\n\n## Facts\n\n- Energy costs: up 40% since 2022\n\n"
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
    assert texts == [
        "A bakery with 9% margins is torn between opening a café and selling online.",
        "Rent rises in 2026.",
    ]


def test_a_byte_order_mark_is_not_part_of_a_problem(tmp_path):
    txt = tmp_path / "bom.txt"
    txt.write_bytes("\ufeffÅsa AB weighs a shop in Malmö against a webshop.".encode())
    assert resolve_problem(str(txt)).title.startswith("Åsa AB")
    toml = tmp_path / "bom.toml"
    toml.write_bytes('\ufeffid = "bom"\ntitle = "BOM"\nquestion = "Grow or sell?"\n'.encode())
    assert resolve_problem(str(toml)).id == "bom"


def test_the_sentence_that_lists_the_options_is_no_fact_and_amounts_rank_before_dates():
    question = (
        "Memo of 3 March 2026. A charity with 40% of income from one donor must choose: (a) "
        "merge with a peer, (b) cut programmes, or (c) launch a fundraising drive. The donor "
        "gives 1.2 million a year."
    )
    options = extract_options(question)
    assert options == ("Merge with a peer", "Cut programmes", "Launch a fundraising drive")
    texts = [f.text for f in extract_facts(question, options=options)]
    assert texts == ["The donor gives 1.2 million a year.", "Memo of 3 March 2026."]


def test_a_text_problems_title_is_its_subject_its_first_heading_or_its_first_line():
    assert resolve_problem("# Heading\n\nShould we grow or sell?").title == "Heading"
    assert resolve_problem("Memo\r\nShould we lease or buy the vans?\r\n").title == "Memo"
    email = "From: Ana\nSubject: Van fleet\n\nShould we lease or buy the vans?\n"
    assert resolve_problem(email).title == "Van fleet"


def test_the_fallback_fact_for_an_option_is_an_amount_not_a_date():
    from hivemind_lab.agents.policy.reading import relevant_fact
    from hivemind_lab.problems.decision import Fact

    facts = [
        Fact(id="q.1", text="Prepared for the board on 14 November 2026.", source="question"),
        Fact(id="q.2", text="Debt stands at 2.1 times earnings.", source="question"),
    ]
    fact = relevant_fact("Hire staff", ("Hire staff", "Lease robots"), facts)
    assert fact is not None and fact.id == "q.2"


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
    request = request_for(problem_from_text("Halden may buy Norvik."), options=("Buy Norvik",))
    assert request.options == ("Buy Norvik", "Decline to buy Norvik")
    assert request.options_source == "given"


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

    decision = decide(problem_from_text("Options:\n- A plan\n- B plan\n")).model_dump()
    with pytest.raises(InputError) as caught:
        build(
            DeliberationRequest,
            problem="Should we A or B?",
            sufficiency=2,
            feasibility=50,
            density=100,
            decision={**decision, "exclusive": "maybe"},
        )
    assert caught.value.field == "exclusive"
    assert "true" in str(caught.value) and "false" in str(caught.value)
