"""The practicality network: one constraint agent per feasibility constraint.

Constraint agents see solutions only as `SolutionView` (title and recommendations): the type
itself has no room for theoretical justification, as the spec requires.
"""

from __future__ import annotations

import asyncio
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple, TypeVar

from hivemind_lab.agents.caller import AgentCaller
from hivemind_lab.agents.schemas import (
    MAX_SCORED,
    BatchScoreOutput,
    BatchScoreTask,
    DecisionContext,
    Evidence,
    ScoreItem,
    ScoreOutput,
    ScoreTask,
    SolutionView,
)
from hivemind_lab.errors import InputError, did_you_mean
from hivemind_lab.inputs import ScoreMode
from hivemind_lab.knowledge.documents import load_documents
from hivemind_lab.knowledge.retrieval import RetrievalIndex, split_passages
from hivemind_lab.problems.model import ConstraintKind
from hivemind_lab.runs.results import BindingVeto, ConstraintScore, PracticalityVerdict
from hivemind_lab.tokens import TokenCounter

EVIDENCE_K = 4
T = TypeVar("T")


@dataclass(frozen=True)
class ConstraintAgent:
    """A constraint agent with its own constraint knowledge."""

    constraint: str
    index: RetrievalIndex
    red_flags: Mapping[str, tuple[str, ...]]
    """Document id → the red flags its front matter lists (lower case)."""
    mitigations: Mapping[str, tuple[str, ...]]
    """Document id → the mitigations its front matter lists (lower case)."""

    @property
    def id(self) -> str:
        return f"constraint-{self.constraint}"

    def evidence(self, query: str) -> tuple[Evidence, ...]:
        return tuple(Evidence.of(h) for h in self.index.search(query, EVIDENCE_K))

    def signals(self, evidence: Sequence[Evidence]) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The red flags and mitigations of the documents ``evidence`` was retrieved from, in
        retrieval order: a score task carries the signals of the knowledge that bears on the
        solution, not every phrase of the constraint's corpus (a career choice was sent
        "shrinkflation" and "celebrity endorsement" when every document's list went along)."""
        documents = list(dict.fromkeys(e.document_id for e in evidence))
        flags = (f for d in documents for f in self.red_flags.get(d, ()))
        mitigations = (m for d in documents for m in self.mitigations.get(d, ()))
        return tuple(dict.fromkeys(flags)), tuple(dict.fromkeys(mitigations))


def constraint_folders(root: str | Path) -> list[str]:
    """The constraints with knowledge under ``root``: its sub-folders."""
    root = Path(root)
    return sorted(p.name for p in root.iterdir() if p.is_dir()) if root.is_dir() else []


