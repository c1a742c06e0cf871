"""Which model backed what, in a run with a roster (issue 34): each model's agents, the
conclusions its agents back, the critique points they made, the scores they gave, and its
calls, tokens and cost. Pure: read from the result and the recorded critiques."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from hivemind_lab.runs.results import Critique, DeliberationResult


@dataclass(frozen=True)
class ModelLine:
    """One model of the run, as the report's appendix lists it."""

    model: str
    agents: tuple[str, ...]
    conclusions: tuple[str, ...]
    """``conclusion 1 (2 of 3 agents)``: each conclusion some of its agents back."""
    critique_points: dict[str, int]
    """Points its agents made in every round's critiques, by kind (support, contradiction,
    gap)."""
    scores: tuple[str, ...]
    """``legal 72``: the mean score its constraint agents gave the final set, by constraint."""
    calls: int
    tokens: int
    cost_usd: float


def model_lines(result: DeliberationResult, critiques: Sequence[Critique]) -> list[ModelLine]:
    """Each model of a run with a roster (none for a run of one model: the settings name it)."""
    final = result.vetoes[-1] if result.vetoes else None
    lines = []
    for share in result.models:
        mine = set(share.agents)
        backs = [
            f"conclusion {c.rank} ({len(mine.intersection(c.agents))} of {len(c.agents)} agents)"
            for c in result.conclusions
            if mine.intersection(c.agents)
        ]
        points = Counter(p.kind for c in critiques if c.critic_id in mine for p in c.points)
        scores = (
            tuple(
                f"{constraint} {mean:.0f}"
                for constraint, mean in sorted(final.per_constraint.items())
                if f"constraint-{constraint}" in mine
            )
            if final is not None
            else ()
        )
        lines.append(
            ModelLine(
                model=share.model,
                agents=share.agents,
                conclusions=tuple(backs),
                critique_points=dict(sorted(points.items())),
                scores=scores,
                calls=share.usage.calls,
                tokens=share.usage.tokens,
                cost_usd=share.usage.cost_usd,
            )
        )
    return lines


def said_of(line: ModelLine) -> list[tuple[str, str]]:
    """A model's line as (what, value) rows: the same words in the HTML and Markdown reports."""
    points = ", ".join(f"{n} {kind}" for kind, n in line.critique_points.items())
    return [
        ("agents", ", ".join(line.agents) or "none"),
        ("backs", "; ".join(line.conclusions) or "no conclusion"),
        ("critique points", points or "none"),
        ("final scores", ", ".join(line.scores) or "none"),
        (
            "usage",
            f"{line.calls} calls · {line.tokens:,} tokens · "
            + (f"${line.cost_usd:.4f}" if line.cost_usd else "no cost metered"),
        ),
    ]
