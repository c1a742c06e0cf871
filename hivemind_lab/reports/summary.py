"""What a run report says, decided once in plain words for every outcome.

`summarise` turns a run's evidence into a `RunReport`: the status in a reader's words, an
executive summary (recommendation, support as a split, binding risks with their reasons, what
would change the answer), or for a run without a recommendation the closest set to passing and
the feasibility that would have passed it. The HTML template and the Markdown writer only lay
this out, so the two formats cannot say different things.

Words a board reads: agent ids, fact ids and citation ids in model text are replaced by what
they name, "1 plan(s)" reads "1 plan"; the agents' own justifications, settings and audit
figures are kept for auditors in an appendix.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from hivemind_lab.calibrations import Calibrations
from hivemind_lab.problems.model import Constraint
from hivemind_lab.reports.evidence import (
    OFFLINE_NOTICE,
    TEST_NOTICE,
    Contradiction,
    RunEvidence,
    SolutionScore,
)
from hivemind_lab.reports.models import ModelLine, model_lines
from hivemind_lab.runs.results import BindingVeto, Conclusion
from hivemind_lab.runs.status import words
from hivemind_lab.text import normalise
from hivemind_lab.wire import option_letter

if TYPE_CHECKING:
    from hivemind_lab.agents.schemas import Concern
    from hivemind_lab.problems.model import ExclusiveSource

_OPTION_SOURCES: dict[str, str] = {
    "toml": "given in the problem file",
    "front_matter": "given in the problem's front matter",
    "flag": "set on the command line",
    "request": "set by the request",
    "notebook": "set in the notebook's decision editor",
    "intake": "read by the model intake",
    "reader": "read from the question by rules",
    "agents": "none found, so the agents proposed their own courses",
}
_EXCLUSIVE_FROM: dict[ExclusiveSource, str] = {
    "problem": "set by the problem",
    "cli": "set on the command line",
    "request": "set by the request",
    "question": "read from the question",
    "default": "the default",
}
_PLURAL = re.compile(r"\b(\d+)(\s+(?:[\w-]+\s+)?)(\w+)\(s\)")
_BARE_PLURAL = re.compile(r"\b(\w+)\(s\)")


@dataclass(frozen=True)
class Banner:
    """A full-width notice above the header: ``danger`` (audit failed) or ``notice``."""

    kind: str
    text: str


@dataclass(frozen=True)
class ScoreLine:
    """One constraint's score of a plan with the reason the constraint agent gave."""

    constraint: str
    score: int
    reason: str
    concerns: tuple[str, ...]
    """Each concern in words (grade, option, answered or not, what it is), then risk signals."""
    below: bool
    """At or below the client's feasibility."""
    vetoes: tuple[str, ...] = ()
    """Each binding constraint that set the score to 0, in words."""
    tally: str = ""
    """The concerns behind the score in one phrase, gravest first ("1 critical concern not
    answered; 1 minor answered by the plan"), shown beside it; "" when there are none."""


@dataclass(frozen=True)
class Plan:
    """A plan as a reader sees it: title, steps, mean score, and each constraint's score."""

    title: str
    attempt: int
    """1 for the first set of plans, 2 after the first veto, ..."""
    mean: float
    recommendations: tuple[str, ...]
    scores: tuple[ScoreLine, ...]
    agents: int = 1
    """How many agents proposed this same plan in its attempt."""
    solution_id: str = ""
    """The solution shown (one of the agents' identical plans)."""
    quoted: bool = False
    """The title is the agents' own words (shown quoted), not the report's."""


@dataclass(frozen=True)
class Attempt:
    """One set of plans the practicality network judged."""

    number: int
    set_mean: float
    vetoed: bool
    plans: tuple[Plan, ...]
    why: str = "mean"
    """Why it was vetoed: ``mean`` (at or below the client's feasibility) or ``breach`` (every
    plan breaches a binding constraint, whatever the mean)."""


@dataclass(frozen=True)
class Closest:
    """For a run without a recommendation: the set that came closest to passing."""

    attempt: int
    set_mean: float
    plan: Plan
    would_pass_at: int
    """The highest feasibility at which that set would have passed (a veto is mean ≤ it)."""
    passed: bool = False
    """The set passed the review (the run stopped after it, before it concluded): no near
    miss."""
    breach: bool = False
    """The set was vetoed because every plan breaches a binding constraint."""


@dataclass(frozen=True)
class OptionLine:
    text: str
    source: str
    letter: str = ""
    """The option's letter, as the agents were shown it (A for the first): their own words
    name options by it."""


@dataclass(frozen=True)
class DecisionCard:
    """The decision at the top of the report: the options, where they came from, the kind of
    decision, and the constraints a plan is judged against."""

    options: tuple[OptionLine, ...]
    kind: str
    warning: str
    constraints: tuple[tuple[str, str], ...]
    """(constraint, what it forbids or weighs)."""


@dataclass(frozen=True)
class Minority:
    """Another view: its decision in the report's words (or its backers' title, quoted, when it
    takes no stance on the client's options), how many agents hold it and its mean score."""

    title: str
    support: str
    mean: float
    differs: str = ""
    """"the same decision as the recommendation" when it is ("" otherwise: the title says the
    decision)."""
    quoted: bool = False
    steps: tuple[str, ...] = ()
    """The view's own plan, in its backers' words (its first conclusion's representative): a
    split names each side with its own plan, not only its decision."""
    """The title is the agents' own words (shown quoted), not the report's."""