def load_profiles(root: str | Path) -> dict[str, tuple[str, ...]]:
    """Profiles from ``<root>/profiles.toml``: name → constraint names.

    A constraint corpus without that file is a set of constraint folders and nothing more, so
    every named profile puts all of them on the network (the manifest lists which)."""
    root = Path(root)
    path = root / "profiles.toml"
    if not path.exists():
        folders = constraint_folders(root)
        if not folders:
            raise InputError(
                "practicality_kb",
                f"{str(root)!r} holds no constraint folders (one folder of documents per "
                "constraint, e.g. legal/, financial/) and no profiles.toml",
            )
        return {"*": tuple(folders)}
    try:
        raw = tomllib.loads(path.read_text("utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise InputError("practicality_kb", f"cannot read {str(path)!r} ({exc})") from None
    profiles: dict[str, tuple[str, ...]] = {}
    for name, body in raw.items():
        listed = body.get("constraints") if isinstance(body, dict) else None
        if (
            not isinstance(listed, list)
            or not listed
            or not all(isinstance(c, str) for c in listed)
        ):
            raise InputError(
                "practicality_kb",
                f"{str(path)!r}: profile {name!r} needs a table with constraints = [...] "
                "(a non-empty list of constraint folder names)",
            )
        profiles[name] = tuple(listed)
    return profiles


def resolve_constraints(root: str | Path, profile: str | Sequence[str]) -> tuple[str, ...]:
    """The constraint names of a named profile or a custom list (each must have knowledge)."""
    root = Path(root)
    if isinstance(profile, str):
        profiles = load_profiles(root)
        if "*" in profiles:  # no profiles.toml: every constraint folder
            return profiles["*"]
        if profile not in profiles:
            raise InputError(
                "profile",
                f"unknown profile {profile!r}",
                allowed=", ".join(sorted(profiles)) + " or a list of constraints",
            )
        constraints = profiles[profile]
    else:
        constraints = tuple(profile)
    available = constraint_folders(root)
    for name in constraints:
        if name not in available:
            # A lone unknown name is most often a mistyped profile ("entreprise").
            named = [] if isinstance(profile, str) else sorted(set(load_profiles(root)) - {"*"})
            allowed = ", ".join(available)
            if named:
                allowed = f"{' or '.join(named)}, or a comma-separated list of {allowed}"
            hint = did_you_mean(name, named) if len(constraints) == 1 else ""
            if hint:
                raise InputError(
                    "profile", f"unknown profile {name!r}; {hint.strip()}", allowed=allowed
                )
            hint = did_you_mean(name, available)
            raise InputError(
                "profile",
                f"no constraint knowledge for {name!r} in {str(root)!r}"
                + (f"; {hint.strip()}" if hint else ""),
                allowed=allowed,
            )
    return tuple(constraints)


def build_constraint_agents(
    root: str | Path, constraints: Sequence[str], *, counter: TokenCounter | None = None
) -> list[ConstraintAgent]:
    """One agent per constraint, indexing ``<root>/<constraint>/*.md``."""
    agents = []
    for name in constraints:
        docs = load_documents(Path(root) / name, counter=counter)
        passages = [p for d in docs for p in split_passages(d.id, d.text, topics=d.topics)]
        agents.append(
            ConstraintAgent(
                constraint=name,
                index=RetrievalIndex(passages),
                red_flags={d.id: tuple(f.lower() for f in d.red_flags) for d in docs},
                mitigations={d.id: tuple(m.lower() for m in d.mitigations) for d in docs},
            )
        )
    return agents


GRADE_PENALTY: dict[str, float] = {"minor": 6.0, "major": 15.0, "critical": 35.0}
"""Points an unmitigated concern moves the model's score at the extremes of severity (0 and
1): a minor one about a sixth of a rubric step below a major one, a critical one enough to
cross a rubric anchor alone."""
NEUTRAL_SEVERITY = 0.5
"""The severity at which the model's score stands as it gave it."""


def severity_factor(severity: float) -> float:
    """How strict the network is beyond the model's own judgement: 0 at `NEUTRAL_SEVERITY` and
    below, rising straight to 1 at severity 1 (each unmitigated concern counted a second time)."""
    return max(0.0, (severity - NEUTRAL_SEVERITY) / (1.0 - NEUTRAL_SEVERITY))


LENIENT_SHARE = 0.5
"""Share of the distance to 100 a fully lenient network (severity 0) gives every score."""


def constraint_score(output: ScoreOutput, severity: float) -> float:
    """A constraint agent's score of a solution, with severity acting once.

    The rubric asks the model for a score that already weighs its concerns ("75 manageable
    concerns with known mitigations; 50 serious concerns …"), so at the neutral severity (0.5,
    the default) that score stands. Severity is the network's strictness relative to the
    model's own:

    - stricter (above 0.5): each unmitigated concern is weighed again, its grade's
      `GRADE_PENALTY` times `severity_factor` taken off;
    - more lenient (below 0.5): every score gets the benefit of the doubt alike, a share of its
      distance to 100 rising to `LENIENT_SHARE` at severity 0, whatever its concerns. Giving
      the concerns back instead let a plan the model scored 60 with two critical concerns pass
      a clean plan it scored 85 (100 against 85 at severity 0): a lenient network must never
      prefer the riskier plan, and this keeps the model's order.

    Clipped to 0..100. Pure; monotone (non-increasing) in severity. Subtracting the concerns
    again at the default (what this did before 2026-12-03) counted each one twice: constraint
    agents that scored sound plans 70–85 gave set means near 51 and vetoed plans they judged
    feasible.

    Example: score 75 with one unmitigated major and one mitigated minor concern: 75 at 0.5,
    75 - 7.5 = 67.5 at 0.75, 75 - 15 = 60 at 1; 75 + 25 × 0.5 = 87.5 at 0.
    """
    score = float(output.score)
    if severity < NEUTRAL_SEVERITY:
        lenient = LENIENT_SHARE * (NEUTRAL_SEVERITY - severity) / NEUTRAL_SEVERITY
        return min(100.0, score + (100.0 - score) * lenient)
    penalty = sum(GRADE_PENALTY[c.grade] for c in output.concerns if not c.mitigated)
    return min(100.0, max(0.0, score - penalty * severity_factor(severity)))


BINDING_AGENT: dict[ConstraintKind, str | None] = {
    "legal": "legal",
    "regulatory": "regulatory",
    "financial": "financial",
    "operational": "operational",
    "social": "social",
    "deadline": "operational",
    "other": None,
}
"""The constraint agent that answers for a binding constraint of each kind (a deadline bounds
execution: operational). When the network has no agent of that kind, every constraint agent
answers for it: a legal ban does not lapse because no legal agent sits on the network."""


class Bound(NamedTuple):
    """A constraint agent's score after binding constraints are applied."""

    score: int
    vetoes: tuple[BindingVeto, ...]
    """Why the score is 0 (empty: the score stands)."""


def answers_for(kind: ConstraintKind, agent: str, network: Sequence[str]) -> bool:
    """Whether the constraint agent ``agent`` (on a network of ``network``) answers for a
    binding constraint of ``kind``."""
    owner = BINDING_AGENT[kind]
    return agent == owner if owner in network else True


def apply_binding(
    score: int,
    output: ScoreOutput,
    context: DecisionContext,
    solution: SolutionView,
    *,
    agent: str,
    network: Sequence[str],
) -> Bound:
    """Veto a solution that pursues now an option a binding constraint forbids or bars as a
    first move.

    The decision's own record of what each constraint forbids or allows only later
    (``not_first``) decides, whatever score or wording the model gave: the agent answering for
    that constraint's kind (`answers_for`) scores the solution 0. A ``not_first`` option the
    solution sequences (``later``) is no breach. The model's own violations veto too, when they
    name a constraint of the decision and an option the solution pursues now. An option a
    constraint only limits is left to the score. Pure.
    """
    pursued = {s.option for s in solution.stances if s.stance == "pursue"}
    vetoes: dict[tuple[str, int], BindingVeto] = {}
    for constraint in context.constraints:
        if not answers_for(constraint.kind, agent, network):
            continue
        for option in sorted(pursued & {*constraint.forbids, *constraint.not_first}):
            vetoes[constraint.id, option] = BindingVeto(
                constraint=constraint.id, option=option, by="decision"
            )
    known = {c.id for c in context.constraints}
    for violation in output.violations:
        if violation.option in pursued and violation.constraint in known:
            vetoes.setdefault(
                (violation.constraint, violation.option),
                BindingVeto(constraint=violation.constraint, option=violation.option, by="model"),
            )
    found = tuple(vetoes.values())
    return Bound(0 if found else score, found)


def rotation(items: Sequence[T], k: int) -> list[T]:
    """``items`` rotated left by ``k``: the k-th constraint agent reads a batch starting at its
    k-th solution, so a model's leaning on the first (or last) solution it reads falls on a
    different solution for each agent of the network instead of always on the same one."""
    if not items:
        return []
    r = k % len(items)
    return [*items[r:], *items[:r]]


async def score(
    caller: AgentCaller,
    agents: Sequence[ConstraintAgent],
    solutions: Sequence[tuple[str, SolutionView]],
    *,
    severity: float,
    context: DecisionContext | None = None,
    mode: ScoreMode = "per_solution",
) -> list[ConstraintScore]:
    """Every constraint agent scores every solution 0-100, seeing the client's problem,
    options and facts but never the theory agents' justifications.

    ``batched`` asks each agent once for all the solutions (its evidence for each, shared
    passages once), each solution judged alone on the absolute rubric and the order rotated per
    agent (`rotation`); the scores come back in the same order as ``per_solution``'s, and the
    engine's arithmetic after the model is the same for both.
    """
    fields = dict(context) if context is not None else {"problem": ""}
    network = [a.constraint for a in agents]

    def scored(
        agent: ConstraintAgent,
        solution_id: str,
        view: SolutionView,
        out: ScoreOutput,
        task: DecisionContext,
    ) -> ConstraintScore:
        bound = apply_binding(
            round(constraint_score(out, severity)),
            out,
            task,
            view,
            agent=agent.constraint,
            network=network,
        )
        return ConstraintScore(
            constraint=agent.constraint,
            solution_id=solution_id,
            score=bound.score,
            reason=out.reason,
            flags=tuple(out.flags),
            vetoes=bound.vetoes,
            model_score=out.score if bound.vetoes else None,
            concerns=tuple(out.concerns),
        )

    async def one(agent: ConstraintAgent, solution_id: str, view: SolutionView) -> ConstraintScore:
        evidence = agent.evidence(view.text())
        red_flags, mitigations = agent.signals(evidence)
        task = ScoreTask(
            **fields,
            constraint=agent.constraint,
            solution_id=solution_id,
            solution=view,
            evidence=evidence,
            red_flags=red_flags,
            mitigations=mitigations,
        )
        out = await caller.ask(agent.id, task, ScoreOutput)
        return scored(agent, solution_id, view, out, task)

    async def many(
        k: int, agent: ConstraintAgent, group: Sequence[tuple[str, SolutionView]]
    ) -> list[ConstraintScore]:
        pool: dict[str, Evidence] = {}
        items = []
        for solution_id, view in rotation(group, k):
            found = agent.evidence(view.text())
            pool.update({e.id: e for e in found if e.id not in pool})
            items.append(
                ScoreItem(
                    solution_id=solution_id,
                    solution=view,
                    evidence_ids=tuple(e.id for e in found),
                )
            )
        evidence = tuple(pool.values())
        red_flags, mitigations = agent.signals(evidence)
        task = BatchScoreTask(
            **fields,
            constraint=agent.constraint,
            solutions=tuple(items),
            evidence=evidence,
            red_flags=red_flags,
            mitigations=mitigations,
        )
        out = await caller.ask(agent.id, task, BatchScoreOutput)
        by_id = {s.solution_id: s for s in out.scores}
        return [scored(agent, sid, view, by_id[sid], task) for sid, view in group]

    if mode == "batched":
        groups = [solutions[i : i + MAX_SCORED] for i in range(0, len(solutions), MAX_SCORED)]
        nested = await asyncio.gather(
            *(many(k, a, g) for k, a in enumerate(agents) for g in groups)
        )
        return [s for group in nested for s in group]
    jobs = [one(a, sid, view) for a in agents for sid, view in solutions]
    return list(await asyncio.gather(*jobs))


class ScoredSet(NamedTuple):
    """The scores of a solution set: as the agents gave them, and copied onto every solution."""

    scored: list[ConstraintScore]
    """One score per constraint and distinct solution (the calls actually made)."""
    per_solution: list[ConstraintScore]
    """The same scores for every solution id, identical solutions sharing theirs."""


def _key(view: SolutionView) -> tuple[str, tuple[tuple[int, str], ...]]:
    """Solutions that share a score: the same words and the same stances (the same words under
    other stances can breach a binding constraint the first did not)."""
    return view.text(), tuple(sorted((s.option, s.stance) for s in view.stances))


async def score_set(
    caller: AgentCaller,
    agents: Sequence[ConstraintAgent],
    solutions: Sequence[tuple[str, SolutionView]],
    *,
    severity: float,
    context: DecisionContext | None = None,
    mode: ScoreMode = "per_solution",
) -> ScoredSet:
    """Score a solution set, asking once per distinct solution (identical ones share scores)."""
    distinct: dict[tuple[str, tuple[tuple[int, str], ...]], tuple[str, SolutionView]] = {}
    for solution_id, view in solutions:
        distinct.setdefault(_key(view), (solution_id, view))
    scored = await score(
        caller, agents, list(distinct.values()), severity=severity, context=context, mode=mode
    )
    per_solution = [
        x.model_copy(update={"solution_id": solution_id})
        for solution_id, view in solutions
        for x in scored
        if x.solution_id == distinct[_key(view)][0]
    ]
    return ScoredSet(scored, per_solution)


def judge(
    scores: Sequence[ConstraintScore], *, feasibility: int, severity: float, regeneration: int
) -> PracticalityVerdict:
    """Veto the whole set when the mean score across agents and solutions <= feasibility, or
    when every solution of the set pursues now an option a binding constraint bars (then no
    plan could be recommended without breaching it, however high the other constraint agents
    scored it: a barred option is never a recommendation's first move).

    An empty set has no mean: the caller must treat it (abstention) before judging.
    """
    if not scores:
        raise ValueError("judge: no scores to judge (an empty solution set is not a veto)")
    per: dict[str, list[int]] = {}
    for s in scores:
        per.setdefault(s.constraint, []).append(s.score)
    mean = round(sum(s.score for s in scores) / len(scores), 4)
    barred = {s.solution_id for s in scores if s.vetoes}
    all_barred = barred == {s.solution_id for s in scores}
    return PracticalityVerdict(
        regeneration=regeneration,
        scores=tuple(scores),
        mean_score=mean,
        per_constraint={c: round(sum(v) / len(v), 4) for c, v in sorted(per.items())},
        feasibility=feasibility,
        severity=severity,
        vetoed=mean <= feasibility or all_barred,
    )
