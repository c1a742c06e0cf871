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

import functools
import math
import re
from collections.abc import Sequence

from hivemind_lab.agents.policy.lexicon import raw_words, says, words
from hivemind_lab.agents.policy.open_ended import NO_EVIDENCE, OWN
from hivemind_lab.agents.policy.phrasing import fit_text, quoting, shorten
from hivemind_lab.agents.policy.reading import expand, read_passage, relevant_fact
from hivemind_lab.agents.schemas import Evidence, OwnCourse, ProposalOutput, ProposeTask
from hivemind_lab.problems.decision import Fact
from hivemind_lab.problems.subjects import subject_length
from hivemind_lab.problems.text import sentences
from hivemind_lab.text import stem, word_stems
from hivemind_lab.text import stems as stems_of


def _advises(text: str) -> bool:
    """Whether a sentence advises a course (a modal of obligation, a recommendation), as
    against the descriptive uses that make it look prescriptive ("it focuses on", "the firm
    invests")."""
    return says("advises", text)


def _general_subject(text: str) -> bool:
    """Whether a sentence is about organisations in general ("Firms should …", "Most
    companies …")."""
    head = word_stems(" ".join(text.split()[:2]))
    if head and head[0] in words("determiners"):
        head = head[1:]
    return bool(head) and head[0] in words("generic_subjects")


@functools.cache
def _question_subject() -> re.Pattern[str]:
    """An auxiliary, a determiner and the words after it ("should the village bakery close")."""
    modals = "|".join(map(re.escape, raw_words("question_modals")))
    dets = "|".join(map(re.escape, raw_words("possessives")))
    return re.compile(
        rf"\b(?:{modals})\s+(?P<det>{dets})\s+(?P<words>[a-z][\w'-]*(?:\s+[a-z][\w'-]*){{1,4}})",
        re.IGNORECASE,
    )


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
    generic = words("generic")  # stems every strategy problem shares: they tell nothing
    text = " ".join([problem, *(f.text for f in facts if f.source != "market")])
    own = {s for s in stems_of(text) if s not in generic and s.isalpha() and len(s) >= 3}
    own |= {m for m in expand(frozenset(own)) if m not in generic}  # acquired ~ buyer
    sentences = [s.stems for ev in evidence for s in read_passage(ev.text)]
    n = len(sentences)
    return {s: 0.3 + math.log((n + 1) / (1 + sum(s in stems for stems in sentences))) for s in own}


def _words_for(stems: Sequence[str], text: str) -> list[str]:
    """The words of ``text`` for ``stems``, in the text's order, to name the problem's topic."""
    named: dict[str, str] = {}
    for word in re.findall(r"[A-Za-z][\w-]+", text):
        key = stem(word)
        if key in stems and key not in named:
            named[key] = word if not word[1:].islower() else word.lower()  # acronyms keep case
    return list(named.values())


def _asked(problem: str) -> str:
    """The problem's questions (what it asks, as against its background)."""
    return " ".join(s for s in sentences(problem) if s.rstrip().endswith("?"))


def subject_of(problem: str) -> str | None:
    """The problem's own subject when its question names one ("What should the newspaper do?"
    → "the newspaper"); None for "we", "I" or a question with no subject."""
    for match in _question_subject().finditer(problem):
        words = match.group("words").split()
        k = subject_length(words)  # "the museum | open", "the village bakery | close"
        if k is not None:
            return " ".join([match.group("det").lower(), *words[:k]])
    return None


def addressed(action: str, subject: str | None) -> str:
    """A course taken from a passage, addressed to the client: a sentence about firms in
    general ("Firms should …") is put to the problem's own subject ("For the newspaper: firms
    should …"); one about something else stays as written."""
    if subject and _general_subject(action):
        return f"For {subject}: {action[:1].lower()}{action[1:]}"
    return action


def own_course(task: ProposeTask) -> ProposalOutput:
    """No options given: propose a course that bears on the problem from the agent's evidence,
    or say that none does and start from the client's facts."""
    weights = distinctive_terms(task.problem, task.facts, task.evidence)
    focus = frozenset(stems_of(_asked(task.problem))) & weights.keys()
    excluded = {view.course.action for view in task.excluded if view.course is not None}
    candidates: list[tuple[float, str, str]] = []
    top = max((e.score for e in task.evidence), default=0.0) or 1.0
    subject = subject_of(task.problem)
    for ev in task.evidence:
        for s in read_passage(ev.text):
            if not s.prescriptive or not _advises(s.text) or len(s.text) > 260:
                continue  # "It focuses on …", "invests in …" describe: a course advises
            keys = s.stems
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
