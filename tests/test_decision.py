"""The client's Decision: the rule reader reads written structure only and refuses the rest
(never a constraint or exclusivity from prose); explicit options and constraints from flags,
TOML and front matter; the ``intake`` command; a refused ``deliberate`` exits 2 and writes
nothing. Sentences here are written for these tests."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hivemind_lab.cli import app
from hivemind_lab.errors import InputError
from hivemind_lab.inputs import DeliberationRequest, build, recorded_decision, request_for
from hivemind_lab.problems import Decision, load_problems, problem_from_text
from hivemind_lab.problems.decision import DecisionRefused, decide, decide_or_refuse
from hivemind_lab.problems.reading import READER_VERSION, read_decision
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
        # options in free prose are the model intake's to read, or the user's to give
        "Should we open a second bakery or expand the current one into the empty unit?",
        "The board must decide whether to enter Germany, France or Spain.",
        "The CEO favours expanding into Poland while the CFO prefers paying down debt.",
        "Should Acme acquire Beta?",
    ],
)
def test_the_reader_refuses_what_is_no_course_of_action(text):
    decision = read_decision(text)
    assert decision.options == () and decision.refusal is not None
    assert decision.options_source == "agents"
    assert decision.reader_version == READER_VERSION


def test_a_refusal_says_what_was_found_and_why_it_was_not_read():
    unnamed = read_decision("Things I keep forgetting:\n- renew the forklift cert\n- call Dad\n")
    assert unnamed.refusal is not None
    assert unnamed.refusal.found == (
        "a list of 2 under 'Things I keep forgetting': not named as options",
    )
    miscounted = read_decision("We have three options:\n- Sell the farm\n- Rent out the land\n")
    assert miscounted.options == () and miscounted.refusal is not None
    assert "announces 3" in miscounted.refusal.found[0]
    prose = read_decision("Should we sell the farm or rent out the land?")
    assert prose.refusal is not None and prose.refusal.found == ()
    assert "writes no options" in prose.refusal.reason


def test_the_reader_reads_written_options_with_their_quotes():
    text = "Our options:\n- Open a second bakery\n- Expand the current one into the empty unit\n"
    decision = read_decision(text)
    assert decision.refusal is None and decision.options_source == "reader"
    assert decision.labels == ("Open a second bakery", "Expand the current one into the empty unit")
    assert all(o.quote and o.quote in text for o in decision.options)


def test_the_reader_reads_no_constraint_and_no_exclusivity_from_prose():
    text = (
        "Our options:\n- Sell the farmland to a developer\n- Lease the farmland to a neighbour\n\n"
        "A regional decree bans selling farmland to developers until 2031. We cannot do both."
    )
    decision = read_decision(text)
    assert decision.labels == (
        "Sell the farmland to a developer",
        "Lease the farmland to a neighbour",
    )
    assert decision.constraints == () and decision.forbidden() == ()
    assert decision.exclusive is None and decision.exclusive_source is None
    assert any("decree" in f.text for f in decision.facts), "it stays a fact"


def test_an_explicit_constraint_binds_the_options_it_names_and_no_other(tmp_path):
    path = tmp_path / "farm.toml"
    path.write_text(
        'id = "farm"\ntitle = "Farm"\nquestion = "What should we do with the farmland?"\n'
        'options = ["Sell the farmland to a developer", "Lease the farmland to a neighbour"]\n'
        "[[constraints]]\n"
        'text = "A regional decree bans selling farmland to developers until 2031."\n'
        'kind = "legal"\nforbids = ["Sell the farmland to a developer"]\n'
        "[[constraints]]\n"
        'text = "Our bank covenant caps any lease of farmland at 40 hectares."\n',
        encoding="utf-8",
    )
    decision = decide(load_problems(tmp_path)[0])
    ban, cap = decision.constraints
    assert (ban.forbids, ban.kind, ban.source) == ((0,), "legal", "toml")
    assert (cap.forbids, cap.limits, cap.kind) == ((), (), "other"), "names none: binds as text"
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
    assert constraint.source == "flag" and constraint.forbids == () and constraint.limits == ()
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
    assert decision.constraints[0].text == "The landlord cannot allow a second press before March."
    assert decision.constraints[0].source == "flag"


def test_intake_refusal_exits_2_with_how_to_give_options():
    text = "Our bakery has 3 shops.\n\nThings to do:\n- Call the landlord\n- Fix the oven\n"
    result = runner.invoke(app, ["intake", text])
    assert result.exit_code == 2
    assert "--option" in result.output and "front matter" in result.output
    # the decision card comes first: why, what was found, and what was read
    assert result.stdout.startswith("Options refused: what the text lists is not written")
    assert "found a list of 2 under 'Things to do': not named as options" in result.stdout
    assert "Facts (3):" in result.stdout and "question.1: Our bakery has 3 shops." in result.stdout
    as_json = runner.invoke(app, ["intake", text, "--json"])
    assert as_json.exit_code == 2
    refusal = Decision.model_validate_json(as_json.stdout).refusal
    assert refusal is not None and refusal.found[0].startswith("a list of 2 under 'Things to do'")


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
    request = request_for(problem_from_text("Options:\n- Repaint the shop\n- Replace the sign\n"))
    assert request.decision is not None and request.decision.labels
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
    request = DeliberationRequest.model_validate({**old, "decision": recorded_decision(old)})
    assert request.options == () and request.options_source == "agents"
    assert request.decision.derived and request.decision.facts == ()


def test_a_request_is_never_read_it_carries_its_decision(monkeypatch):
    def no_reading(*args, **kwargs):
        raise AssertionError("the reader ran")

    monkeypatch.setattr("hivemind_lab.problems.decision.read_decision", no_reading)
    with pytest.raises(InputError) as caught:
        build(
            DeliberationRequest,
            problem="Options:\n- A\n- B\n",
            sufficiency=1,
            feasibility=50,
            density=100,
        )
    assert caught.value.field == "decision" and "intake" in str(caught.value)


def test_decide_uses_the_problem_file_before_the_reader():
    problem = load_problems(PROBLEMS)[0]
    decision = decide(problem)
    assert decision.labels == problem.options and decision.options_source == "toml"
