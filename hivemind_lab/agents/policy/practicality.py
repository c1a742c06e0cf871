"""The offline constraint agent: feasibility of a solution's options for this client.

Red flags and mitigations are matched as phrases in context: the flag's Snowball word stems must
occur in order and adjacent (articles aside) in a recommendation that does not rule the move out
("Do not pursue the acquisition" raises no acquisition flag), outside the client facts it quotes
("market allocation" is not found in "new market space"). The client's facts that concern
this constraint (the words of its red flags and mitigations) and speak of strain weigh on
the options the solution pursues, in proportion to how committing they are. Both come out as
concerns graded by how committing the move is; severity is applied by the engine
(`hivemind_lab.deliberation.practicality.constraint_score`), not here.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

from hivemind_lab.agents.policy.binding import bind_score
from hivemind_lab.agents.policy.phrasing import MAX_TEXT, fit_text
from hivemind_lab.agents.policy.reading import commitment, polarity
from hivemind_lab.agents.schemas import (
    BatchScoreOutput,
    BatchScoreTask,
    Concern,
    ScoreOutput,
    ScoreTask,
    SolutionScore,
)
from hivemind_lab.problems.decision import Fact, fact_snippet
from hivemind_lab.text import overlap, stems, term_set, word_stems

CONCERN_COST = {"minor": 6.0, "major": 15.0, "critical": 35.0}
"""What an unmitigated concern takes off the stand-in's anchor: the rubric's score weighs the
concerns (until 2026-12-03 the engine subtracted these same figures at the default severity)."""

_ARTICLES = frozenset({"a", "an", "the"})
"""Only articles are skipped: "build our own" must not shrink to "build"."""


@functools.lru_cache(maxsize=65536)
def phrase_stems(text: str) -> tuple[str, ...]:
    """Snowball stems of a text's words, in order ("marketplace" ≠ "market")."""
    return word_stems(text, skip=_ARTICLES)


_RULED_OUT = re.compile(r"^\s*(?:do not|don't|avoid|never|rule out|reject|drop)\b", re.IGNORECASE)


def phrase_in(phrase: Sequence[str], stems: Sequence[str]) -> bool:
    """Whether ``phrase`` occurs as a contiguous run in ``stems``."""
    n = len(phrase)
    return n > 0 and any(
        tuple(stems[i : i + n]) == tuple(phrase) for i in range(len(stems) - n + 1)
    )


def matched(
    phrases: Sequence[str], texts: Sequence[str], *, quoted: Sequence[str] = ()
) -> list[str]:
    """The phrases found in context in any of the texts, in order. A text that rules the move
    out does not count, nor do the client facts it quotes (``quoted``): a flag is about what
    the solution proposes, not about the data it cites."""
    kept = []
    for text in texts:
        if _RULED_OUT.match(text):
            continue
        for fact in quoted:
            text = text.replace(fact, " ")
        kept.append(phrase_stems(text))
    return [p for p in phrases if any(phrase_in(phrase_stems(p), run) for run in kept)]


def _concerns(
    flags: Sequence[str],
    mitigations: Sequence[str],
    strained: Sequence[Fact],
    *,
    exposure: float,
    option: int | None,
) -> list[Concern]:
    """The concerns behind a score: each risk signal (critical on a fully committing move,
    else major; mitigated while the solution states mitigations, one per signal), then each
    client fact that strains the move (major on a fully committing move, else minor)."""
    out = [
        Concern.model_validate(
            {
                "option": option,
                "grade": "critical" if exposure >= 1.0 else "major",
                "mitigated": i < len(mitigations),
                "text": fit_text(f"Risk signal under this constraint: {flag}."),
            }
        )
        for i, flag in enumerate(flags)
    ]
    out += [
        Concern.model_validate(
            {
                "option": option,
                "grade": "major" if exposure >= 1.0 else "minor",
                "basis": fact.id,
                "text": fit_text(f"A client fact strains it: {fact_snippet(fact)}"),
            }
        )
        for fact in strained[:3]
    ]
    return out[:6]


def score(task: ScoreTask) -> ScoreOutput:
    """Feasibility under one constraint from flags, mitigations, knowledge and client facts."""
    texts = [task.solution.title, *task.solution.recommendations]
    quoted = sorted(
        {q for f in task.facts for q in (f.text, f.text.rstrip("."), fact_snippet(f))},
        key=len,
        reverse=True,
    )
    flags = sorted(set(matched(task.red_flags, texts, quoted=quoted)))
    mitigations = sorted(set(matched(task.mitigations, texts, quoted=quoted)))
    pursued: list[int] = [
        s.option
        for s in task.solution.stances
        if s.stance in ("pursue", "later") and s.option < len(task.options)
    ]
    solution_terms = term_set(" ".join(texts))
    engagement = max(
        (overlap(solution_terms, term_set(e.text)) for e in task.evidence[:3]), default=0.0
    )
    vocabulary = {s for phrase in (*task.red_flags, *task.mitigations) for s in stems(phrase)}
    strained = [
        f
        for f in task.facts
        if f.source != "market" and polarity(f.text) < 0 and set(stems(f.text)) & vocabulary
    ]
    exposure = max((commitment(task.options[o]) for o in pursued), default=0.5)
    exposed: int | None = (
        max(pursued, key=lambda o: commitment(task.options[o])) if pursued else None
    )
    concerns = _concerns(flags, mitigations, strained, exposure=exposure, option=exposed)
    # The anchor follows the rubric: how far the solution engages this constraint's knowledge
    # at all, less what its unmitigated concerns cost; the engine moves it by severity.
    cost = sum(CONCERN_COST[c.grade] for c in concerns if not c.mitigated)
    anchor = max(0, min(100, 5 * round((95.0 - 15.0 * engagement - cost) / 5)))
    subject = task.options[exposed] if exposed is not None else task.solution.title
    # Plain sentences a board can read; the concerns themselves travel as structured fields.
    # Flags come from the constraint's knowledge, strain from the client's own facts: said as
    # one sentence, so that "no risk" is never followed by a fact against the plan.
    against = f"a client fact weighs against it: {fact_snippet(strained[0])}" if strained else ""
    if flags:
        risks = f"{task.constraint.capitalize()} risks in “{subject}”: {', '.join(flags[:6])}."
        fact = f"Also, {against}." if against else ""
    else:
        where = f"The {task.constraint} knowledge flags no risk in “{subject}”"
        risks = f"{where}, but {against}." if against else f"{where}."
        fact = ""
    parts = [
        risks,
        fact,
        f"The plan answers with: {', '.join(mitigations)}." if mitigations else "",
    ]
    reason = " ".join(p for p in parts if p)
    if len(reason) > MAX_TEXT:  # drop the fact's text rather than cut a sentence
        short = (
            risks
            if flags
            else (f"{where}, but a client fact weighs against it." if strained else risks)
        )
        reason = " ".join(p for p in (short, parts[2]) if p)[:MAX_TEXT]
    out = ScoreOutput.model_validate(
        {"score": anchor, "reason": reason, "flags": flags[:6], "concerns": concerns}
    )
    return bind_score(task, out)


def score_batch(task: BatchScoreTask) -> BatchScoreOutput:
    """Each solution of a batch scored exactly as `score` scores it alone, from the passages
    retrieved for it (a batch is a way of calling, not a new judgement)."""
    return BatchScoreOutput(
        scores=[
            SolutionScore(solution_id=single.solution_id, **dict(score(single)))
            for single in task.singles()
        ]
    )
