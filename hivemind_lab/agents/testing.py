"""A content-free agent model for tests of the engine, storage, reports and CLI.

`TestModel` answers every agent task with a schema-valid output that keeps the task's rules (an
exclusive decision pursues exactly one option) and refers only to what the task holds (option
indices, target ids, passage and fact ids), chosen by a seeded random draw. It reads no words:
its texts are neutral placeholders, so a test that passes with it cannot rest on the stand-in's
judgement or wording. Same request ⇒ same reply.

It lives beside the task models rather than in `hivemind_lab.llm.testing` because a valid reply
depends on the task (how many options, which peers, which ids may be cited), not on the JSON
schema alone. `FunctionModel` lets a test write the answer to each task itself.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Sequence
from typing import get_args

from pydantic import BaseModel

from hivemind_lab.agents.prompts import Task, parse_task
from hivemind_lab.agents.schemas import (
    MAX_POINTS,
    BatchCritiqueOutput,
    BatchCritiqueTask,
    BatchScoreOutput,
    BatchScoreTask,
    CritiqueOutput,
    CritiquePoint,
    CritiqueTask,
    DecisionContext,
    Evidence,
    OptionStance,
    ProposalOutput,
    ProposeTask,
    RationaleOutput,
    ReviseTask,
    RevisionOutput,
    ScoreOutput,
    ScoreTask,
    ScoreValue,
    SolutionScore,
    Stance,
    SynthesizeTask,
    TargetCritique,
)
from hivemind_lab.llm.base import ChatRequest
from hivemind_lab.llm.testing import FunctionModel as WireFunctionModel

TEST_MODEL_ID = "content-free-test-v1"
STANCES: tuple[Stance, ...] = get_args(Stance)
SCORES: tuple[int, ...] = get_args(ScoreValue)
KINDS = ("support", "contradiction", "gap")


def task_rng(task: Task, seed: int | None) -> random.Random:
    """The draw for one task: a function of the request's seed and the task's content."""
    digest = hashlib.sha256(f"{seed}\0{task.model_dump_json()}".encode()).hexdigest()
    return random.Random(digest)


def _stances(ctx: DecisionContext, rng: random.Random) -> list[OptionStance]:
    n = len(ctx.options)
    if n == 0:
        return []
    if ctx.exclusive:
        chosen = rng.randrange(n)
        picks: list[Stance] = ["pursue" if i == chosen else "avoid" for i in range(n)]
    else:
        picks = [rng.choice(STANCES) for _ in range(n)]
    return [OptionStance.model_validate({"option": i, "stance": s}) for i, s in enumerate(picks)]


def _ids(evidence: Sequence[Evidence], rng: random.Random, most: int) -> list[str]:
    ids = [e.id for e in evidence]
    return rng.sample(ids, min(most, len(ids)))


def _tag(rng: random.Random) -> str:
    return f"{rng.randrange(16**6):06x}"


def propose(task: ProposeTask, rng: random.Random) -> ProposalOutput:
    """A proposal: seeded stances on every option, placeholder texts, sampled ids."""
    count = rng.randint(1, max(1, min(task.max_recommendations, 4)))
    return ProposalOutput(
        title=f"Proposal {rng.randrange(10_000)} of {task.agent_id}"[:160],
        stances=_stances(task, rng),
        # A seeded tag per text, so two proposals are alike only by their stances and ids.
        recommendations=[f"Recommendation {i + 1}, variant {_tag(rng)}." for i in range(count)],
        rationale="Placeholder rationale.",
        citations=_ids(task.evidence, rng, 3),
        facts_used=rng.sample([f.id for f in task.facts], min(2, len(task.facts))),
    )


def _points(
    ctx: DecisionContext, evidence: Sequence[Evidence], rng: random.Random
) -> list[CritiquePoint]:
    n = len(ctx.options)
    points = []
    for k in range(rng.randint(1, MAX_POINTS)):
        kind = rng.choice(KINDS)
        option = rng.randrange(n) if n else None
        cited = rng.choice(evidence).id if evidence else None
        points.append(
            CritiquePoint.model_validate(
                {
                    "kind": kind,
                    "option": option,
                    "claim": f"Point {k + 1}.",
                    "strength": rng.randint(1, 5),
                    "citation": cited,
                }
            )
        )
    return points


def critique(task: CritiqueTask, rng: random.Random) -> CritiqueOutput:
    """One to six seeded points on the target's options, citing the critic's evidence."""
    return CritiqueOutput(points=_points(task, task.evidence, rng), summary="Placeholder summary.")


def critique_batch(task: BatchCritiqueTask, seed: int | None) -> BatchCritiqueOutput:
    """Per target, exactly the critique the same critic gives in a call of its own: a batch
    carries the same information, so it gets the same answer."""
    critiques = []
    for t in task.targets:
        single = CritiqueTask(
            **task.model_dump(include=set(DecisionContext.model_fields)),
            critic_id=task.critic_id,
            critic_position=task.critic_position,
            target_id=t.target_id,
            target=t.target,
            evidence=task.evidence,
        )
        one = critique(single, task_rng(single, seed))
        critiques.append(
            TargetCritique(target_id=t.target_id, points=one.points, summary=one.summary)
        )
    return BatchCritiqueOutput(critiques=critiques)


def revise(task: ReviseTask, rng: random.Random) -> RevisionOutput:
    """Each contradiction is adopted with probability ``1 - stubbornness``: adopting one sets
    the contradicted option to a different stance (for an exclusive decision, pursuing another
    option). Every other point is rejected."""
    stances: dict[int, Stance] = {s.option: s.stance for s in task.current.stances}
    adopted: list[str] = []
    rejected: list[str] = []
    for received in task.critiques:
        for point in received.points:
            take = point.kind == "contradiction" and point.option is not None
            take = take and rng.random() >= task.stubbornness
            if not take or point.option is None:
                rejected.append(point.claim)
                continue
            adopted.append(point.claim)
            if task.exclusive and stances.get(point.option) == "pursue" and len(task.options) > 1:
                others = [i for i in range(len(task.options)) if i != point.option]
                chosen = rng.choice(others)
                stances = {
                    i: "pursue" if i == chosen else "avoid" for i in range(len(task.options))
                }
            elif task.exclusive:
                stances = {i: "pursue" if i == point.option else "avoid" for i in stances}
            else:
                current = stances.get(point.option, "later")
                stances[point.option] = rng.choice([s for s in STANCES if s != current])
    return RevisionOutput(
        title=task.current.title,
        stances=[
            OptionStance.model_validate({"option": o, "stance": s})
            for o, s in sorted(stances.items())
        ],
        recommendations=list(task.current.recommendations),
        rationale=task.current.rationale,
        citations=list(task.current.citations),
        facts_used=list(task.current.facts_used),
        adopted=adopted[:MAX_POINTS],
        rejected=rejected[:MAX_POINTS],
    )


def score(task: ScoreTask, rng: random.Random) -> ScoreOutput:
    """A seeded score from the rubric's scale, with a placeholder reason."""
    return ScoreOutput.model_validate(
        {"score": rng.choice(SCORES), "reason": "Placeholder reason."}
    )


