"""Exclusive decisions: one of the options, never a sequence — in prompts, in the offline
model's solutions, in the validation of a model's reply, in the CLI, the manifest and reports."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hivemind_lab import Limits
from hivemind_lab.agents.prompts import ONE_OF_RULE, render
from hivemind_lab.agents.schemas import ProposalOutput, ProposeTask
from hivemind_lab.cli import app
from hivemind_lab.llm.base import ChatRequest, ChatResponse
from hivemind_lab.llm.structured import StructuredOutputError, complete_structured
from hivemind_lab.problems import Problem, load_problems, problem_from_text
from tests.support import PROBLEMS, run_free

FARES = Problem(
    id="fares",
    title="Fares",
    question="A city's transit authority loses riders to cars. Should it make buses fare-free "
    "or raise fares by 10% to fund more frequent service?",
    options=("Make buses fare-free", "Raise fares by 10%"),
)


def _solutions(run_dir: Path) -> list[dict]:
    """Every proposal and revision of a run, from its audit trail."""
    out = []
    for line in (run_dir / "audit.jsonl").read_text("utf-8").splitlines():
        record = json.loads(line)
        if record.get("kind") in ("theory.proposal", "theory.revision"):
            out.append(record["payload"])
    return out


def _stances(solution: dict) -> list[str]:
    return [s["stance"] for s in solution.get("stances", [])]


@pytest.mark.parametrize("problem", [FARES, *load_problems(PROBLEMS)], ids=lambda p: p.id)
def test_every_solution_of_an_exclusive_decision_pursues_exactly_one_option(tmp_path, problem):
    limits = Limits(max_rounds=3, max_regenerations=1)
    result = run_free(tmp_path / "run", problem, exclusive=True, limits=limits)
    assert result.exclusive is True
    solutions = _solutions(tmp_path / "run")
    assert solutions
    for solution in solutions:
        stances = _stances(solution)
        assert stances.count("pursue") == 1, solution["title"]
        assert "later" not in stances, solution["title"]
        assert len(stances) == len(problem.options)  # the others are rejected alternatives


def test_a_combinable_decision_may_still_be_sequenced(tmp_path):
    sequenced = 0
    for problem in load_problems(PROBLEMS)[:6]:
        run_free(tmp_path / problem.id, problem, exclusive=False, limits=Limits(max_rounds=2))
        sequenced += sum("later" in _stances(s) for s in _solutions(tmp_path / problem.id))
    assert sequenced > 0


def test_a_yes_no_question_is_never_sequenced(tmp_path):
    problem = problem_from_text(
        "A regional grocer faces a discounter. Should it acquire the discounter?"
    ).model_copy(update={"options": ("Acquire the discounter",)})
    result = run_free(tmp_path / "run", problem, limits=Limits(max_rounds=2))
    assert (result.exclusive, result.exclusive_source) == (True, "problem")
    assert all("later" not in _stances(s) for s in _solutions(tmp_path / "run"))


def _task(exclusive: bool) -> ProposeTask:
    return ProposeTask(
        problem=FARES.question,
        options=FARES.options,
        agent_id="theory-00",
        evidence=(),
        exclusive=exclusive,
    )


def test_the_prompt_of_an_exclusive_decision_carries_the_rule():
    exclusive = render(_task(True)).messages[-1].content
    combinable = render(_task(False)).messages[-1].content
    assert ONE_OF_RULE in exclusive and "choose exactly one option" in exclusive.lower()
    assert ONE_OF_RULE not in combinable
    assert '"exclusive": true' in exclusive


_SEQUENCED = {
    "title": "Make buses fare-free first, then raise fares by 10%",
    "stances": [{"option": 0, "stance": "pursue"}, {"option": 1, "stance": "later"}],
    "recommendations": ["Make buses fare-free first, then raise fares by 10%."],
    "rationale": "",
}
_BOTH = {
    **_SEQUENCED,
    "stances": [{"option": 0, "stance": "pursue"}, {"option": 1, "stance": "pursue"}],
}
_ONE = {
    "title": "Make buses fare-free",
    "stances": [{"option": 0, "stance": "pursue"}, {"option": 1, "stance": "avoid"}],
    "recommendations": ["Make buses fare-free."],
    "rationale": "",
}


class _Scripted:
    """A model that gives its replies in turn and keeps the requests it was sent."""

    backend = "scripted"
    model = "scripted"

    def __init__(self, *replies: dict) -> None:
        self.replies = [json.dumps(r) for r in replies]
        self.requests: list[ChatRequest] = []

    async def complete(self, request: ChatRequest) -> ChatResponse:
        self.requests.append(request)
        return ChatResponse(content=self.replies[len(self.requests) - 1], model=self.model)


async def test_a_sequenced_reply_to_an_exclusive_task_is_repaired_like_a_schema_violation():
    model = _Scripted(_SEQUENCED, _BOTH, _ONE)
    request = render(_task(True))
    done = await complete_structured(model, request, ProposalOutput, context={"exclusive": True})
    assert [s.stance for s in done.value.stances] == ["pursue", "avoid"]
    assert len(done.responses) == 3  # every attempt is kept for the audit trail and the cache
    assert "exclude each other" in model.requests[1].messages[-1].content


async def test_a_reply_that_never_keeps_the_rule_fails_and_says_why():
    model = _Scripted(_BOTH, _BOTH, _BOTH)
    with pytest.raises(StructuredOutputError, match="exclude each other"):
        await complete_structured(
            model, render(_task(True)), ProposalOutput, context={"exclusive": True}
        )


async def test_a_sequence_is_valid_when_the_decision_is_combinable():
    done = await complete_structured(_Scripted(_SEQUENCED), render(_task(False)), ProposalOutput)
    assert [s.stance for s in done.value.stances] == ["pursue", "later"]


def test_cli_exclusive_reaches_manifest_result_and_report(tmp_path):
    out = tmp_path / "run"
    problem = tmp_path / "fares.txt"
    problem.write_text(FARES.question)
    result = CliRunner().invoke(
        app,
        [
            "deliberate",
            "--problem",
            str(problem),
            *("--option", FARES.options[0], "--option", FARES.options[1]),
            "--exclusive",
            *("--backend", "test"),
            "--max-rounds",
            "2",
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    manifest = json.loads((out / "manifest.json").read_text("utf-8"))
    assert manifest["decision"]["exclusive"] is True
    assert manifest["decision"]["exclusive_source"] == "flag"
    stored = json.loads((out / "result.json").read_text("utf-8"))
    assert (stored["exclusive"], stored["exclusive_source"]) == (True, "cli")
    # The decision card states the rule the agents worked under, in both formats.
    for name in ("report.md", "report.html"):
        card = (out / name).read_text("utf-8").lower()
        assert "choose one option" in card and "may be combined" not in card


def test_cli_combinable_overrides_a_one_of_question(tmp_path):
    out = tmp_path / "run"
    result = CliRunner().invoke(
        app,
        [
            "deliberate",
            "--problem",
            "Should Acme either enter Ohio or enter Texas?",
            *("--option", "Enter Ohio", "--option", "Enter Texas"),
            "--combinable",
            *("--backend", "test"),
            "--max-rounds",
            "1",
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    manifest = json.loads((out / "manifest.json").read_text("utf-8"))
    decision = manifest["decision"]
    assert (decision["exclusive"], decision["exclusive_source"]) == (False, "flag")
    card = (out / "report.md").read_text("utf-8").lower()
    assert "options may be combined or sequenced" in card and "choose one option" not in card


def test_a_problem_file_with_a_non_boolean_exclusive_writes_nothing(tmp_path):
    path = tmp_path / "fares.toml"
    path.write_text(
        'id = "fares"\ntitle = "Fares"\nexclusive = "yes"\n'
        'question = "Should the transit authority make buses fare-free or raise fares?"\n'
    )
    out = tmp_path / "run"
    result = CliRunner().invoke(app, ["deliberate", "--problem", str(path), "--out", str(out)])
    assert result.exit_code == 2
    assert "exclusive" in result.output and "true" in result.output
    assert not out.exists()


def test_a_manifest_from_before_exclusivity_reads_as_combinable():
    from hivemind_lab.inputs import recorded_decision

    request = {"problem": "Should Acme acquire Beta?", "sufficiency": 2, "feasibility": 50}
    decision = recorded_decision({**request, "density": 100, "options": ["Acquire Beta"]})
    assert decision.exclusive is None and decision.exclusive_source is None  # combinable
    assert decision.labels == ("Acquire Beta",) and decision.derived