@dataclass(frozen=True)
class Objection:
    """An objection still standing against the plan's backers: the critic's own words (shown
    quoted), the option it is about and the source it cites."""

    claim: str
    source: str
    option: str = ""
    about: str = ""
    """What it objects to, by the plan's own stance on the option ("ruling out “X”")."""


@dataclass(frozen=True)
class ReviewLine:
    """One distinct concern of the feasibility review with every constraint that raised it
    (identical concerns from several constraint agents are said once)."""

    about: str
    """In the report's words: how grave, on which option, whether the plan answers it."""
    text: str
    """The constraint agents' own words (shown quoted)."""
    constraints: tuple[str, ...]
    grade: str = "major"
    mitigated: bool = False
    in_body: bool = True
    """The body keeps the concerns that could sink the plan (major or critical, not yet
    answered), the `BODY_CONCERNS` gravest of them; the rest go to the appendix."""


@dataclass(frozen=True)
class AgentNote:
    """One agent's own justification (appendix, for auditors)."""

    conclusion: str
    agent: str
    text: str


@dataclass
class RunReport:
    """Everything a run report says, in order."""

    title: str
    question: str
    """The question as the client wrote it ("" when the title already is the question)."""
    banners: list[Banner]
    status: str
    status_label: str
    happened: str
    decision: DecisionCard
    feasibility: int
    recommendation: Plan | None = None
    unbacked: Plan | None = None
    """A plan that rests on no evidence (``no_evidence``): shown for the record, not advice."""
    support: str = ""
    one_agent: bool = False
    why: list[str] = field(default_factory=list)
    rationale: str = ""
    """The monitor's combined rationale of the recommended plan (the model's synthesis of its
    backers' shared reasons and the objection still standing): quoted, never the report's own
    words."""
    risks: list[ScoreLine] = field(default_factory=list)
    change: list[str] = field(default_factory=list)
    closest: Closest | None = None
    minority: list[Minority] = field(default_factory=list)
    objections: list[Objection] = field(default_factory=list)
    review: list[ReviewLine] = field(default_factory=list)
    """The concerns behind the shown plan's scores, each once."""
    sources: list[str] = field(default_factory=list)
    attempts: list[Attempt] = field(default_factory=list)
    any_veto: bool = False
    settings: list[tuple[str, str]] = field(default_factory=list)
    agent_notes: list[AgentNote] = field(default_factory=list)
    models: list[ModelLine] = field(default_factory=list)
    """A run with a roster: which model backed what, with its calls, tokens and cost."""
    audit_ok: bool = True
    audit_line: str = ""
    audit_head: str = ""


def plural(n: int, word: str, many: str | None = None) -> str:
    """ "1 plan", "2 plans"."""
    return f"{n} {word if n == 1 else many or word + 's'}"


class Plain:
    """Model text in a reader's words: ids replaced by what they name, "(s)" resolved."""

    def __init__(self, evidence: RunEvidence) -> None:
        self.evidence = evidence
        facts = _facts(evidence)
        self.names: dict[str, str] = {fid: f"“{text}”" for fid, text in facts.items()}
        # constraint ids as the decision card numbers them (its list is in the same order)
        for n, constraint in enumerate(evidence.decision.constraints, 1):
            self.names[constraint.id] = f"the client's constraint {n}"
        agents = {a for c in evidence.result.conclusions for a in c.agents}
        agents |= {c.critic_id for c in evidence.critiques}
        agents |= {c.target_id for c in evidence.critiques}
        self.agents = sorted((a for a in agents if a), key=len, reverse=True)

    def __call__(self, text: str) -> str:
        out = self.evidence.justification_text_plain(text)
        for fid in sorted(self.names, key=len, reverse=True):
            out = re.sub(rf"(?<![\w.-]){re.escape(fid)}(?![\w-])", self.names[fid], out)
        for agent in self.agents:
            out = re.sub(rf"(?<![\w-]){re.escape(agent)}(?![\w-])", "an agent", out)
        out = _PLURAL.sub(
            lambda m: (
                m.group(1) + m.group(2) + (m.group(3) if m.group(1) == "1" else m.group(3) + "s")
            ),
            out,
        )
        out = _BARE_PLURAL.sub(lambda m: m.group(1) + "s", out)
        out = re.sub(r"\s*\[\s*\]", "", out)
        return " ".join(out.split())


def _facts(evidence: RunEvidence) -> dict[str, str]:
    """Fact id -> fact text, as the recorded decision gave them to the agents."""
    return {f.id: f.text for f in evidence.decision.facts}


def _decision_card(evidence: RunEvidence) -> DecisionCard:
    """The recorded decision: its options and where each came from, the kind of decision, and
    the client's constraints with the options each rules out."""
    decision, req = evidence.decision, evidence.request
    options = tuple(
        OptionLine(o.label, _OPTION_SOURCES.get(o.source, o.source), option_letter(i))
        for i, o in enumerate(decision.options)
    )
    if not options:
        kind = "Open question: no options were found, so the agents proposed their own courses."
    elif req.exclusive:
        kind = (
            "Choose one option (the others are rejected alternatives; "
            f"{_EXCLUSIVE_FROM[req.exclusive_source]})."
        )
    else:
        kind = f"Options may be combined or sequenced ({_EXCLUSIVE_FROM[req.exclusive_source]})."
    warning = ""
    if any(o.source == "reader" for o in decision.options):
        warning = (
            "These options were read from the question by rules, not given by the client: "
            "check that they are the choices really on the table."
        )
    named = []
    for c in decision.constraints:
        # A constraint is a sentence of the client's; the card lists them in one sentence.
        named.append((c.text.rstrip(" ."), _bars(c, list(decision.labels))))
    return DecisionCard(options, kind, warning, tuple(named))


