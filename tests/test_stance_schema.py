"""The reply schema of a proposal or revision among options: one stance per option, in order.

A model that may leave ``stances`` empty states no decision (the bundled local model did so on
every reply), and the engine's calibrations then have nothing to act on. The rendered request's
schema is checked with a JSON-schema validator, as a server that compiles it into a grammar
reads it; that llama-server accepts it is shown by the real local deliberation
(tests/test_local_llm.py), whose proposals carry it.
"""

from __future__ import annotations

import jsonschema
import pytest

from hivemind_lab.agents.prompts import render
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
    {"option": 0, "stance": "avoid"},
    {"option": 1, "stance": "pursue"},
    {"option": 2, "stance": "later"},
]


@pytest.mark.parametrize("build", [_propose, _revise])
def test_a_reply_states_one_stance_per_option_in_order(build):
    task = build(_context())
    assert _valid(task, _reply(EVERY))
    assert not _valid(task, _reply([])), "an empty decision must not fit the schema"
    assert not _valid(task, _reply(EVERY[:2])), "an option left out"
    assert not _valid(task, _reply([*EVERY, EVERY[0]])), "an option twice"
    assert not _valid(task, _reply([EVERY[1], EVERY[0], EVERY[2]])), "out of order"
    assert not _valid(task, _reply([{**EVERY[0], "option": 5}, *EVERY[1:]])), "unknown option"
    reply = _reply(EVERY)
    del reply["stances"]
    assert not _valid(task, reply), "stances are required"


@pytest.mark.parametrize("build", [_propose, _revise])
def test_an_exclusive_decision_offers_no_later(build):
    task = build(_context(exclusive=True))
    one = [{**EVERY[0]}, {**EVERY[1]}, {"option": 2, "stance": "avoid"}]
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
        if name != "stances":
            assert narrowed["properties"][name] == prop, name
    assert not _valid(task, {**_reply(EVERY), "title": ""}), "the model's own bounds still hold"
    assert plain["properties"]["stances"].get("minItems", 0) == 0, "the cached plain schema"


def test_an_open_question_and_other_tasks_keep_the_plain_schema():
    open_question = _propose(_context(options=()))
    assert render(open_question).response_format == response_format_for(ProposalOutput)
    view = SolutionView(title="Sell", recommendations=("Sell.",))
    critique = CritiqueTask(
        **dict(_context()),
        critic_id="theory-00",
        critic_position=view,
        target_id="theory-01",
        target=view,
        evidence=(),
    )
    assert render(critique).response_format == response_format_for(CritiqueOutput)
