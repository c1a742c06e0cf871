"""A sweep's bill before its first call (``sweep --plan``): every point planned as a run would
be (`hivemind_lab.agents.plan`), summed. A calibration changes no request count or size
the plan can see, so points of one problem and seed share their plan; a baseline is budgeted
to its deliberation sibling's calls and tokens, so it is planned at the same. Replies the
experiment's shared cache serves to a second point (the round-0 proposals of one problem and
seed) are counted as calls: the plan is an upper bound there.
"""

from __future__ import annotations

from pathlib import Path

from hivemind_lab.agents.plan import RunPlan, plan_run
from hivemind_lab.deliberation import prepare_knowledge
from hivemind_lab.experiments.points import expand
from hivemind_lab.experiments.runner import _request
from hivemind_lab.experiments.spec import ExperimentSpec
from hivemind_lab.llm.endpoint import Prices
from hivemind_lab.models import Frozen


class ProblemPlan(Frozen):
    problem: str
    seed: int
    runs: int
    run: RunPlan


class SweepPlan(Frozen):
    """What a sweep is expected to cost."""

    runs: int
    calls: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float | None
    most_calls: int
    problems: tuple[ProblemPlan, ...]

    def lines(self) -> list[str]:
        cost = f", ${self.cost_usd:,.2f}" if self.cost_usd is not None else " (no price given)"
        out = [
            f"plan: {self.runs} runs, {self.calls:,} calls, {self.prompt_tokens:,} prompt and "
            f"{self.completion_tokens:,} completion tokens{cost} (at most {self.most_calls:,} "
            "calls)"
        ]
        out += [
            f"  {p.problem} seed {p.seed}: {p.runs} runs × {p.run.calls} calls, "
            f"{p.run.tokens:,} tokens"
            for p in self.problems
        ]
        return out


def plan_sweep(spec: ExperimentSpec, project: Path, *, prices: Prices | None = None) -> SweepPlan:
    """The expected calls, tokens and cost of every point of ``spec``; no model call."""
    points = expand(spec)
    if spec.space.kind == "optuna":  # trials are asked one at a time: samples × problem × seed
        first = {(p.problem, p.seed): p for p in points if p.strategy == "deliberation"}
        counts = dict.fromkeys(first, spec.space.samples)
    else:
        counts = {}
        for p in points:
            counts[(p.problem, p.seed)] = counts.get((p.problem, p.seed), 0) + 1
        first = {}
        for p in points:
            first.setdefault((p.problem, p.seed), p)
    plans = []
    for key, point in first.items():
        request = _request(spec, point, project)
        knowledge = prepare_knowledge(
            request,
            knowledge_base=project / spec.knowledge_base,
            practicality_kb=project / spec.practicality_kb,
            seed=point.seed,
        )
        plan = plan_run(request, spec.limits, knowledge, prices=prices)
        plans.append(ProblemPlan(problem=key[0], seed=key[1], runs=counts[key], run=plan))
    costs = [p.run.cost_usd for p in plans]
    return SweepPlan(
        runs=sum(p.runs for p in plans),
        calls=sum(p.runs * p.run.calls for p in plans),
        prompt_tokens=sum(p.runs * p.run.prompt_tokens for p in plans),
        completion_tokens=sum(p.runs * p.run.completion_tokens for p in plans),
        cost_usd=None
        if any(c is None for c in costs)
        else round(sum(p.runs * (p.run.cost_usd or 0) for p in plans), 4),
        most_calls=sum(p.runs * p.run.most_calls for p in plans),
        problems=tuple(plans),
    )
