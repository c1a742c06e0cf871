"""The offline constraint agent: feasibility of a solution's options for this client.

Red flags and mitigations are matched as phrases in context: the flag's content stems must occur
in order and adjacent (stopwords aside) in a recommendation that does not rule the move out
("Do not pursue the acquisition" raises no acquisition flag). The client's facts that concern
this constraint (its flag, mitigation and knowledge vocabulary) and speak of strain weigh on
the options the solution pursues, in proportion to how committing they are.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from hivemind_lab.agents.schemas import MAX_TEXT, ScoreOutput, ScoreTask
from hivemind_lab.decision import fact_snippet
from hivemind_lab.llm.offline.reading import commitment, polarity, stems_of
from hivemind_lab.text import overlap, term_set

_RULED_OUT = re.compile(r"^\s*(?:do not|don't|avoid|never|rule out|reject|drop)\b", re.IGNORECASE)


def phrase_in(phrase: Sequence[str], stems: Sequence[str]) -> bool:
    """Whether ``phrase`` occurs as a contiguous run in ``stems``."""
    n = len(phrase)
    return n > 0 and any(
        tuple(stems[i : i + n]) == tuple(phrase) for i in range(len(stems) - n + 1)
    )


def matched(phrases: Sequence[str], texts: Sequence[str]) -> list[str]:
    """The phrases found in context in any of the texts, in order."""
    runs = [stems_of(t) for t in texts if not _RULED_OUT.match(t)]
    return [p for p in phrases if any(phrase_in(stems_of(p), run) for run in runs)]


def score(task: ScoreTask) -> ScoreOutput:
    """Feasibility under one constraint from flags, mitigations, knowledge and client facts."""
    texts = [task.solution.title, *task.solution.recommendations]
    flags = sorted(set(matched(task.red_flags, texts)))
    mitigations = sorted(set(matched(task.mitigations, texts)))
    pursued = [
        task.options[s.option]
        for s in task.solution.stances
        if s.stance in ("pursue", "later") and s.option < len(task.options)
    ]
    solution_terms = term_set(" ".join(texts))
    engagement = max(
        (overlap(solution_terms, term_set(e.text)) for e in task.evidence[:3]), default=0.0
    )
    vocabulary = {
        s for phrase in (*task.red_flags, *task.mitigations) for s in stems_of(phrase)
    } | {s for e in task.evidence[:3] for s in stems_of(e.text)}
    strained = [
        f
        for f in task.facts
        if f.source != "market"
        and polarity(f.text) < 0
        and len(set(stems_of(f.text)) & vocabulary) >= 2
    ]
    exposure = max((commitment(o) for o in pursued), default=0.5)
    fact_penalty = 6.0 * min(3, len(strained)) * exposure
    penalty = max(
        0.0, 13.0 * len(flags) + 12.0 * engagement + fact_penalty - 7.0 * len(mitigations)
    )
    s = task.severity
    value = 92.0 - 25.0 * s - (0.5 + 1.5 * s) * penalty
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