def score_batch(task: BatchScoreTask, seed: int | None) -> BatchScoreOutput:
    """Per solution, exactly the score the same agent gives it in a call of its own (its own
    passages), as `critique_batch` does for critiques."""
    return BatchScoreOutput(
        scores=[
            SolutionScore(
                solution_id=single.solution_id, **dict(score(single, task_rng(single, seed)))
            )
            for single in task.singles()
        ]
    )


def synthesize(task: SynthesizeTask, rng: random.Random) -> RationaleOutput:
    """Placeholder texts and the members' own citations."""
    cited = list(dict.fromkeys(c for m in task.members for c in m.citations))
    return RationaleOutput(
        shared="Placeholder shared reasons.",
        differences="",
        objection=task.objections[0].claim[:600] if task.objections else "",
        citations=cited[:12],
    )


def answer(task: Task, seed: int | None) -> BaseModel:
    """The content-free output for ``task``."""
    rng = task_rng(task, seed)
    if isinstance(task, ProposeTask):
        return propose(task, rng)
    if isinstance(task, CritiqueTask):
        return critique(task, rng)
    if isinstance(task, BatchCritiqueTask):
        return critique_batch(task, seed)
    if isinstance(task, ReviseTask):
        return revise(task, rng)
    if isinstance(task, SynthesizeTask):
        return synthesize(task, rng)
    if isinstance(task, BatchScoreTask):
        return score_batch(task, seed)
    return score(task, rng)


class FunctionModel(WireFunctionModel):
    """A `ChatModel` that answers each agent task with ``function(task, seed)``."""

    backend = "function"

    def __init__(
        self, function: Callable[[Task, int | None], BaseModel], *, model: str = "agent-function"
    ) -> None:
        def reply(request: ChatRequest) -> BaseModel:
            return function(parse_task(request), request.seed)

        super().__init__(reply, model=model)


class TestModel(FunctionModel):
    """The content-free agent model: schema-valid, seeded, no domain reasoning."""

    __test__ = False  # not a pytest test class
    backend = "test"

    def __init__(self, *, model: str = TEST_MODEL_ID) -> None:
        super().__init__(answer, model=model)
