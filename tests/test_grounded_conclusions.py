"""A conclusion is built from what its agents said: the engine adds nothing and drops nothing.

Run on every shipped problem and on plain-text problems written here (enterprise and
individual), with the content-free `TestModel`: whatever an agent answers, each conclusion's
recommendations and justifications are those of its member solutions in the audit trail, and
cite only passages and facts the agents were shown. (What the offline stand-in writes in a
recommendation is its own business; tests/test_offline_model.py covers it.)
"""

from __future__ import annotations

import pytest

from hivemind_lab import Calibrations, Limits
from hivemind_lab.agents.testing import TestModel
from hivemind_lab.deliberation import deliberate
from hivemind_lab.inputs import request_for
from hivemind_lab.problems import load_problems, problem_from_text
from hivemind_lab.runs import events
from hivemind_lab.runs.audit import read_records
from hivemind_lab.runs.results import Solution
from tests.support import KNOWLEDGE, PRACTICALITY, PROBLEMS

PLAIN = {
    "airline": (
        "enterprise",
        "Skyline Regional flies 22 short routes; a new high-speed rail line will cut the "
        "Lyon-Paris journey to 1 hour 50 minutes in 2028. The route earns 31 percent of "
        "profit and load factors are already down 4 points. The airline can cut the rail-"
        "exposed routes, lease smaller jets for thinner routes, or partner with the rail "
        "operator on through-tickets. What should it do?",
    ),
    "nurse": (
        "individual",
        "Dana is an ICU nurse with eight years of experience and three job offers: a "
        "charge-nurse post at her current hospital paying 6 percent more, a 13-week travel-"
        "nursing contract paying 2,400 a week with no pension, or a teaching role at a nursing "
        "college at 15 percent less pay. She has 9,000 in savings and a car loan, and her "
        "partner's job is fixed in the city. Which offer should she take?",
    ),
}


def _problems():
    shipped = [pytest.param(p, id=p.id) for p in load_problems(PROBLEMS)]
    plain = []
    for name, (profile, text) in PLAIN.items():
        problem = problem_from_text(text, id=name).model_copy(update={"profile": profile})
        plain.append(pytest.param(problem, id=f"plain-{name}"))
    return shipped + plain


@pytest.mark.parametrize("problem", _problems())
def test_each_conclusion_is_made_of_its_members_solutions(tmp_path, problem):
    request = request_for(problem, feasibility=1)
    result = deliberate(
        request,
        Calibrations(),
        Limits(max_regenerations=1, max_rounds=2),
        model=TestModel(),
        run_dir=tmp_path / "run",
        knowledge_base=KNOWLEDGE,
        practicality_kb=PRACTICALITY,
    )
    assert result.conclusions, result.status
    records = list(read_records(tmp_path / "run" / "audit.jsonl"))
    solutions = {
        s.id: s
        for s in (
            Solution.model_validate(r.payload)
            for r in records
            if isinstance(r.event, events.Proposal)  # revisions too
        )
    }
    shown = set()
    for r in records:
        if isinstance(r.event, events.ModelCall):
            shown |= {w.strip('",') for m in r.payload["prompt"] for w in m["content"].split()}
    fact_ids = {f.id for f in request.facts()}
    for conclusion in result.conclusions:
        members = [solutions[i] for i in conclusion.solution_ids]
        assert {m.agent_id for m in members} == set(conclusion.agents)
        assert conclusion.recommendations in {m.recommendations for m in members}
        for justification in conclusion.justifications:
            member = solutions[justification.solution_id]
            assert justification.agent_id == member.agent_id
            assert justification.rationale == member.rationale
            assert set(justification.citations) <= shown
        for member in members:
            assert set(member.facts_used) <= fact_ids
            assert all(s.option < len(request.options) for s in member.stances)
