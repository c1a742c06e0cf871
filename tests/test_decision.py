"""The client's Decision: the rule reader fails closed, reads negated exclusivity and binding
constraints; explicit options from flags, TOML and front matter; the ``intake`` command; a
refused ``deliberate`` exits 2 and writes nothing. Sentences here are written for these tests."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hivemind_lab.cli import app
from hivemind_lab.errors import InputError
from hivemind_lab.inputs import DeliberationRequest, request_for
from hivemind_lab.problems import Decision, load_problems, problem_from_text
from hivemind_lab.problems.decision import DecisionRefused, decide, decide_or_refuse
from hivemind_lab.problems.reading import READER_VERSION, read_decision
from hivemind_lab.problems.reading.plausible import judge, trim
from tests.support import PROBLEMS

runner = CliRunner()


@pytest.mark.parametrize(
    "text",
    [
        # question fragments put to the adviser
        "We run two cafés. Please advise us what to do next, and in what order?",
        "Tell us which to do first: or how to do it?",
        # figures and measurements
        "The vineyard is planted between 300 and 450 metres above sea level.",
        "Headcount could be 1,200 or 1,450 people by spring.",
        # places
        "The board is weighing Lyon against Nantes.",
        # whole paragraphs and statements, listed
        "Things to know:\n- Our revenue grew 12% last year while the team of forty engineers was "
        "stretched over three sites, which meant delays and a lot of overtime for everyone "
        "involved in the launch. More follows.\n- Costs rose by a third.\n",
        "Notes:\n- My brother runs the shop on weekends\n- The landlord is friendly\n",
    ],
)
def test_the_reader_refuses_what_is_no_course_of_action(text):
    decision = read_decision(text)
    assert decision.options == () and decision.refusal is not None
    assert decision.options_source == "agents"
    assert decision.reader_version == READER_VERSION


@pytest.mark.parametrize(
    ("label", "named", "refused"),
    [
        ("Advise us to do", False, True),
        ("In what order", True, True),
        ("850 and 1,300 metres above sea level", True, True),
        ("Northern Portugal", True, True),
        ("Background", True, True),
        ("Sell the orchard to the cooperative", False, False),
        ("A second warehouse", True, False),
        ("A second warehouse", False, True),  # a noun phrase counts only in a list named options
    ],
)
def test_judge_names_why_a_candidate_is_implausible(label, named, refused):
    assert (judge(trim(label), named=named) is not None) is refused


def test_trim_keeps_the_head_clause_of_a_labelled_option():
    long = (
        "Option B is to lease the kiln from a local firm for three years, at about £900 a month "
        "including servicing"
    )
    assert trim(long) == "Lease the kiln from a local firm for three years"


def test_the_reader_reads_plausible_options_with_their_quotes():
    text = "Should we open a second bakery or expand the current one into the empty unit?"
    decision = read_decision(text)
    assert decision.refusal is None and decision.options_source == "reader"
    assert [o.label for o in decision.options] == [
        "Open a second bakery",
        "Expand the current one into the empty unit",
    ]
    assert all(o.quote and o.quote in text for o in decision.options)


def test_a_negated_one_of_phrasing_makes_the_options_combinable():
    text = (
        "These moves are not all mutually exclusive. Should we hire a sales lead or launch a "
        "webshop?"
    )
    decision = read_decision(text)
    assert decision.exclusive is False
    assert decision.exclusive_quote == "These moves are not all mutually exclusive."
    one_of = read_decision("Should we hire a sales lead or launch a webshop? Not both.")
    assert one_of.exclusive is True


def test_a_prohibition_forbids_the_option_it_speaks_of_and_a_limit_only_limits():
    text = (
        "Should we sell the farmland to a developer or lease the farmland to a neighbour? "
        "A regional decree bans selling farmland to developers until 2031. "
        "Our bank covenant caps any lease of farmland to a neighbour at 40 hectares."
    )
    decision = read_decision(text)
    assert decision.labels == (
        "Sell the farmland to a developer",
        "Lease the farmland to a neighbour",
    )
    ban = next(c for c in decision.constraints if "decree" in c.text)
    assert (ban.forbids, ban.kind, ban.source) == ((0,), "legal", "reader")
    cap = next(c for c in decision.constraints if "covenant" in c.text)
    assert cap.forbids == () and cap.limits == (1,)
    assert decision.forbidden() == (0,)


def test_flags_give_options_and_constraints_and_win_over_the_file():
    problem = load_problems(PROBLEMS)[0]
    decision = decide_or_refuse(
        problem,
        options=["Open a kiosk at the station", "Stay as we are"],
        constraints=["The station's operator may not let a kiosk open before 2027."],
        exclusive=True,
    )
    assert decision.labels == ("Open a kiosk at the station", "Stay as we are")
    assert {o.source for o in decision.options} == {"flag"}
    [constraint] = decision.constraints
    assert constraint.source == "flag" and constraint.forbids == (0,)
    assert (decision.exclusive, decision.exclusive_source) == (True, "flag")


@pytest.mark.parametrize(
    ("options", "options_from", "field"),
    [
        ([" "], "reader", "--option"),
        (["A", "a"], "reader", "--option"),
        ([], "nobody", "--options-from"),
    ],
)
def test_bad_flags_are_named_as_the_user_wrote_them(options, options_from, field):
    problem = problem_from_text("Should we sell the van or keep it?")
    with pytest.raises(InputError) as caught:
        decide_or_refuse(problem, options=options, options_from=options_from)
    assert caught.value.field == field


@pytest.mark.parametrize(
    ("options", "flag_says", "row", "row_says"),
    [
        (
            ["Sell the van", "Keep the van", " sell the VAN "],
            "repeats --option 'Sell the van'",
            "option 3",
            "repeats option 1",
        ),
        (["Sell the van", "x" * 161], "161 characters", "option 2", "161 characters"),
        (["Sell the van", "  ", "Keep it"], "blank", "option 2", "blank"),
        ([f"Option {n}" for n in range(9)], "9 options", "options", "9 options"),
    ],
)
def test_flags_and_editor_rows_refuse_the_same_lists_each_named_as_written(
    options, flag_says, row, row_says
):
    """One checker: a list the flags refuse, the editor refuses too, naming the row instead."""
    from hivemind_lab.workbench import DecisionRows, decision_as_read, edited_decision

    problem = problem_from_text("Should we sell the van or keep it?")
    with pytest.raises(InputError) as flag:
        decide_or_refuse(problem, options=options)
    assert flag.value.field == "--option" and flag_says in flag.value.message
    assert flag.value.allowed
    rows = DecisionRows(options=tuple(options))
    with pytest.raises(InputError) as edited:
        edited_decision(rows, read=decision_as_read(problem), problem=problem)
    assert edited.value.field == row and row_says in edited.value.message
    assert edited.value.allowed


def test_a_refusal_is_raised_unless_the_agents_are_asked_to_propose():
    problem = problem_from_text("The orchard lies between 120 and 180 metres above sea level.")
    with pytest.raises(DecisionRefused, match="--option"):
        decide_or_refuse(problem)
    agents = decide_or_refuse(problem, options_from="agents")
    assert agents.options == () and agents.options_source == "agents" and agents.refusal is None


def test_front_matter_options_constraints_and_exclusivity(tmp_path):
    path = tmp_path / "kiln.md"
    path.write_text(
        "---\noptions: [Buy a second kiln, Rent kiln time]\nexclusive: true\n"
        "constraints:\n  - text: The lease forbids a second kiln on site.\n"
        "    kind: legal\n    forbids: [Buy a second kiln]\n---\n"
        "# Kiln capacity\n\nOur pottery turns away 30 orders a month.\n",
        encoding="utf-8",
    )
    result = runner.invoke(app, ["intake", str(path), "--json"])
    assert result.exit_code == 0, result.output
    decision = Decision.model_validate_json(result.stdout)
    assert decision.labels == ("Buy a second kiln", "Rent kiln time")
    assert {o.source for o in decision.options} == {"front_matter"}
    assert (decision.exclusive, decision.exclusive_source) == (True, "front_matter")
    assert decision.constraints[0].forbids == (0,) and decision.constraints[0].kind == "legal"
    assert any("30 orders" in f.text for f in decision.facts)


def test_a_toml_constraint_can_bar_an_option_first_and_name_what_comes_before(tmp_path):
    path = tmp_path / "depot.toml"
    path.write_text(
        'id = "depot"\ntitle = "Depot"\nquestion = "How do we return cash to holders?"\n'
        'options = ["Sale and leaseback of the depot", "Special dividend", "Rights issue"]\n'
        "[[constraints]]\n"
        'text = "The covenant bars any distribution until the leaseback has closed."\n'
        'kind = "financial"\nnot_first = ["Special dividend"]\n'
        'after = "Sale and leaseback of the depot"\n',
        encoding="utf-8",
    )
    result = runner.invoke(app, ["intake", str(path), "--json"])
    assert result.exit_code == 0, result.output
    decision = Decision.model_validate_json(result.stdout)
    (constraint,) = decision.constraints
    assert (constraint.not_first, constraint.after, constraint.forbids) == ((1,), 0, ())
    assert decision.not_first() == (1,) and decision.forbidden() == ()
    shown = runner.invoke(app, ["intake", str(path)])
    assert "Special dividend: not before Sale and leaseback of the depot" in shown.output
    # a decision recorded before not_first existed still reads (defaults)
    raw = json.loads(result.stdout)
    for c in raw["constraints"]:
        del c["not_first"], c["after"]
    old = Decision.model_validate(raw)
    assert old.constraints[0].not_first == () and old.constraints[0].after is None


def test_a_bad_front_matter_key_names_the_file(tmp_path):
    path = tmp_path / "bad.md"
    path.write_text("---\nchoices: [A, B]\n---\nShould we?\n", encoding="utf-8")
    result = runner.invoke(app, ["intake", str(path)])
    assert result.exit_code == 2
    assert str(path) in result.output and "choices" in result.output


def test_intake_json_follows_the_decision_schema_and_flags_are_recorded():
    result = runner.invoke(
        app,
        [
            "intake",
            "Our print shop has one press running at 95% of capacity.",
            "--option",
            "Buy a second press",
            "--option",
            "Outsource large jobs",
            "--constraint",
            "The landlord cannot allow a second press before March.",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    raw = json.loads(result.stdout)
    assert set(raw) >= {"options", "facts", "constraints", "exclusive", "reader_version"}
    decision = Decision.model_validate(raw)
    assert [o.source for o in decision.options] == ["flag", "flag"]
    assert decision.constraints[0].forbids == (0,)


def test_intake_refusal_exits_2_with_how_to_give_options():
    result = runner.invoke(app, ["intake", "Advise us what to do, and in what order?"])
    assert result.exit_code == 2
    assert "--option" in result.output and "front matter" in result.output


def test_a_refused_deliberation_exits_2_and_writes_nothing(tmp_path):
    out = tmp_path / "run"
    result = runner.invoke(
        app,
        [
            "deliberate",
            "--problem",
            "The quarry sits between 200 and 260 metres above sea level.",
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 2
    assert "--option" in result.output
    assert not out.exists()


def test_shipped_problems_keep_their_explicit_options():
    for problem in load_problems(Path("data/problems")):
        request = request_for(problem)
        assert request.options == problem.options
        assert request.decision is not None and request.decision.refusal is None
        assert {o.source for o in request.decision.options} == {"toml"}
        assert request.options_source == "given"


def test_a_recorded_request_keeps_its_decision_and_never_reads_again(monkeypatch):
    request = request_for(problem_from_text("Should we repaint the shop or replace the sign?"))
    recorded = request.model_dump(mode="json")

    def no_reading(*args, **kwargs):
        raise AssertionError("the reader ran again")

    monkeypatch.setattr("hivemind_lab.problems.decision.read_decision", no_reading)
    again = DeliberationRequest.model_validate(recorded)
    assert again.decision == request.decision and again.facts() == request.facts()


def test_an_old_open_question_record_keeps_its_empty_options():
    old = {
        "problem": "Should we repaint the shop or replace the sign?",
        "sufficiency": 2,
        "feasibility": 50,
        "density": 6000,
        "options": [],
        "options_source": "agents",
        "exclusive": False,
        "exclusive_source": "default",
    }
    request = DeliberationRequest.model_validate(old)
    assert request.options == () and request.options_source == "agents"
    assert request.decision is not None and request.decision.derived


def test_decide_uses_the_problem_file_before_the_reader():
    problem = load_problems(PROBLEMS)[0]
    decision = decide(problem)
    assert decision.labels == problem.options and decision.options_source == "toml"
