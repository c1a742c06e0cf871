"""Every conclusion is about the client's decision: it names the options and the client's facts.

Run on every shipped problem and on plain-text problems written here (enterprise and
individual), with each problem's suggested sliders and the offline model.
"""

from __future__ import annotations

import pytest

from hivemind_lab import Calibrations, Limits, OfflineAgentModel
from hivemind_lab.deliberation import deliberate
from hivemind_lab.inputs import request_for
from hivemind_lab.problems import load_problems, problem_from_text
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


@pytest.mark.slow
@pytest.mark.parametrize("problem", _problems())
def test_conclusions_choose_among_options_and_cite_client_facts(tmp_path, problem):
    request = request_for(problem)
    assert request.options, "every problem here names its options"
    result = deliberate(
        request,
        Calibrations(),
        Limits(max_regenerations=1),
        model=OfflineAgentModel(),
        run_dir=tmp_path / "run",
        knowledge_base=KNOWLEDGE,
        practicality_kb=PRACTICALITY,
    )
    assert result.conclusions, result.status
    options = [o.lower() for o in request.options]
    facts = [f.text.rstrip(".").lower() for f in request.facts()]

    def names_option(text: str) -> bool:
        return any(o in text.lower() for o in options)

    def quotes_fact(text: str) -> bool:
        return any(f[:60] in text.lower() for f in facts)

    top = result.conclusions[0]
    assert names_option(top.recommendations[0]), top.recommendations[0]
    assert any(quotes_fact(r) for r in top.recommendations), top.recommendations
    for conclusion in result.conclusions:
        for rec in conclusion.recommendations:
            assert names_option(rec) or quotes_fact(rec), rec
