"""The offline theory agent: propose, critique and revise by reasoning about the options.

- propose: judge each option from the agent's own evidence and the client's facts, then
  recommend a choice or a sequence among the options, each recommendation naming an option or
  a client fact; the reason is written in the model's own words and cites passage and fact ids.
- critique: see `critique` (option by option: support, contradiction, gap).
- revise: take the critique points the engine lists to answer (and those it may weigh, unless
  the agent's own evidence says otherwise), move the option scores by their evidence weight
  and re-decide. The engine applies stubbornness; the agent only judges.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from hivemind_lab.agents.policy.binding import bounds
from hivemind_lab.agents.policy.open_ended import revise_own
from hivemind_lab.agents.policy.own_course import own_course
from hivemind_lab.agents.policy.phrasing import (
    CLEAR,
    MAX_TEXT,
    SEQUENCE_MARGIN,
    fit_text,
    quoting,
    shorten,
)
from hivemind_lab.agents.policy.reading import (
    STANCE_VALUE,
    Judgement,
    commitment,
    is_hold,
    is_terminal,
    judge,
    relevant_fact,
    stance_map,
)
from hivemind_lab.agents.schemas import (
    MAX_POINTS,
    CritiquePoint,
    DecisionContext,
    OptionStance,
    ProposalOutput,
    ProposeTask,
    ReviseTask,
    RevisionOutput,
)
from hivemind_lab.problems.decision import Fact


def _lower(label: str) -> str:
    """Lower-case an option's first word to use it mid-sentence (acronyms and names keep
    their case: "ICU post", "Enter Germany" → "enter Germany")."""
    word = label.split(" ", 1)[0]
    return label[:1].lower() + label[1:] if word[1:].islower() or word == "A" else label


def _topic(j: Judgement) -> str:
    return j.topics[0].replace("-", " ") if j.topics else "this option"


@dataclass(frozen=True)
class Plan:
    """A decision among the options: what to do now, later, and not at all."""

    now: tuple[int, ...]
    later: tuple[int, ...] = ()
    avoid: tuple[int, ...] = ()

    def stances(self) -> list[OptionStance]:
        named = [(self.now, "pursue"), (self.later, "later"), (self.avoid, "avoid")]
        return [
            OptionStance.model_validate({"option": i, "stance": stance})
            for group, stance in named
            for i in group
        ]

    def key(self) -> tuple[frozenset[int], frozenset[int]]:
        return frozenset(self.now), frozenset(self.later)


def plans(
    options: tuple[str, ...], scores: Sequence[float], *, exclusive: bool = False
) -> list[Plan]:
    """Candidate plans, best first: the preferred plan, then each other option chosen alone.

    For an exclusive decision every plan is one option, the others ruled out: no sequence.
    """
    ranked = sorted(range(len(options)), key=lambda i: (-scores[i], i))
    if exclusive:
        return [Plan((i,), (), tuple(j for j in range(len(options)) if j != i)) for i in ranked]
    worst = ranked[-1]
    avoid = (worst,) if len(ranked) > 1 and scores[worst] < -CLEAR else ()
    best = ranked[0]
    out: list[Plan] = []
    if len(ranked) > 1:
        second = ranked[1]
        if scores[second] > CLEAR and scores[best] - scores[second] < SEQUENCE_MARGIN:
            # Less committing first, but never a step that ends the business first.
            first, then = sorted(
                (best, second),
                key=lambda i: (is_terminal(options[i]), commitment(options[i]), -scores[i], i),
            )
            if not is_terminal(options[first]):
                out.append(
                    Plan((first,), (then,), tuple(a for a in avoid if a not in (first, then)))
                )
    later = tuple(i for i in ranked[1:2] if scores[i] > CLEAR and not is_terminal(options[best]))
    out.append(Plan((best,), later, tuple(a for a in avoid if a != best and a not in later)))
    for i in ranked[1:]:
        out.append(Plan((i,), (), tuple(a for a in avoid if a != i)))
    unique: dict[tuple[frozenset[int], frozenset[int]], Plan] = {}
    for plan in out:
        unique.setdefault(plan.key(), plan)
    return list(unique.values())


def lawful(
    candidates: Sequence[Plan], forbidden: frozenset[int], first: frozenset[int] = frozenset()
) -> list[Plan]:
    """The plans that pursue no forbidden option, now or later, and no option barred as a
    first move (``first``) now, each marking the forbidden options avoid (all of them when
    every plan would break one: nothing lawful is left)."""
    if not forbidden and not first:
        return list(candidates)
    kept = [
        Plan(p.now, p.later, tuple(sorted(set(p.avoid) | forbidden)))
        for p in candidates
        if not (set(p.now) | set(p.later)) & forbidden and not set(p.now) & first
    ]
    return kept or list(candidates)


def plan_title(options: Sequence[str], plan: Plan) -> str:
    """A plan in one line. Waiting first (stay, decline, defer) is no first step: "Decline to
    buy Beta first, then buy Beta" read as a contradiction, so it says "for now" instead."""
    label = shorten(options[plan.now[0]], 70)
    if not plan.later:
        return shorten(options[plan.now[0]], 150)
    later = _lower(shorten(options[plan.later[0]], 70))
    if is_hold(options[plan.now[0]]):
        return f"{label} for now; revisit later: {later}"
    return f"{label} first, then {later}"


