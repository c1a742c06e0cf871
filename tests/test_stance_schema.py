"""The reply schema of a proposal or revision among options: one stance per option, in order.

A model that may leave ``stances`` empty states no decision (the bundled local model did so on
every reply), and the engine's calibrations then have nothing to act on. The rendered request's
schema is checked with a JSON-schema validator, as a server that compiles it into a grammar
reads it; that llama-server accepts it is shown by the real local deliberation
(tests/test_local_llm.py), whose proposals carry it.
"""

from __future__ import annotations

import json

import jsonschema
import pytest

from hivemind_lab.agents.prompts import letters_of, render
from hivemind_lab.agents.schemas import (
    CritiqueOutput,
    CritiqueTask,
    DecisionContext,
    ProposalOutput,
    ProposeTask,
    ReceivedCritique,
    ReviseTask,
    SolutionView,
)
from hivemind_lab.llm.structured import response_format_for

OPTIONS = ("Match prices", "Build loyalty", "Sell the chain")


def _context(*, exclusive: bool = False, options: tuple[str, ...] = OPTIONS) -> DecisionContext:
    return DecisionContext(
        problem="What should the grocer do?", options=options, exclusive=exclusive
    )


def _propose(context: DecisionContext) -> ProposeTask:
    return ProposeTask(**dict(context), agent_id="theory-00", evidence=())


def _revise(context: DecisionContext) -> ReviseTask:
    current = ProposalOutput(title="Loyalty", recommendations=["Build loyalty."], rationale="")
    return ReviseTask(
        **dict(context),
        agent_id="theory-00",
        current=current,
        critiques=(ReceivedCritique(critic_id="theory-01", points=()),),
        stubbornness=0.5,
        evidence=(),
    )


def _reply(stances: list[dict[str, object]]) -> dict[str, object]:
    return {
        "title": "Loyalty first",
        "stances": stances,
        "recommendations": ["Build loyalty."],
        "rationale": "From the evidence.",
        "adopted": [],
        "rejected": [],
    }


def _valid(task: ProposeTask | ReviseTask, reply: dict[str, object]) -> bool:
    fmt = render(task).response_format
    assert fmt is not None
    try:
        jsonschema.validate(reply, fmt.json_schema)
    except jsonschema.ValidationError:
        return False
    return True


EVERY = [
    {"option": "A", "stance": "avoid"},
    {"option": "B", "stance": "pursue"},
    {"option": "C", "stance": "later"},
]
"""Options by letter on the wire (prompt version 2026-12-03.1): A is the first option."""


@pytest.mark.parametrize("build", [_propose, _revise])
def test_a_reply_states_one_stance_per_option_in_order(build):
    task = build(_context())
    assert _valid(task, _reply(EVERY))
    assert not _valid(task, _reply([])), "an empty decision must not fit the schema"
    assert not _valid(task, _reply(EVERY[:2])), "an option left out"
    assert not _valid(task, _reply([*EVERY, EVERY[0]])), "an option twice"
    assert not _valid(task, _reply([EVERY[1], EVERY[0], EVERY[2]])), "out of order"
    assert not _valid(task, _reply([{**EVERY[0], "option": "F"}, *EVERY[1:]])), "unknown option"
    assert not _valid(task, _reply([{**s, "option": i} for i, s in enumerate(EVERY)])), (
        "a 0-based index is not an option on the wire"
    )
    reply = _reply(EVERY)
    del reply["stances"]
    assert not _valid(task, reply), "stances are required"


@pytest.mark.parametrize("build", [_propose, _revise])
def test_an_exclusive_decision_offers_no_later(build):
    task = build(_context(exclusive=True))
    one = [{**EVERY[0]}, {**EVERY[1]}, {"option": "C", "stance": "avoid"}]
    assert _valid(task, _reply(one))
    assert not _valid(task, _reply(EVERY)), "later sequences an exclusive option"


def test_the_rest_of_the_schema_is_the_output_models():
    task = _propose(_context())
    fmt = render(task).response_format
    assert fmt is not None
    plain = response_format_for(ProposalOutput).json_schema
    narrowed = fmt.json_schema
    assert narrowed["properties"].keys() == plain["properties"].keys()
    for name, prop in plain["properties"].items():
        if name not in ("stances", "facts_used", "constraints_used"):  # sized to the task
            assert narrowed["properties"][name] == prop, name
    assert not _valid(task, {**_reply(EVERY), "title": ""}), "the model's own bounds still hold"
    assert plain["properties"]["stances"].get("minItems", 0) == 0, "the cached plain schema"


def test_an_open_question_and_other_tasks_keep_the_plain_schema_but_its_sizes():
    open_question = _propose(_context(options=()))
    fmt = render(open_question).response_format
    assert fmt is not None
    plain = response_format_for(ProposalOutput).json_schema
    sized = ("facts_used", "constraints_used")
    assert {k: v for k, v in fmt.json_schema["properties"].items() if k not in sized} == {
        k: v for k, v in plain["properties"].items() if k not in sized
    }
    view = SolutionView(title="Sell", recommendations=("Sell.",))
    critique = CritiqueTask(
        **dict(_context()),
        critic_id="theory-00",
        critic_position=view,
        target_id="theory-01",
        target=view,
        evidence=(),
    )
    fmt = render(critique).response_format
    assert fmt is not None
    plain = response_format_for(CritiqueOutput).json_schema
    assert fmt.json_schema == letters_of(plain, len(OPTIONS)), "only its letters are narrowed"
    assert '"D"' not in json.dumps(fmt.json_schema) and '"C"' in json.dumps(fmt.json_schema)
