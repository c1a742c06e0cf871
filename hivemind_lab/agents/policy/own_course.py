"""The offline agent's own course of action on an open question (no options named).

The first version took the prescriptive sentence of its evidence that shared most words with
the problem, and generic strategy words ("firm", "market", "growth") were enough: a regional
newspaper was told about executive pay. Now a course must bear on the problem's *distinctive*
terms — its content words minus the vocabulary every business problem shares, weighted by
their rarity among the sentences the agent reads (a term every passage uses tells nothing) —
and it is addressed to the problem's own subject. When no sentence bears on them the agent says
so and points to the client's facts instead of inventing an unrelated plan.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from hivemind_lab.agents.policy.open_ended import NO_EVIDENCE, OWN
from hivemind_lab.agents.policy.phrasing import fit_text, quoting, shorten
from hivemind_lab.agents.policy.reading import expand, read_passage, relevant_fact, stems_of
from hivemind_lab.agents.schemas import Evidence, OwnCourse, ProposalOutput, ProposeTask
from hivemind_lab.problems.decision import Fact
from hivemind_lab.problems.subjects import subject_length
from hivemind_lab.problems.text import sentences

GENERIC = frozenset(
    s[:5]
    for s in """
    firm firms company companies business businesses strategy strategic market markets
    industry industries sector competitor competition competitive organisation organization
    manager management managers decision decide option options choice plan
    plans goal goals objective growth grow grows growing revenue revenues sales sell sells selling sold profit
    profits profitable cost costs customer customers client clients value model operate
    operation operations performance success successful approach result results help make
    take need want work time year years month months week weeks percent per cent number
    first second third two three four five ten many more less most large small big new
    current recent high low next last down fell rise rose drop dropped increase decrease
    change better best good well what how should would could might also still already
    respond response handle deal about face faces facing problem issue question situation
    today future long short term general given cannot which
    """.split()  # noqa: SIM905
)
"""Stems every strategy problem shares: they say nothing about what this problem is about."""
_GENERIC_SUBJECT = re.compile(
    r"^(?:(?:a|an|the|most|many|all|such)\s+)?(?:firms?|compan(?:y|ies)|business(?:es)?|"
    r"organi[sz]ations?|incumbents?|operators?|managers?|enterprises?|executives?|leaders?)\b",
    re.IGNORECASE,
)
_QUESTION_SUBJECT = re.compile(
    r"\b(?:should|can|could|must|shall|would|will|do|does)\s+(?P<det>the|our|my|its|their)\s+"
    r"(?P<words>[a-z][\w'-]*(?:\s+[a-z][\w'-]*){1,4})",
    re.IGNORECASE,
)
_ADVISES = re.compile(
    r"\b(?:should|must|ought\s+to|needs?\s+to|has\s+to|have\s+to|recommend\w*|advis\w*|"
    r"(?:is|are)\s+(?:best|better|wise|advisable)|prefer\w*|avoid\w*)\b",
    re.IGNORECASE,
)
"""Words that advise a course (a modal of obligation, a recommendation), as against the
descriptive uses that make a sentence look prescriptive ("it focuses on", "the firm invests")."""
MIN_TERMS = 2
"""Distinct distinctive terms a course must share with the problem: one word in common
("regional", "closing") is as often chance as topic."""
MIN_RELEVANCE = 1.0
"""Distinctive-term weight a sentence must share with the problem: one term that is not
common among the agent's sentences (a term all of them use weighs ≈ 0.3)."""


def distinctive_terms(
    problem: str, facts: Sequence[Fact], evidence: Sequence[Evidence]
) -> dict[str, float]:
    """The problem's content stems with an IDF weight over the sentences the agent reads:
    generic strategy words and figures weigh nothing, a stem in every sentence little."""
    text = " ".join([problem, *(f.text for f in facts if f.source != "market")])
    own = {_key(s) for s in stems_of(text) if s not in GENERIC and s.isalpha() and len(s) >= 3}
    own |= {m for m in expand(frozenset(own)) if m not in GENERIC}  # acquired ~ buyer
    sentences = [keys_of(s.stems) for ev in evidence for s in read_passage(ev.text)]
    n = len(sentences)
    return {s: 0.3 + math.log((n + 1) / (1 + sum(s in stems for stems in sentences))) for s in own}


def _key(stem: str) -> str:
    """A stem without its plural "s", so "fee" meets "fees" and "side" meets "sides"."""
    return stem[:-1] if len(stem) >= 4 and stem.endswith("s") and not stem.endswith("ss") else stem


def keys_of(stems: frozenset[str]) -> frozenset[str]:
    return frozenset(_key(s) for s in stems)


def _words_for(stems: Sequence[str], text: str) -> list[str]:
    """The words of ``text`` for ``stems``, in the text's order, to name the problem's topic."""
    words: dict[str, str] = {}
    for word in re.findall(r"[A-Za-z][\w-]+", text):
        stem = _key(word.casefold()[:5])
        if stem in stems and stem not in words:
            words[stem] = word if not word[1:].islower() else word.lower()  # acronyms keep case
    return list(words.values())