@dataclass(frozen=True)
class Written:
    title: str
    recommendations: list[str]
    rationale: str
    citations: list[str]
    facts_used: list[str]


def write_plan(
    ctx: DecisionContext,
    plan: Plan,
    judgements: Sequence[Judgement],
    scores: Sequence[float],
    *,
    prefer_facts: Sequence[str] = (),
    limit: int = 4,
) -> Written:
    """The plan as recommendations that each name an option or a client fact."""
    options, facts = ctx.options, list(ctx.facts)
    x = plan.now[0]
    jx = judgements[x]
    label = options[x]
    # Option labels may be imperatives, gerunds or nouns; each sentence uses a label whole,
    # after a colon or as its subject, so it reads right whatever the label's form.
    recs: list[str] = []
    if plan.later and is_hold(label):
        y = plan.later[0]
        recs.append(
            f"Recommended for now: {label}. Prepare the next step meanwhile: {options[y]}. "
            "This slice's evidence backs waiting."
        )
    elif plan.later:
        y = plan.later[0]
        why = (
            "The first step commits less, and this slice's evidence backs it."
            if commitment(label) < commitment(options[y])
            else "This slice's evidence backs the first step most."
        )
        recs.append(f"Recommended sequence: {label} first, then {_lower(options[y])}. {why}")
    else:
        recs.append(f"Recommended: {label}. This slice's evidence backs it over the others.")
    used: list[str] = []
    fact = relevant_fact(label, options, facts, prefer=prefer_facts)
    if fact is not None:
        used.append(fact.id)
        recs.append(quoting(f"{label}: plan it on the client's figures — ", fact))
    if plan.later:
        y = plan.later[0]
        later_fact = relevant_fact(options[y], options, [f for f in facts if f.id not in used])
        if later_fact:
            used.append(later_fact.id)
        base = (
            f"{options[y]}: revisit it when the client's position changes"
            if is_hold(label)
            else f"{options[y]}: commit to it only once the first step shows results"
        )
        judged = quoting(f"{base}, judged against ", later_fact) if later_fact else ""
        recs.append(judged if judged and len(judged) <= MAX_TEXT else base + ".")
    for z in plan.avoid:
        jz = judgements[z]
        against_fact = next((f for f in facts if f.id in jz.facts_against), None)
        if against_fact:
            used.append(against_fact.id)
        lead = "Rejected alternative" if ctx.exclusive else "Not now"
        recs.append(
            quoting(f"{lead}: {_lower(options[z])} — ", against_fact)
            if against_fact
            else f"{lead}: {_lower(options[z])} — this slice's evidence runs against it."
            if scores[z] < 0 or not ctx.exclusive
            else f"{lead}: {_lower(options[z])} — only one option can be taken."
        )
    if commitment(label) >= 1.0 and len(recs) < limit:
        strain = next((f for f in facts if f.id in jx.facts_against and f.id not in used), None)
        if strain is not None:
            used.append(strain.id)
            recs.append(quoting(f"{label}: stage it in steps — ", strain))
    recs = [fit_text(r) for r in recs[:limit]]
    citations = list(
        dict.fromkeys(
            [*jx.support[:4], *(c for z in plan.avoid for c in judgements[z].against[:2])]
        )
    )[:8]
    parts = [
        f"{shorten(options[i], 50)}: {scores[i]:+.2f} ({len(judgements[i].support)} for "
        f"[{', '.join(judgements[i].support[:2])}], {len(judgements[i].against)} against "
        f"[{', '.join(judgements[i].against[:2])}])"
        for i in sorted(range(len(options)), key=lambda i: -scores[i])
    ]
    rationale = (
        f"Each option judged from this slice's passages that bear on it (strongest on "
        f"{_topic(jx)}) and from the client's facts: "
        + "; ".join(parts)
        + f". Facts used: {', '.join(used) or 'none'}."
    )
    return Written(
        plan_title(options, plan), recs, rationale[:1200], citations, list(dict.fromkeys(used))[:6]
    )


def propose(task: ProposeTask, seed: int | None) -> ProposalOutput:
    """Choose or sequence among the options from the agent's own evidence and the facts."""
    if not task.options:
        return own_course(task)
    judgements = judge(task.options, task.evidence, task.facts)
    scores = [j.score for j in judgements]
    excluded = {
        (
            frozenset(s.option for s in v.stances if s.stance == "pursue"),
            frozenset(s.option for s in v.stances if s.stance == "later"),
        )
        for v in task.excluded
    }
    candidates = lawful(
        plans(task.options, scores, exclusive=task.exclusive),
        bounds(task).forbidden(),
        bounds(task).barred_first(),
    )
    fresh = [p for p in candidates if p.key() not in excluded]
    # With nothing new left the agent restates its best plan: the engine refuses it as a
    # repeat and, after its attempts, records the agent as abstaining.
    plan = fresh[task.attempt] if task.attempt < len(fresh) else candidates[0]
    w = write_plan(task, plan, judgements, scores, limit=task.max_recommendations)
    return ProposalOutput(
        title=w.title,
        stances=plan.stances(),
        recommendations=w.recommendations,
        rationale=w.rationale,
        citations=w.citations,
        facts_used=w.facts_used,
    )


