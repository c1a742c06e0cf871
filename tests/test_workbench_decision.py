"""The notebooks' decision editor (`hivemind_lab.workbench`): a decision read from a problem
becomes editable rows, edited rows become exactly the decision a run deliberates, recorded as
edited in a notebook, and a bad row or a refusal is an error naming what to fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from hivemind_lab.agents.testing import TestModel
from hivemind_lab.errors import InputError
from hivemind_lab.inputs import Calibrations, Limits
from hivemind_lab.problems import Problem
from hivemind_lab.problems.loading import problem_from_text
from hivemind_lab.runs.audit import read_records
from hivemind_lab.runs.rundir import RunDir, read_manifest
from hivemind_lab.workbench import (
    DecisionRows,
    decision_as_read,
    decision_notes,
    decision_rows,
    edited_decision,
    run_deliberation,
)
from tests.support import REPO

BAKERY = (
    "Our options:\n- Open a second shop in the old town\n- Sell bread online\n- Keep the single "
    "shop\n\nA regional decree bans new shops in the old town. Cash covers 14 months of costs."
)
REFUSED = "What should we do about our falling sales? Cash covers 14 months of costs."


def test_a_toml_problem_prefills_its_own_options_and_keeps_their_source(grocer: Problem) -> None:
    read = decision_as_read(grocer)
    rows = decision_rows(read)
    assert rows.options == grocer.options
    assert rows.options_text.splitlines() == list(grocer.options)
    assert "the problem file" in decision_notes(read)[0]
    decision = edited_decision(rows, read=read, problem=grocer)
    assert decision.labels == grocer.options
    assert decision.options_source == "notebook"  # confirmed in the editor
    assert {o.source for o in decision.options} == {"toml"}  # each as the file gave it
    assert decision.facts == read.facts


def test_a_refusal_prefills_no_options_says_why_and_blocks_the_run() -> None:
    problem = problem_from_text(REFUSED)
    read = decision_as_read(problem)
    assert read.refusal is not None
    rows = decision_rows(read)
    assert rows.options == ()
    notes = decision_notes(read)
    assert read.refusal.reason in notes[0] and any("one per line" in n for n in notes)
    with pytest.raises(InputError) as refused:
        edited_decision(rows, read=read, problem=problem)
    assert refused.value.field == "options" and read.refusal.reason in str(refused.value)
    # once the user gives options, the same reading deliberates them, with facts read for them
    given = DecisionRows.from_text("Cut prices\n\nOpen a café\n", "", "one_of")
    decision = edited_decision(given, read=read, problem=problem)
    assert decision.labels == ("Cut prices", "Open a café")
    assert decision.exclusive is True and decision.exclusive_source == "notebook"
    assert any("14 months" in f.text for f in decision.facts)


def test_edited_rows_become_the_decision_with_what_the_user_changed_recorded() -> None:
    problem = problem_from_text(BAKERY)
    read = decision_as_read(problem)
    assert read.options_source == "reader" and read.constraints == ()  # none read from prose
    rows = decision_rows(read)
    edited = DecisionRows.from_text(
        rows.options_text.replace("Sell bread online", "Open a bakery café"),
        "A regional decree bans new shops in the old town. | forbids 1\n"
        "The bank covenant caps new debt | forbids 2 | limits 3",
        "combinable",
    )
    decision = edited_decision(edited, read=read, problem=problem)
    assert [(o.label, o.source) for o in decision.options] == [
        ("Open a second shop in the old town", "reader"),
        ("Open a bakery café", "notebook"),
        ("Keep the single shop", "reader"),
    ]
    assert decision.options[0].quote == read.options[0].quote
    ban, covenant = decision.constraints
    assert (ban.source, ban.forbids, ban.quote) == ("notebook", (0,), None)
    assert (covenant.source, covenant.forbids, covenant.limits) == ("notebook", (1,), (2,))
    assert (decision.exclusive, decision.exclusive_source) == (False, "notebook")
    assert decision.refusal is None and decision.options_source == "notebook"


def test_a_constraint_forbidding_option_2_round_trips() -> None:
    problem = problem_from_text(BAKERY)
    read = decision_as_read(problem)
    rows = DecisionRows(
        options=("Open a second shop", "Sell bread online", "Keep the single shop"),
        exclusive="one_of",
        constraints=("Online food sales need a licence we cannot get | forbids 2",),
    )
    decision = edited_decision(rows, read=read, problem=problem)
    assert decision.forbidden() == (1,)
    assert decision_rows(decision) == rows
    assert edited_decision(decision_rows(decision), read=decision, problem=problem) == decision


def test_a_constraint_barring_an_option_first_round_trips() -> None:
    problem = problem_from_text(BAKERY)
    read = decision_as_read(problem)
    rows = DecisionRows(
        options=("Open a second shop", "Sell bread online", "Keep the single shop"),
        exclusive="not_stated",
        constraints=("No second shop before online sales run | not first 1 | after 2",),
    )
    decision = edited_decision(rows, read=read, problem=problem)
    (order,) = decision.constraints
    assert (order.not_first, order.after, order.forbids) == ((0,), 1, ())
    assert decision_rows(decision) == rows
    assert edited_decision(decision_rows(decision), read=decision, problem=problem) == decision


@pytest.mark.parametrize(
    ("options", "constraints", "field", "says"),
    [
        ("Cut prices\nOpen a café\ncut prices", "", "option 3", "repeats option 1"),
        ("Cut prices\n" + "x" * 161, "", "option 2", "161 characters"),
        ("Cut prices", "", "options", "only one"),
        ("A\nB", "A ban | forbids 3", "constraint 1", "3, but 2 options"),
        ("A\nB", "fine | limits 1\nA ban | bans 2", "constraint 2", "neither"),
        ("A\nB", "A ban | forbids two", "constraint 1", "not an option number"),
        ("A\nB", "A ban | forbids 1 | limits 1", "constraint 1", "both forbidden and limited"),
        ("A\nB", " | forbids 1", "constraint 1", "blank"),
        ("A\nB", "A rule | not first 1 | forbids 1", "constraint 1", "forbidden and barred first"),
        ("A\nB", "A rule | after 1", "constraint 1", "'after' names one option"),
    ],
)
def test_a_bad_row_is_named_in_the_error(
    options: str, constraints: str, field: str, says: str
) -> None:
    problem = problem_from_text(BAKERY)
    rows = DecisionRows.from_text(options, constraints, "not_stated")
    with pytest.raises(InputError) as bad:
        edited_decision(rows, read=decision_as_read(problem), problem=problem)
    assert bad.value.field == field and says in bad.value.message


def test_a_run_from_the_editor_records_the_edited_decision(tmp_path: Path, grocer: Problem) -> None:
    read = decision_as_read(grocer)
    rows = decision_rows(read)
    edited = DecisionRows.from_text(
        rows.options_text + "\nSell the stores to the discounter",
        "A franchise contract bars selling the stores | forbids 4",
        "one_of",
    )
    decision = edited_decision(edited, read=read, problem=grocer)
    run_dir, _ = run_deliberation(
        grocer,
        decision=decision,
        sufficiency=2,
        feasibility=1,
        density=8000,
        calibrations=Calibrations(),
        limits=Limits(max_rounds=1, max_regenerations=0),
        run_dir=tmp_path / "run",
        root=REPO,
        model=TestModel(),
    )
    manifest = read_manifest(run_dir)
    assert manifest.decision == decision
    assert manifest.request.options == (*grocer.options, "Sell the stores to the discounter")
    assert manifest.decision.options_source == "notebook"
    assert manifest.decision.options[-1].source == "notebook"
    assert manifest.decision.forbidden() == (3,) and manifest.request.exclusive
    first = next(iter(read_records(RunDir(run_dir).audit_path)))
    assert first.kind == "decision.recorded" and first.payload["decision"]["options_source"] == (
        "notebook"
    )