def _asked(problem: str) -> str:
    """The problem's questions (what it asks, as against its background)."""
    return " ".join(s for s in sentences(problem) if s.rstrip().endswith("?"))


def subject_of(problem: str) -> str | None:
    """The problem's own subject when its question names one ("What should the newspaper do?"
    → "the newspaper"); None for "we", "I" or a question with no subject."""
    for match in _QUESTION_SUBJECT.finditer(problem):
        words = match.group("words").split()
        k = subject_length(words)  # "the clinic | handle", "the regional grocer | cut"
        if k is not None:
            return " ".join([match.group("det").lower(), *words[:k]])
    return None


def addressed(action: str, subject: str | None) -> str:
    """A course taken from a passage, addressed to the client: a sentence about firms in
    general ("Firms should …") is put to the problem's own subject ("For the newspaper: firms
    should …"); one about something else stays as written."""
    if subject and _GENERIC_SUBJECT.match(action):
        return f"For {subject}: {action[:1].lower()}{action[1:]}"
    return action


def own_course(task: ProposeTask) -> ProposalOutput:
    """No options given: propose a course that bears on the problem from the agent's evidence,
    or say that none does and start from the client's facts."""
    weights = distinctive_terms(task.problem, task.facts, task.evidence)
    focus = keys_of(frozenset(stems_of(_asked(task.problem)))) & weights.keys()
    excluded = {view.course.action for view in task.excluded if view.course is not None}
    candidates: list[tuple[float, str, str]] = []
    top = max((e.score for e in task.evidence), default=0.0) or 1.0
    subject = subject_of(task.problem)
    for ev in task.evidence:
        for s in read_passage(ev.text):
            if not s.prescriptive or not _ADVISES.search(s.text) or len(s.text) > 260:
                continue  # "It focuses on …", "invests in …" describe: a course advises
            keys = keys_of(s.stems)
            hits = [weights[stem] for stem in keys if stem in weights]
            shared = sum(hits) + sum(weights[stem] for stem in keys & focus)  # the ask counts twice
            if weights and (len(hits) < min(MIN_TERMS, len(weights)) or shared < MIN_RELEVANCE):
                continue  # generic words or one stray word do not make a course answer it
            if focus and not keys & focus:
                continue  # it speaks to the background ("family", "employees"), not to the ask
            on_topic = shared / math.sqrt(len(s.stems))
            course = addressed(s.text, subject)
            candidates.append(
                (-(on_topic + 0.3 * ev.score / top + 0.2 * s.polarity), course, ev.id)
            )
    candidates.sort()
    if not candidates:
        return _no_evidence(task, weights)
    fresh = [c for c in candidates if c[1] not in excluded] or candidates[:1]
    _, action, citation = fresh[min(task.attempt, len(fresh) - 1)]
    return _proposal(
        task,
        action,
        about=action,
        lead="Fit it to the client's position: ",
        rationale=(
            f"The problem names no options, so this agent proposes its own from [{citation}], "
            "the passage that bears most on the problem's distinctive terms."
        ),
        citations=[citation],
    )


def _no_evidence(task: ProposeTask, weights: dict[str, float]) -> ProposalOutput:
    """The honest answer when no passage bears on the problem: name what is missing and start
    from the client's own facts."""
    asked = _asked(task.problem)
    # the question's own words first, in its order: every agent names the same topic
    topic = list(dict.fromkeys(_words_for(list(weights), f"{asked} {task.problem}")))[:3]
    topic = topic or ["this problem"]
    named = ", ".join(topic[:-1]) + f" and {topic[-1]}" if len(topic) > 1 else topic[0]
    course = f"{NO_EVIDENCE}{named}: decide from the client's own facts and gather evidence first"
    return _proposal(
        task,
        course,
        about=named,
        lead="Start from the client's position: ",
        backed=False,
        rationale=(
            "The problem names no options and none of this agent's passages bears on its "
            "distinctive terms, so it proposes no plan from them."
        ),
    )


def _proposal(
    task: ProposeTask,
    course: str,
    *,
    about: str,
    lead: str,
    rationale: str,
    citations: Sequence[str] = (),
    backed: bool = True,
) -> ProposalOutput:
    """An own course as a proposal: the course, then the client fact that bears most on
    ``about`` (quoted after ``lead``)."""
    recs = [fit_text(f"{OWN}{course}")]
    fact = relevant_fact(about, (about,), list(task.facts))
    if fact is not None:
        recs.append(quoting(lead, fact))
    return ProposalOutput(
        title=shorten(f"{OWN}{course}", 150),
        course=OwnCourse(action=fit_text(course), backed=backed),
        recommendations=recs,
        rationale=rationale,
        citations=list(citations),
        facts_used=[fact.id] if fact else [],
    )
