"""On an open question (no options) the agents' own courses answer the question.

Questions of several domains, written here, run against the sample knowledge base and, when the
shared corpus is present, against it (read in place). Every recommendation of every conclusion,
outside the client facts it quotes, shares a content word with the problem or says that the
evidence is missing: never a plan about something else (before, a newspaper was told about
executive pay and a clinic about platform markets).
"""

from __future__ import annotations

import re

import pytest

from hivemind_lab import Calibrations, Limits, OfflineAgentModel
from hivemind_lab.deliberation import deliberate
from hivemind_lab.inputs import request_for
from hivemind_lab.problems import problem_from_text
from tests.support import KNOWLEDGE, PRACTICALITY, SHARED

QUESTIONS = {
    "library": (
        "The municipal library of Vellmar lends 40% fewer books than in 2019, its opening hours "
        "were cut to four days and volunteers run the reading room. What should the library do?"
    ),
    "football": (
        "A third-division football club fills 35% of its stadium; its youth academy costs "
        "1.2 million a year and the owner wants to stop funding losses. How should the club "
        "fund its academy?"
    ),
    "vineyard": (
        "Our family vineyard produces 90,000 bottles a year; hail destroyed a third of the "
        "harvest twice in five years and the export distributor in Japan ended its contract. "
        "How should we protect the vineyard's income?"
    ),
    "marketplace": (
        "Our online marketplace for second-hand furniture charges sellers a 15% commission and "
        "buyers nothing; sellers complain about the fee and many list on rival platforms too. "
        "How should we price the two sides of the platform?"
    ),
    "canteen": (
        "The hospital canteen serves 2,000 meals a day at a loss of 0.80 per meal; night-shift "
        "staff have no hot food after 20:00. How should the canteen be run?"
    ),
}
CORPORA = {
    "sample": KNOWLEDGE,
    "shared": SHARED / "corpora" / "strategy_corpus",
}
DENSITY = {"sample": 8000, "shared": 80000}
"""Tokens per agent: the shared corpus at 8,000 made ~150 agents and ~22,000 critiques a round
(minutes per question) where a dozen agents ask the same of the stand-in's courses."""
_GENERIC = set(
    """firm compa busin strat marke indus custo clien probl quest shoul would could year years
    month perce many more most much what which their there about other""".split()  # noqa: SIM905
)
"""Words any strategy text shares with any problem (five-letter stems): no sign of topic."""
_QUOTE = re.compile(r"“[^”]*”")
_MISSING = re.compile(r"\bno\b[^.]{0,40}\bevidence\b", re.IGNORECASE)


def _content(text: str) -> set[str]:
    words = re.findall(r"[a-z][a-z-]{3,}", text.lower())
    return {w[:5] for w in words} - _GENERIC


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("corpus", list(CORPORA))
@pytest.mark.parametrize("name", list(QUESTIONS))
def test_own_courses_answer_the_question_or_say_the_evidence_is_missing(tmp_path, name, corpus):
    kb = CORPORA[corpus]
    if not kb.exists():
        pytest.skip(f"{kb} is absent")
    question = QUESTIONS[name]
    request = request_for(
        problem_from_text(question, id=name),
        sufficiency=2,
        feasibility=1,
        density=DENSITY[corpus],
    )
    assert not request.options, "an open question"
    result = deliberate(
        request,
        Calibrations(),
        Limits(max_regenerations=1),
        model=OfflineAgentModel(),
        run_dir=tmp_path / "run",
        knowledge_base=kb,
        practicality_kb=PRACTICALITY,
    )
    assert result.conclusions, result.status
    topic = _content(question)
    for conclusion in result.conclusions:
        for rec in conclusion.recommendations:
            if _QUOTE.search(rec):
                continue  # it fits the course to a client fact it quotes
            assert _content(rec) & topic or _MISSING.search(rec), rec
