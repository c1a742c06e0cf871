"""The offline theory agent's critique: option by option, from the critic's own evidence.

support: the critic's evidence backs the target's stance on an option; contradiction: it backs
the opposite stance on the same option, or ranks another first move above the target's; gap:
an option the target ignores that the critic favours, or the client fact that bears most
distinctively on the target's choice and that its recommendations do not mention.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from hivemind_lab.agents.policy.binding import ban_points
from hivemind_lab.agents.policy.open_ended import critique_own
from hivemind_lab.agents.policy.phrasing import CLEAR, SEQUENCE_MARGIN, fit_text, shorten
from hivemind_lab.agents.policy.reading import (
    RELEVANT,
    STANCE_VALUE,
    distinct_bearing,
    facts_weights,
    judge,
    option_weights,
    stance_map,
)
from hivemind_lab.agents.schemas import (
    MAX_POINTS,
    BatchCritiqueOutput,
    BatchCritiqueTask,
    CritiqueOutput,
    CritiquePoint,
    CritiqueTask,
    DecisionContext,
    Evidence,
    SolutionView,
    TargetCritique,
)
from hivemind_lab.problems.decision import Fact, fact_snippet
from hivemind_lab.text import stems


def _strength(x: float) -> int:
    return max(1, min(5, 1 + round(4 * min(1.0, abs(x)))))


def _rec_index(view: SolutionView, option: str) -> int | None:
    own = frozenset(stems(option))
    for i, rec in enumerate(view.recommendations[:4]):
        if own and len(own & frozenset(stems(rec))) / len(own) >= 0.6:
            return i
    return None


def _critique_points(
    ctx: DecisionContext, position: SolutionView, target: SolutionView, evidence: Sequence[Evidence]
) -> tuple[list[CritiquePoint], str]:
    options = ctx.options
    if not options:
        return critique_own(ctx, position, target, evidence)
    judgements = judge(options, evidence, ctx.facts)
    mine = stance_map(position.stances)
    theirs = stance_map(target.stances)
    points: list[tuple[float, CritiquePoint]] = []
    views = {
        j.option: j.score + 0.3 * STANCE_VALUE.get(mine.get(j.option, ""), 0.0) for j in judgements
    }
    preferred = max(views, key=lambda o: (views[o], -o)) if views else None
    for j in judgements:
        view = views[j.option]
        label = shorten(options[j.option], 80)
        stance = theirs.get(j.option)
        cite_for = j.support[0] if j.support else None
        cite_against = j.against[0] if j.against else None
        lead = views[preferred] - view if preferred is not None else 0.0
        if (
            stance == "pursue"
            and view >= -CLEAR
            and preferred is not None
            and preferred != j.option
            and lead > SEQUENCE_MARGIN
        ):
            # Not wrong in itself, but the critic's evidence favours another first move.
            best = judgements[preferred]
            claim = (
                f"Ahead of this option ({label}), my evidence favours another first move "
                f"({options[preferred]}: {len(best.support)} passage(s) for it)."
            )
            cite = best.support[0] if best.support else cite_against
            point = _point(
                "contradiction", j.option, target, options, claim, -lead, cite, preferred
            )
            points.append((2 + lead, point))
        elif stance in ("pursue", "later") and view < -CLEAR:
            claim = (
                f"Against {(stance == 'later' and 'planning') or 'pursuing'} this option "
                f"({label}): my evidence weighs against it ({len(j.against)} passage(s))."
            )
            # In place of a first move, the critic's evidence may favour another one.
            instead = (
                preferred
                if stance == "pursue"
                and preferred is not None
                and preferred != j.option
                and views[preferred] > CLEAR
                else None
            )
            point = _point(
                "contradiction", j.option, target, options, claim, view, cite_against, instead
            )
            points.append((2 + abs(view), point))
        elif stance == "avoid" and view > CLEAR:
            claim = f"For this option, which the solution rules out ({label}): my evidence favours it ({len(j.support)} passage(s))."
            points.append(
                (
                    2 + view,
                    _point("contradiction", j.option, target, options, claim, view, cite_for),
                )
            )
        elif stance is not None and (view > CLEAR) == (stance != "avoid") and abs(view) > CLEAR:
            cite = cite_for if view > 0 else cite_against
            claim = f"Agreed on this option ({label}): my evidence points the same way ({len(j.support)} for, {len(j.against)} against)."
            points.append(
                (abs(view), _point("support", j.option, target, options, claim, view, cite))
            )
        elif stance is None and view > CLEAR:
            claim = f"Consider this option, which the solution ignores ({label}): my evidence favours it ({len(j.support)} passage(s))."
            points.append(
                (1 + view, _point("gap", j.option, target, options, claim, view, cite_for))
            )
    chosen = [i for i, s in theirs.items() if s == "pursue" and i < len(options)]
    if chosen and ctx.facts:
        text = frozenset(stems(" ".join(target.recommendations)))
        gaps = [
            (b, -position, fact, own)
            for position, (fact, own, b) in enumerate(_fact_bearings(options, ctx.facts, chosen[0]))
            if b >= RELEVANT and own and len(own & text) < 0.5 * len(own)
        ]
        if gaps:
            b, _, fact, _ = max(gaps, key=lambda g: (g[0], g[1]))
            claim = f"The solution ignores a client fact that bears on its choice ({options[chosen[0]]}): {fact_snippet(fact)}."
            points.append(
                (
                    1 + b,
                    CritiquePoint.model_validate(
                        {
                            "kind": "gap",
                            "option": chosen[0],
                            "claim": fit_text(claim),
                            "strength": _strength(b),
                            "citation": fact.id,
                        }
                    ),
                )
            )
    points.sort(key=lambda p: -p[0])
    kept = [p for _, p in points[:MAX_POINTS]]
    counts = {k: sum(p.kind == k for p in kept) for k in ("support", "contradiction", "gap")}
    summary = (
        f"{counts['support']} stance(s) supported and {counts['contradiction']} contradicted by my "
        f"evidence; {counts['gap']} gap(s) in options or client facts."
    )
    return kept, summary


@functools.lru_cache(maxsize=4096)
def _fact_bearings(
    options: tuple[str, ...], facts: tuple[Fact, ...], option: int
) -> tuple[tuple[Fact, frozenset[str], float], ...]:
    """Per fact: the stems it adds beyond the options' words, and how much more it bears on one
    option than on any other through the options' words beyond the problem's setting
    (`reading.facts_weights`; the same for every target a critic reads)."""
    option_stems = frozenset(stem for w in option_weights(options) for stem in w)
    weights = facts_weights(options, facts)
    out = []
    for f in facts:
        words = frozenset(stems(f.text))
        out.append((f, words - option_stems, distinct_bearing(words, weights, option)))
    return tuple(out)


def _point(
    kind: str,
    option: int,
    target: SolutionView,
    options: tuple[str, ...],
    claim: str,
    view: float,
    citation: str | None,
    instead: int | None = None,
) -> CritiquePoint:
    return CritiquePoint.model_validate(
        {
            "kind": kind,
            "option": option,
            "recommendation": _rec_index(target, options[option]),
            "claim": fit_text(claim),
            "strength": _strength(view),
            "citation": citation,
            "instead": instead,
        }
    )


def critique(task: CritiqueTask) -> CritiqueOutput:
    """Critique one target, option by option."""
    points, summary = _critique_points(task, task.critic_position, task.target, task.evidence)
    return CritiqueOutput(points=ban_points(task, task.target, points), summary=summary)


def critique_batch(task: BatchCritiqueTask) -> BatchCritiqueOutput:
    """The same critique as `critique`, for every target in one reply."""
    out = []
    for target in task.targets:
        points, summary = _critique_points(task, task.critic_position, target.target, task.evidence)
        points = ban_points(task, target.target, points)
        out.append(TargetCritique(target_id=target.target_id, points=points, summary=summary))
    return BatchCritiqueOutput(critiques=out)