def _bars(constraint: Constraint, labels: list[str]) -> str:
    """What a constraint does to the options, in plain words: "rules out A; B not before C"
    (or "B not first" when it names no option to come before)."""
    forbids = [labels[i] for i in constraint.forbids if 0 <= i < len(labels)]
    said = [f"rules out {', '.join(forbids)}"] if forbids else []
    later = [labels[i] for i in constraint.not_first if 0 <= i < len(labels)]
    if later:
        after = constraint.after
        before = labels[after] if after is not None and 0 <= after < len(labels) else ""
        said.append(f"{', '.join(later)} not {'before ' + before if before else 'first'}")
    return "; ".join(said)


def _score_lines(
    evidence: RunEvidence,
    solutions: list[SolutionScore],
    mean_by: dict[str, float] | None,
    plain: Plain,
) -> tuple[ScoreLine, ...]:
    """Per constraint: the score (the plan's, or the conclusion's mean), its reason and concerns."""
    threshold = evidence.feasibility
    constraints = list(mean_by) if mean_by else sorted({c for s in solutions for c in s.scores})
    options = list(evidence.decision.labels)
    rules = {c.id: c for c in evidence.decision.constraints}
    out = []
    for c in constraints:
        scored = [s for s in solutions if c in s.scores]
        score = round(mean_by[c]) if mean_by else (scored[0].scores[c] if scored else 0)
        reason = next((s.reasons.get(c, "") for s in scored if s.reasons.get(c)), "")
        vetoes = [_veto_words(v, options, rules) for s in scored for v in s.vetoes.get(c, ())]
        listed = list(dict.fromkeys(x for s in scored for x in s.concerns.get(c, ())))
        listed.sort(key=lambda x: (x.mitigated, _GRAVITY[x.grade]))  # unanswered, gravest first
        said = [_concern_words(x, options, plain) for x in listed[:_SHOWN_CONCERNS]]
        if len(listed) > _SHOWN_CONCERNS:
            said.append(f"{plural(len(listed) - _SHOWN_CONCERNS, 'more concern')} (in the audit)")
        flags = [f for s in scored for f in s.flags.get(c, ())]
        if flags:
            said.append("risk signals: " + ", ".join(dict.fromkeys(plain(f) for f in flags)))
        out.append(
            ScoreLine(
                c,
                score,
                plain(reason),
                tuple(dict.fromkeys(said)),
                score <= threshold,
                tuple(dict.fromkeys(vetoes)),
                _tally(listed),
            )
        )
    return tuple(out)


def _tally(concerns: list[Concern]) -> str:
    """How many concerns of each grade, unanswered first ("1 critical concern not answered;
    2 minor answered by the plan")."""
    parts = []
    for answered in (False, True):
        counts = {
            grade: sum(1 for x in concerns if x.grade == grade and x.mitigated == answered)
            for grade in _GRAVITY
        }
        graded = [f"{n} {grade}" for grade, n in counts.items() if n]
        if graded:
            total = sum(counts.values())
            said = ", ".join(graded) + (" concern" if total == 1 else " concerns")
            parts.append(f"{said} {'answered by the plan' if answered else 'not answered'}")
    return "; ".join(parts)


_GRAVITY = {"critical": 0, "major": 1, "minor": 2}
BODY_CONCERNS = 3
"""Unanswered major or critical concerns the body shows, gravest and most widely raised first;
the rest are listed in the appendix. A capable model's constraint agents raised ten major
concerns of about a hundred words each on one plan (a papermill run, 2026-12-04), which took
the body past an executive's reading (3,300 words)."""
_SHOWN_CONCERNS = 3
"""Concerns shown per score (unanswered and gravest first, under Feasibility review); the rest
are counted and stay in the audit."""


def _option_name(index: int | None, options: list[str]) -> str:
    return f"“{options[index]}”" if index is not None and 0 <= index < len(options) else ""


def _review(
    evidence: RunEvidence, solutions: list[SolutionScore], plain: Plain
) -> list[ReviewLine]:
    """The concerns behind the plan's scores, each distinct concern once with the constraints
    that raised it: unanswered and gravest first, then raised by the most constraints."""
    options = list(evidence.decision.labels)
    found: dict[tuple[str, str, str], list[str]] = {}
    order: dict[tuple[str, str, str], tuple[bool, int]] = {}
    grades: dict[tuple[str, str, str], str] = {}
    for s in solutions:
        for constraint, concerns in s.concerns.items():
            for x in concerns:
                on = _option_name(x.option, options)
                state = "answered by the plan" if x.mitigated else "not answered"
                about = f"{x.grade.capitalize()} concern{' on ' + on if on else ''}, {state}"
                key = (about, normalise(x.text), plain(x.text))
                if constraint not in found.setdefault(key, []):
                    found[key].append(constraint)
                order[key] = (x.mitigated, _GRAVITY[x.grade])
                grades[key] = x.grade
    ranked = sorted(found, key=lambda k: (*order[k], -len(found[k])))
    lines = []
    shown = 0
    for a, n, text in ranked:
        grade, mitigated = grades[(a, n, text)], order[(a, n, text)][0]
        grave = grade != "minor" and not mitigated and shown < BODY_CONCERNS
        shown += grave
        lines.append(
            ReviewLine(a, text, tuple(sorted(found[(a, n, text)])), grade, mitigated, grave)
        )
    return lines