def _direction(point: CritiquePoint, stance: str | None) -> float:
    """+1 when a point argues for doing the option, -1 against."""
    if point.kind == "gap":
        return 1.0
    held = STANCE_VALUE.get(stance or "", 0.0)
    sign = 1.0 if held >= 0 else -1.0
    return sign if point.kind == "support" else -sign


def revise(task: ReviseTask) -> RevisionOutput:
    """Move option scores by the critique points the engine listed: every point to answer is
    taken (its option's score moves by the point's evidence weight in its direction), a point
    the agent may weigh is taken unless the agent's own evidence backs the stance it argues
    against, and every other point is rejected. Stubbornness is the engine's (its lists)."""
    current = task.current
    if not task.options:
        return revise_own(task)
    judgements = judge(task.options, task.evidence, task.facts)
    held = stance_map(current.stances)
    base = [0.5 * j.score + 0.5 * STANCE_VALUE.get(held.get(j.option, ""), 0.0) for j in judgements]
    must = {(r.critic_id, r.point): r.weight for r in task.must_answer}
    may = {(r.critic_id, r.point): r.weight for r in task.may_weigh}
    moves: dict[tuple[int, float], float] = {}
    claims: dict[tuple[int, float], str] = {}
    rejected: list[str] = []
    fact_gaps: dict[str, str] = {}
    fact_ids = {f.id for f in task.facts}
    for received in task.critiques:
        for index, point in enumerate(received.points):
            listed = (received.critic_id, index)
            weight = must.get(listed, may.get(listed))
            if point.kind == "support" or point.option is None:
                continue
            if point.option >= len(task.options) or weight is None:
                rejected.append(point.claim)
                continue
            direction = _direction(point, held.get(point.option))
            own = judgements[point.option].score
            if listed not in must and own * direction < -CLEAR:
                rejected.append(point.claim)  # may weigh: the agent's evidence says otherwise
                continue
            if point.kind == "gap" and point.citation in fact_ids:
                fact_gaps.setdefault(point.citation, point.claim)
                continue
            key = (point.option, direction)
            if key[1] < 0 and held.get(key[0]) is None:
                continue  # an argument against an option the agent does not hold
            moves[key] = max(moves.get(key, 0.0), weight)  # one group moves once
            claims.setdefault(key, point.claim)
            instead = point.instead
            if point.kind == "contradiction" and instead is not None and instead != point.option:
                if instead >= len(task.options):
                    continue
                if listed not in must and judgements[instead].score < -CLEAR:
                    continue  # may weigh: the agent's evidence runs against the critic's option
                # "Not this, but that": the critic's option rises by the same weight.
                moves[(instead, 1.0)] = max(moves.get((instead, 1.0), 0.0), weight)
    # The engine's weight of a contradiction is already net of the peers who back the stance it
    # argues against (`deliberation.theory.weigh_points`). A point of weight w moves the
    # option's score by 2w: scores and stance values span -1..1, so a certain point reverses a
    # held stance whatever the agent's own reading (moved by w alone, an agent anchored on its
    # own evidence took points and never met its peers, whatever its stubbornness).
    scores = list(base)
    for (option, direction), weight in sorted(moves.items()):
        scores[option] += 2.0 * direction * weight
    adopted = [claims[k] for k in sorted(claims)]
    prefer = sorted(fact_gaps)
    adopted += [fact_gaps[f] for f in prefer]
    if not adopted:
        return RevisionOutput(**current.model_dump(), adopted=[], rejected=rejected[:MAX_POINTS])
    allowed = lawful(
        plans(task.options, scores, exclusive=task.exclusive),
        bounds(task).forbidden(),
        bounds(task).barred_first(),
    )
    plan = allowed[0]
    w = write_plan(
        task, plan, judgements, scores, prefer_facts=prefer, limit=task.max_recommendations
    )
    rationale = (
        f"{w.rationale} Revision: took {len(adopted)} critique point group(s) the engine "
        f"listed to answer or weigh; rejected {len(rejected)} point(s)."
    )
    return RevisionOutput(
        title=w.title,
        stances=plan.stances(),
        recommendations=w.recommendations,
        rationale=rationale[:1200],
        citations=list(dict.fromkeys([*w.citations, *current.citations]))[:8],
        facts_used=w.facts_used,
        adopted=[fit_text(a) for a in adopted[:MAX_POINTS]],
        rejected=[fit_text(r) for r in rejected[:MAX_POINTS]],
    )


def facts_by_id(facts: Sequence[Fact]) -> dict[str, Fact]:
    return {f.id: f for f in facts}
