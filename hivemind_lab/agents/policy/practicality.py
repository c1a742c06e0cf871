"""The offline constraint agent: feasibility of a solution's options for this client.

Red flags and mitigations are matched as phrases in context: the flag's Snowball word stems must
occur in order and adjacent (articles aside) in a recommendation that does not rule the move out
("Do not pursue the acquisition" raises no acquisition flag), outside the client facts it quotes
("market allocation" is not found in "new market space"). The client's facts that concern
this constraint (the words of its red flags and mitigations) and speak of strain weigh on
the options the solution pursues, in proportion to how committing they are.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

from hivemind_lab.agents.policy.reading import commitment, polarity
from hivemind_lab.agents.schemas import MAX_TEXT, ScoreOutput, ScoreTask
from hivemind_lab.problems.decision import fact_snippet
from hivemind_lab.text import overlap, stems, term_set, word_stems

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
    pursued = [
        task.options[s.option]
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
    exposure = max((commitment(o) for o in pursued), default=0.5)
    fact_penalty = 5.0 * min(3, len(strained)) * exposure
    penalty = max(
        0.0, 12.0 * len(flags) + 10.0 * engagement + fact_penalty - 7.0 * len(mitigations)
    )
    s = task.severity
    value = 95.0 - 20.0 * s - (0.5 + 1.5 * s) * penalty
    rounded = max(0, min(100, 5 * round(value / 5)))
    subject = pursued[0] if pursued else task.solution.title
    parts = [
        f"{task.constraint} on {subject}: {len(flags)} risk signal(s)"
        + (f" ({', '.join(flags[:6])})" if flags else ""),
        f"client facts: {fact_snippet(strained[0])}" if strained else "",
        f"mitigations: {', '.join(mitigations)}" if mitigations else "",
        f"severity {s:.2f}.",
    ]
    reason = "; ".join(p for p in parts if p)
    if len(reason) > MAX_TEXT:  # drop the fact rather than cut a sentence
        reason = "; ".join(p for p in (parts[0], parts[2], parts[3]) if p)[:MAX_TEXT]
    return ScoreOutput.model_validate({"score": rounded, "reason": reason, "flags": flags[:6]})