def _decision_words(stances: dict[int, str], options: list[str]) -> dict[int, str]:
    said = {
        "pursue": "pursues “{}” now",
        "later": "keeps “{}” for later",
        "avoid": "rules out “{}”",
    }
    return {
        i: said.get(v, v + " “{}”").format(options[i])
        for i, v in stances.items()
        if i < len(options)
    }


def _decided(stances: dict[int, str], options: list[str]) -> str:
    """A plan's decision in the report's words, from its stances on the client's options
    ("Pursue “A” now; keep “B” for later; rule out “C”."); "" when it takes none."""
    named = {
        kind: " and ".join(f"“{options[i]}”" for i, v in sorted(stances.items()) if v == kind)
        for kind in ("pursue", "later", "avoid")
    }
    parts = [
        f"pursue {named['pursue']} now" if named["pursue"] else "",
        f"keep {named['later']} for later" if named["later"] else "",
        f"rule out {named['avoid']}" if named["avoid"] else "",
    ]
    said = "; ".join(p for p in parts if p)
    return f"{said[0].upper()}{said[1:]}." if said else ""


def _stances(evidence: RunEvidence, conclusion: Conclusion) -> dict[int, str]:
    """The shown plan's stance on each option (the first backer whose plan is the one shown)."""
    own = evidence.own_justifications(conclusion)
    solution = evidence.solutions.get(own[0].solution_id) if own else None
    return {st.option: st.stance for st in solution.stances} if solution else {}


def _minority(evidence: RunEvidence, top: Conclusion, plain: Plain) -> list[Minority]:
    """The other conclusions, each decision once: conclusions that take the same stances on the
    client's options (or, taking none, share a title) are one view, their agents counted
    together; each is titled by its decision in the report's words."""
    r = evidence.result
    options = list(evidence.decision.labels)
    ours = _stances(evidence, top)
    views: dict[tuple[tuple[int, str], ...] | str, list[Conclusion]] = {}
    for c in r.conclusions[1:]:
        taken = tuple(sorted(_stances(evidence, c).items()))
        views.setdefault(taken or normalise(_headline(c)), []).append(c)
    out: list[tuple[int, float, Minority]] = []
    for key, same in views.items():
        agents = sum(len(c.agents) for c in same)
        mean = sum(c.mean_score * len(c.agents) for c in same) / max(1, agents)
        stances = dict(key) if isinstance(key, tuple) else {}
        decided = _decided(stances, options).rstrip(".")
        view = Minority(
            decided or plain(_headline(same[0])),
            f"{agents} of {r.n_agents} agents",
            round(mean, 1),
            "the same decision as the recommendation" if stances and stances == ours else "",
            quoted=not decided,
            steps=tuple(plain(x) for x in same[0].recommendations),
        )
        out.append((agents, mean, view))
    out.sort(key=lambda v: (-v[0], -v[1]))
    return [view for _, _, view in out]


_OBJECTED = {
    "pursue": "pursuing “{}” now",
    "later": "keeping “{}” for later",
    "avoid": "ruling out “{}”",
}


def _objected(evidence: RunEvidence, top: Conclusion, objection: Contradiction) -> str:
    """What an objection (evidence for the opposite stance on an option) stands against, in
    words: the stance on that option of the backers it was raised against, read from their own
    plans ("" when they differ or take none), and whether the shown plan takes it too."""
    options = evidence.decision.labels
    k = objection.index
    if k is None or not 0 <= k < len(options):
        return ""
    plans = {j.agent_id: j.solution_id for j in top.justifications}
    held = set()
    for target in objection.targets:
        solution = evidence.solutions.get(plans.get(target, ""))
        held.add(
            next((st.stance for st in solution.stances if st.option == k), None)
            if solution
            else None
        )
    stance = held.pop() if len(held) == 1 else None
    said = _OBJECTED.get(stance) if stance else None
    if said is None:
        return ""
    if _stances(evidence, top).get(k) == stance:
        return said.format(options[k])
    n = len(objection.targets)
    return f"{said.format(options[k])}, as {plural(n, 'backer')} {'does' if n == 1 else 'do'}"


def _plan_title(evidence: RunEvidence, solution_id: str, title: str) -> tuple[str, bool]:
    """A plan's title in the report's words (its decision, from its stances on the client's
    options) and False; or, when it takes no stance, the agents' own title and True (quoted)."""
    solution = evidence.solutions.get(solution_id)
    stances: dict[int, str] = {st.option: st.stance for st in solution.stances} if solution else {}
    decided = _decided(stances, list(evidence.decision.labels)).rstrip(".")
    return (decided, False) if decided else (title, True)


