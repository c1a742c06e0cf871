"""The practicality network: one constraint agent per feasibility constraint.

Constraint agents see solutions only as `SolutionView` (title and recommendations): the type
itself has no room for theoretical justification, as the spec requires.
"""

from __future__ import annotations

import asyncio
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from hivemind_lab.agents.caller import AgentCaller
from hivemind_lab.agents.schemas import (
    DecisionContext,
    Evidence,
    ScoreOutput,
    ScoreTask,
    SolutionView,
)
from hivemind_lab.errors import InputError, did_you_mean
from hivemind_lab.knowledge.documents import load_documents
from hivemind_lab.knowledge.retrieval import RetrievalIndex, split_passages
from hivemind_lab.problems.model import ConstraintKind
from hivemind_lab.runs.results import BindingVeto, ConstraintScore, PracticalityVerdict
from hivemind_lab.tokens import TokenCounter

EVIDENCE_K = 4


@dataclass(frozen=True)
class ConstraintAgent:
    """A constraint agent with its own constraint knowledge."""

    constraint: str
    index: RetrievalIndex
    red_flags: tuple[str, ...]
    mitigations: tuple[str, ...]

    @property
    def id(self) -> str:
        return f"constraint-{self.constraint}"

    def evidence(self, query: str) -> tuple[Evidence, ...]:
        return tuple(Evidence.of(h) for h in self.index.search(query, EVIDENCE_K))


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
                red_flags=tuple(dict.fromkeys(f.lower() for d in docs for f in d.red_flags)),
                mitigations=tuple(dict.fromkeys(m.lower() for d in docs for m in d.mitigations)),
            )
        )
    return agents


GRADE_PENALTY: dict[str, float] = {"minor": 6.0, "major": 15.0, "critical": 35.0}
"""Points an unmitigated concern takes off the model's anchor at severity 0.5: a minor one about
a sixth of a rubric step below a major one, a critical one enough to cross an anchor alone."""
LENIENT_SHARE = 0.25
"""Share of the penalty left at severity 0: a lenient network still tells apart a solution
with a critical concern from one without."""


def severity_factor(severity: float) -> float:
    """How hard unmitigated concerns weigh at a severity, rising straight from `LENIENT_SHARE`
    at 0 through 1 at 0.5 to ``2 - LENIENT_SHARE`` at 1."""
    return LENIENT_SHARE + 2.0 * (1.0 - LENIENT_SHARE) * severity


def constraint_score(output: ScoreOutput, severity: float) -> float:
    """A constraint agent's score of a solution: the model's anchor minus its unmitigated
    concerns, each weighted by its grade (`GRADE_PENALTY`) and the severity, clipped to 0..100.

    The engine applies severity here, the same way for every model: the model only judges
    (anchor and concerns), so severity moves scores continuously and solutions with different
    concerns get different scores. Pure.
    """
    penalty = sum(GRADE_PENALTY[c.grade] for c in output.concerns if not c.mitigated)
    return min(100.0, max(0.0, output.score - penalty * severity_factor(severity)))


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
    """Veto a solution that pursues now an option a binding constraint forbids.

    The decision's own record of what each constraint forbids decides, whatever score or
    wording the model gave: the agent answering for that constraint's kind (`answers_for`)
    scores the solution 0. The model's own violations veto too, when they name a constraint of
    the decision and an option the solution pursues now. An option a constraint only limits is
    left to the score. Pure.
    """
    pursued = {s.option for s in solution.stances if s.stance == "pursue"}
    vetoes: dict[tuple[str, int], BindingVeto] = {}
    for constraint in context.constraints:
        if not answers_for(constraint.kind, agent, network):
            continue
        for option in sorted(pursued & set(constraint.forbids)):
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


async def score(
    caller: AgentCaller,
    agents: Sequence[ConstraintAgent],
    solutions: Sequence[tuple[str, SolutionView]],
    *,
    severity: float,
    context: DecisionContext | None = None,
) -> list[ConstraintScore]:
    """Every constraint agent scores every solution 0-100, seeing the client's problem,
    options and facts but never the theory agents' justifications."""
    fields = dict(context) if context is not None else {"problem": ""}
    network = [a.constraint for a in agents]

    async def one(agent: ConstraintAgent, solution_id: str, view: SolutionView) -> ConstraintScore:
        task = ScoreTask(
            **fields,
            constraint=agent.constraint,
            solution_id=solution_id,
            solution=view,
            evidence=agent.evidence(view.text()),
            red_flags=agent.red_flags,
            mitigations=agent.mitigations,
        )
        out = await caller.ask(agent.id, task, ScoreOutput)
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
        )

    jobs = [one(a, sid, view) for a in agents for sid, view in solutions]
    return list(await asyncio.gather(*jobs))


class ScoredSet(NamedTuple):
    """The scores of a solution set: as the agents gave them, and copied onto every solution."""

    scored: list[ConstraintScore]
    """One score per constraint and distinct solution (the calls actually made)."""
    per_solution: list[ConstraintScore]
    """The same scores for every solution id, identical solutions sharing theirs."""


async def score_set(
    caller: AgentCaller,
    agents: Sequence[ConstraintAgent],
    solutions: Sequence[tuple[str, SolutionView]],
    *,
    severity: float,
    context: DecisionContext | None = None,
) -> ScoredSet:
    """Score a solution set, asking once per distinct solution (identical ones share scores)."""
    distinct: dict[str, tuple[str, SolutionView]] = {}
    for solution_id, view in solutions:
        distinct.setdefault(view.text(), (solution_id, view))
    scored = await score(
        caller, agents, list(distinct.values()), severity=severity, context=context
    )
    per_solution = [
        x.model_copy(update={"solution_id": solution_id})
        for solution_id, view in solutions
        for x in scored
        if x.solution_id == distinct[view.text()][0]
    ]
    return ScoredSet(scored, per_solution)


def judge(
    scores: Sequence[ConstraintScore], *, feasibility: int, severity: float, regeneration: int
) -> PracticalityVerdict:
    """Veto the whole set when the mean score across agents and solutions <= feasibility.

    An empty set has no mean: the caller must treat it (abstention) before judging.
    """
    if not scores:
        raise ValueError("judge: no scores to judge (an empty solution set is not a veto)")
    per: dict[str, list[int]] = {}
    for s in scores:
        per.setdefault(s.constraint, []).append(s.score)
    mean = round(sum(s.score for s in scores) / len(scores), 4)
    return PracticalityVerdict(
        regeneration=regeneration,
        scores=tuple(scores),
        mean_score=mean,
        per_constraint={c: round(sum(v) / len(v), 4) for c, v in sorted(per.items())},
        feasibility=feasibility,
        severity=severity,
        vetoed=mean <= feasibility,
    )