def _concern_words(concern: Concern, options: list[str], plain: Plain) -> str:
    """A constraint agent's concern as a reader reads it: how grave, on which option, whether
    the plan already answers it, and what it is."""
    on = _option_name(concern.option, options)
    state = "answered by the plan" if concern.mitigated else "not answered"
    return f"{concern.grade}{' on ' + on if on else ''}, {state}: {plain(concern.text)}"


def _veto_words(veto: BindingVeto, options: list[str], rules: dict[str, Constraint]) -> str:
    """A binding veto: the option the plan pursues and the client's rule that forbids it (or
    allows it only later: then the words say what must come before)."""
    found = rules.get(veto.constraint)
    rule = found.text if found is not None else None
    said = f"Ruled out: it pursues {_option_name(veto.option, options) or 'a forbidden option'}"
    if found is not None and veto.option in found.not_first:
        before = _option_name(found.after, options)
        said += (
            f" now, which the client's constraint “{rule}” allows only later"
            f"{' (not before ' + before + ')' if before else ' (not first)'}"
        )
    else:
        said += (
            f", which the client's constraint “{rule}” forbids" if rule else ", which is forbidden"
        )
    return said + (" (marked by the agent)" if veto.by == "model" else "")


def _attempts(evidence: RunEvidence, plain: Plain) -> list[Attempt]:
    """Each judged set, its identical plans shown once with how many agents proposed them."""
    out = []
    for gen in evidence.generations():
        grouped: dict[tuple[str, bool], list[SolutionScore]] = {}
        for s in gen.solutions:  # one row per decision (or per title, taking none)
            title, quoted = _plan_title(evidence, s.solution_id, plain(s.title))
            grouped.setdefault((normalise(title), quoted), []).append(s)
        plans = []
        for (_, quoted), members in grouped.items():
            first = members[0]
            recs = evidence.recommendations(first.solution_id)
            plans.append(
                Plan(
                    title=_plan_title(evidence, first.solution_id, plain(first.title))[0],
                    quoted=quoted,
                    attempt=gen.verdict.regeneration + 1,
                    mean=first.mean,
                    recommendations=tuple(plain(r) for r in recs),
                    scores=_score_lines(evidence, [first], None, plain),
                    agents=len(members),
                    solution_id=first.solution_id,
                )
            )
        plans.sort(key=lambda p: -p.mean)
        out.append(
            Attempt(
                gen.verdict.regeneration + 1,
                round(gen.verdict.mean_score, 1),
                gen.verdict.vetoed,
                tuple(plans),
                "mean" if gen.verdict.mean_score <= gen.verdict.feasibility else "breach",
            )
        )
    return out


def would_pass_at(mean: float) -> int:
    """The highest whole feasibility a set with this mean passes (a veto is mean ≤ feasibility)."""
    return math.ceil(round(mean, 6)) - 1


def _closest(attempts: list[Attempt]) -> Closest | None:
    judged = [a for a in attempts if a.plans]
    if not judged:
        return None
    # a set that passed first, then one vetoed on its mean, then one vetoed for a breach (no
    # feasibility would have passed it), each by its mean
    best = max(judged, key=lambda a: (not a.vetoed, a.why != "breach", a.set_mean, -a.number))
    return Closest(
        best.number,
        best.set_mean,
        best.plans[0],
        would_pass_at(best.set_mean),
        passed=not best.vetoed,
        breach=best.why == "breach",
    )


def _support(evidence: RunEvidence, top: Conclusion) -> tuple[str, bool]:
    n, total = len(top.agents), evidence.result.n_agents
    if total <= 1:
        return (
            "One agent only: the whole knowledge base fitted one agent's reading, so there was "
            "no deliberation; this is one agent's plan.",
            True,
        )
    others = total - n
    if n == total:
        return f"All {total} agents back this plan.", False
    return (
        f"{n} of {total} agents back this plan; {plural(others, 'agent')} backed "
        f"{'another' if len(evidence.result.conclusions) <= 2 else 'other'} "
        f"{'plan' if len(evidence.result.conclusions) <= 2 else 'plans'} (a split, not a "
        "consensus).",
        False,
    )


def _why(evidence: RunEvidence, top: Conclusion, rationale: str) -> list[str]:
    """Why the backers chose the plan, besides the monitor's combined rationale (quoted on its
    own, `RunReport.rationale`): the client's facts the shown plan relies on that neither its
    steps nor that rationale already quote, then where the backers differ."""
    facts = _facts(evidence)
    out = []
    own = evidence.own_justifications(top)
    shown = evidence.solutions.get(own[0].solution_id) if own else None
    used: dict[str, int] = {}
    stances: dict[int, dict[str, int]] = {}
    for sid in top.solution_ids:
        solution = evidence.solutions.get(sid)
        if solution is None:
            continue
        for fid in solution.facts_used:
            used[fid] = used.get(fid, 0) + 1
        for st in solution.stances:
            counts = stances.setdefault(st.option, {})
            counts[st.stance] = counts.get(st.stance, 0) + 1
    steps = normalise(" ".join(top.recommendations) + " " + rationale)
    first = list(shown.facts_used) if shown is not None else []
    ranked = [f for f in first if f in facts] + [
        f for f, _ in sorted(used.items(), key=lambda x: -x[1]) if f in facts and f not in first
    ]
    # The steps or the rationale quote the rest (a quote may drop the fact's final full stop).
    unquoted = [facts[f] for f in ranked if normalise(facts[f].rstrip(".")) not in steps][:3]
    if unquoted:
        out.append(
            "The client's facts it rests on: "
            + "; ".join(f"“{t.rstrip('.')}”" for t in unquoted)
            + "."
        )
    options = evidence.decision.labels
    verbs = {"pursue": "pursue it now", "later": "keep it for later", "avoid": "rule it out"}
    members = len(top.solution_ids)
    for index, counts in sorted(stances.items()):
        if len(counts) > 1 and index < len(options):
            split = ", ".join(
                f"{counts[k]} {verbs.get(k, k)}"
                for k in ("pursue", "later", "avoid")
                if k in counts
            )
            out.append(f"Its {members} backers differ on “{options[index]}”: {split}.")
    return out


def _question(text: str, title: str) -> str:
    """The client's question as they wrote it, its line breaks kept (a memo's paragraphs, list
    and table rows stay apart), without a first line that only repeats the report's title (a
    Markdown problem's own heading); "" when the question is the title."""
    lines = text.strip().splitlines()
    if lines and normalise(lines[0].lstrip("# ")) == normalise(title):
        lines = lines[1:]
    said = "\n".join(line.rstrip() for line in lines).strip()
    return "" if normalise(said) in ("", normalise(title)) else said


def summarise(evidence: RunEvidence) -> RunReport:
    """The report of one run, in a reader's words, for any status."""
    r, req = evidence.result, evidence.request
    plain = Plain(evidence)
    said = words(r.status)
    attempts = _attempts(evidence, plain)
    question = _question(req.problem, evidence.title)
    report = RunReport(
        title=evidence.title,
        question=question,
        banners=_banners(evidence),
        status=r.status,
        status_label=said.label,
        happened=said.happened,
        decision=_decision_card(evidence),
        feasibility=evidence.feasibility,
        attempts=attempts,
        any_veto=any(a.vetoed for a in attempts),
    )
    if r.conclusions:
        top = r.conclusions[0]
        last = evidence.generations()[-1].solutions if evidence.generations() else []
        members = [s for s in last if s.solution_id in set(top.solution_ids)]
        # The plan shown is one backer's: its reasons and concerns come first, and the review
        # lists its concerns alone (each backer's plan drew its own, near-identical wording
        # from every constraint agent: one concern printed once per backer).
        own = evidence.own_justifications(top)
        shown_id = own[0].solution_id if own else None
        members.sort(key=lambda m: m.solution_id != shown_id)
        shown = [m for m in members if m.solution_id == shown_id] or members
        scores = _score_lines(evidence, members, dict(top.scores), plain)
        decided = _decided(_stances(evidence, top), list(evidence.decision.labels))
        plan = Plan(
            title=decided or plain(_headline(top)),
            quoted=not decided,
            attempt=r.regenerations + 1,
            mean=round(top.mean_score, 1),
            recommendations=tuple(plain(x) for x in top.recommendations),
            scores=scores,
            agents=len(top.agents),
        )
        report.support, report.one_agent = _support(evidence, top)
        report.review = _review(evidence, shown, plain)
        for c in r.conclusions:
            for j in c.justifications:
                report.agent_notes.append(
                    AgentNote(
                        _headline(c),
                        _agent_and_model(r.model_of(j.agent_id), j.agent_id),
                        evidence.justification_text(c, j.solution_id, j.rationale),
                    )
                )
        if not said.recommends:  # plans without evidence: for the record, not advice
            steps = tuple(x for x in plan.recommendations if normalise(x) != normalise(plan.title))
            report.unbacked = replace(plan, recommendations=steps)  # the title says the first
            report.change = _what_changes(evidence, report)
        else:
            report.recommendation = plan
            if r.status == "converged" and not report.one_agent and len(top.agents) < r.n_agents:
                report.happened = (
                    "The agents' plans settled into few enough distinct conclusions to stop, and "
                    "the plans passed the practicality review; the agents did not all agree (see "
                    "the split below)."
                )
            # the model's synthesis, in a reader's words (baselines write none)
            if evidence.manifest.strategy == "deliberation":
                report.rationale = plain(" ".join(top.combined_rationale.split()))
            report.why = _why(evidence, top, report.rationale)
            ordered = sorted(scores, key=lambda s: s.score)
            report.risks = [s for s in ordered if s.below] or ordered[:2]
            report.minority = _minority(evidence, top, plain)
            report.objections = [
                Objection(plain(x.claim), x.source, x.option, _objected(evidence, top, x))
                for x in evidence.contradictions(top)
            ]
            report.sources = evidence.cited(top)
            report.change = _what_changes(evidence, report)
    else:
        report.closest = _closest(attempts)
        if report.closest is not None:
            report.review = _review(
                evidence,
                [
                    s
                    for g in evidence.generations()
                    if g.verdict.regeneration + 1 == report.closest.attempt
                    for s in g.solutions
                    if s.solution_id == report.closest.plan.solution_id
                ],
                plain,
            )
        report.change = _what_changes(evidence, report)
    _quote_facts_once(report, [f.text for f in evidence.decision.facts])
    profile = req.profile if isinstance(req.profile, str) else ", ".join(req.profile)
    report.settings = [
        ("Sufficiency (halt at this many distinct conclusions)", str(req.sufficiency)),
        ("Feasibility (veto a set whose mean score is at or below it)", str(req.feasibility)),
        ("Density (tokens of knowledge per agent)", str(req.density)),
        ("Constraint profile", profile),
        *_calibration_settings(evidence.calibrations),
        ("Agents", str(r.n_agents)),
        (
            "Rounds",
            f"{r.rounds} in the final attempt, {r.total_rounds} in all; "
            f"{plural(r.regenerations, 'regeneration')}",
        ),
        (
            "Model",
            evidence.model_label()
            if not r.models
            else f"{plural(len(r.models), 'model')} (a roster): see the models behind the agents",
        ),
        (
            "Cost",
            f"{r.usage.calls} model calls · {r.usage.tokens:,} tokens · {evidence.cost_label()}"
            + (
                f" · {r.usage.cached_prompt_tokens:,} of {r.usage.prompt_tokens:,} prompt tokens "
                "reused from the server's cache"
                if r.usage.cached_prompt_tokens
                else ""
            )
            + _planned(evidence),
        ),
        ("Wall time of the deliberation", f"{r.wall_time_s:.1f} s"),
        ("Run status (as recorded)", r.status),
    ]
    report.models = model_lines(r, evidence.critiques)
    a = evidence.audit
    report.audit_ok = a.ok
    report.audit_head = a.head
    report.audit_line = (
        f"Audit trail intact: all {a.total} records verified."
        if a.ok
        else f"Audit trail FAILED at record {a.first_bad} of {a.total}: {a.reason}; "
        f"{a.verified} records before it verified."
    )
    return report


def _agent_and_model(model: str | None, agent: str) -> str:
    """An agent as the appendix names it: with its model when a roster gave it one."""
    return agent if model is None else f"{agent} ({model})"


def same_fact(fact: str) -> str:
    """What stands, inside an agent's quoted words, for a client fact the body already quoted:
    its first words, so the reader knows which (square brackets: the report's words inside a
    quotation)."""
    lead = " ".join(fact.split()[:6]).rstrip(",;:")
    return f"[the client fact quoted above that begins “{lead}”]"


def _quote_facts_once(report: RunReport, facts: list[str]) -> None:
    """Each long client fact is quoted once in the body, in reading order: where the plan's
    combined rationale, a later constraint reason or a concern quotes it again it reads as
    `same_fact` (in one sample run five constraint agents each quoted the same 130-character
    fact in their reasons and concerns)."""
    long = sorted({f.strip().rstrip(".") for f in facts if len(f) > 60}, key=len, reverse=True)
    seen: set[str] = set()

    def once(text: str) -> str:
        for fact in long:
            if fact in text:
                if fact in seen:
                    text = text.replace(fact, same_fact(fact))
                seen.add(fact)
        return text

    def plan(p: Plan | None) -> Plan | None:
        if p is None:
            return None
        return replace(p, scores=tuple(replace(s, reason=once(s.reason)) for s in p.scores))

    # What the report says whole before any score table: a recommendation's steps and its
    # why, or an unbacked plan's steps. A vetoed run's closest plan shows its title and scores
    # only, so a fact in its steps is not yet quoted (its first reason must quote it whole).
    rec, unbacked = report.recommendation, report.unbacked
    if rec is not None:
        first = [*rec.recommendations]
    else:
        first = list(unbacked.recommendations) if unbacked is not None else []
    for text in first:
        once(text)
    report.rationale = once(report.rationale)
    for text in report.why:
        once(text)
    report.recommendation = plan(report.recommendation)
    report.unbacked = plan(report.unbacked)
    if report.closest is not None:
        closest = plan(report.closest.plan)
        assert closest is not None
        report.closest = replace(report.closest, plan=closest)
    report.review = [replace(c, text=once(c.text)) for c in report.review]


def _calibration_settings(calibrations: Calibrations) -> list[tuple[str, str]]:
    """Each calibration the run used, named after its field (a new calibration shows too)."""
    return [
        (name.replace("_", " ").capitalize(), str(getattr(calibrations, name)))
        for name in Calibrations.model_fields
    ]


def _headline(conclusion: Conclusion) -> str:
    title = conclusion.title.strip()
    if title.endswith(("…", "...")) and conclusion.recommendations:
        return conclusion.recommendations[0]
    return title


def _what_changes(evidence: RunEvidence, report: RunReport) -> list[str]:
    """What a reader could change to get a (different) answer."""
    f = evidence.feasibility
    r = evidence.result
    out = []
    if report.recommendation is not None:
        rec = report.recommendation
        final = r.vetoes[-1].mean_score if r.vetoes else rec.mean
        whole = f"all {r.n_agents} agents' plans" if r.n_agents > 1 else "the plan"
        out.append(
            f"A feasibility of {math.ceil(round(final, 6))} or higher would have vetoed it: the "
            f"review judges the set as a whole, and {whole} averaged {final:.1f} (the client's "
            f"feasibility is {f})."
        )
        if report.minority:
            m = report.minority[0]
            if m.quoted:
                view = f"in its backers' words “{m.title.rstrip('.')}”"
            else:
                view = f"{m.title[0].lower()}{m.title[1:]}"
            same = f" ({m.differs})" if m.differs else ""
            out.append(f"The strongest alternative, with {m.support} behind it: {view}{same}.")
        out += _few_agents(evidence)
        if report.risks and final > f:
            # The veto is on the set's mean: no one score sinks a plan by itself.
            worst = report.risks[0]
            alike = len({s.score for s in rec.scores}) == 1
            weakest = (
                f"Every constraint scored {worst.score}"
                if alike and len(rec.scores) > 1
                else f"The weakest score is {worst.constraint} ({worst.score})"
            )
            out.append(
                f"{weakest}; for a veto the set's mean would have to fall by {final - f:.1f} "
                f"points, to {f} or below."
            )
        return out
    c = report.closest
    if c is not None and not c.passed and not c.breach:  # no lower feasibility passes these
        out.append(
            f"The best set of plans reached a mean of {c.set_mean:.1f} (attempt {c.attempt}); "
            f"a feasibility of {c.would_pass_at} or lower would have passed it "
            f"(the client's is {f})."
        )
    if r.status == "abstained":
        out.append(
            "More regenerations would not help: the agents had no plan left that was not a "
            "repeat. A broader knowledge base, a lower density (more agents), or a lower "
            "feasibility would."
        )
    elif r.status == "vetoed_out":
        allowed = evidence.manifest.limits.max_regenerations
        out.append(
            f"Allowing more regenerations gives the agents more attempts (this run allowed "
            f"{allowed}: --max-regenerations {allowed + 2}, say)."
        )
    elif r.status == "budget_exhausted":
        limits, used = evidence.manifest.limits, r.usage
        budget = (
            f"its budget of {limits.max_tokens:,} tokens"
            if limits.max_tokens is not None
            else f"its budget of ${limits.max_cost_usd}"
            if limits.max_cost_usd is not None
            else "its budget"
        )
        out.append(
            f"The run spent {used.tokens:,} tokens in {plural(used.calls, 'model call')} against "
            f"{budget}, and stopped "
            + (
                f"in round {r.rounds} of attempt {r.regenerations + 1}."
                if r.rounds or r.regenerations
                else "while the agents made their first proposals."
            )
        )
        out.append(_budget_needed(evidence))
    elif r.status == "no_evidence":
        out.append(
            "Add documents that bear on the question to the knowledge base, or check that the "
            "question names the client's own terms."
        )
        out += _few_agents(evidence)
    if c is None and not out:
        out.append("No set of plans was scored.")
    return out


def _budget_needed(evidence: RunEvidence) -> str:
    """What a stopped run would need: the calls one attempt of its size plans, priced at the
    tokens per call it spent, as a --max-tokens to run it again with."""
    from hivemind_lab.agents.usage import planned_calls

    m, used = evidence.manifest, evidence.result.usage
    calls = planned_calls(
        evidence.result.n_agents,
        len(m.constraints),
        max_rounds=m.limits.max_rounds,
        critique_mode=m.request.critique_mode,
    )
    if not used.calls or not used.tokens:
        return (
            f"One attempt of this run plans about {calls:,} model calls; run it again with a "
            "larger --max-tokens (a resumed run keeps the budget it started with)."
        )
    per_call = used.tokens / used.calls
    needed = float(f"{calls * per_call:.2g}")  # two significant figures: an estimate
    return (
        f"One attempt of this run ({plural(evidence.result.n_agents, 'agent')}, "
        f"{plural(len(m.constraints), 'constraint')}, up to {plural(m.limits.max_rounds, 'round')}) "
        f"makes up to about {calls:,} model calls, up to about {needed:,.0f} tokens at the "
        f"{per_call:,.0f} tokens per call this run spent; each regeneration after a veto costs "
        f"as much again. Run it again, into a new directory, with --max-tokens {needed:.0f} or more (a resumed run "
        "keeps the budget it started with)."
    )


def _few_agents(evidence: RunEvidence) -> list[str]:
    """A deliberation of fewer than three agents is hardly one: say how to get more."""
    n = evidence.result.n_agents
    if not 0 < n < 3:
        return []
    return [
        f"Only {plural(n, 'agent')} took part: at {evidence.request.density:,} tokens of "
        "knowledge per agent (--density) the knowledge base filled "
        f"{'one agent' if n == 1 else 'two agents'}; a lower --density or a larger knowledge "
        "base gives more agents, and more views to weigh."
    ]


def _banners(evidence: RunEvidence) -> list[Banner]:
    out = []
    a = evidence.audit
    if not a.ok:
        out.append(
            Banner(
                "danger",
                f"Audit verification FAILED at record {a.first_bad} of {a.total} ({a.reason}). "
                "This report was forced: do not rely on it.",
            )
        )
    if evidence.offline:
        test = evidence.manifest.backend == "test"
        out.append(Banner("notice", TEST_NOTICE if test else OFFLINE_NOTICE))
    return out


def _planned(evidence: RunEvidence) -> str:
    """What the run's plan expected (``plan.json``, written by ``deliberate``), beside what it
    made; nothing when the run has no plan or it cannot be read."""
    import json

    path = evidence.run_dir / "plan.json"
    try:
        plan = json.loads(path.read_text(encoding="utf-8"))
        calls, tokens = int(plan["calls"]), int(plan["prompt_tokens"] + plan["completion_tokens"])
    except (OSError, ValueError, KeyError, TypeError):
        return ""
    return f" · planned before the run: {calls} calls, {tokens:,} tokens"
