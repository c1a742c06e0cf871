"""Task and output models for every agent utterance.

A task carries everything an agent needs for one call; it is rendered into the prompt as a JSON
block, so an LLM and the offline model read exactly the same information. Output models are the
JSON schemas replies must follow. Every list and string in them is bounded and every number is
an enumerated scale, because grammar-constrained decoding (llama.cpp) closes a list or a string
only when the schema forces it and does not enforce numeric ranges.

Options are ints inside the engine and letters on the wire (`hivemind_lab.wire`, which the
intake's schema shares). The intake's own task and reply live with the intake stage
(`hivemind_lab.problems.intake_task`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import (
    Field,
    SerializationInfo,
    ValidationInfo,
    field_serializer,
    field_validator,
    model_validator,
)

from hivemind_lab.models import Frozen
from hivemind_lab.problems.model import ConstraintKind, Fact
from hivemind_lab.wire import MAX_ID, MAX_TEXT, OptionIndex, Ref, Text, on_wire, option_letter

if TYPE_CHECKING:
    from hivemind_lab.knowledge.retrieval import ScoredPassage

MAX_RATIONALE = 2000
MAX_REASON = 800
"""A score's reason."""
MAX_RECOMMENDATIONS = 4
MAX_POINTS = 6
MAX_ANSWERED = 16
"""Claims a revision lists as adopted or as rejected: two or three critics of six points each
(at six, a capable model had to drop points it had answered)."""
MAX_TARGETS = 64
MAX_FACTS_USED = 32
"""The static cap on cited fact ids; a reply schema narrows it to the task's facts."""
MAX_CONSTRAINTS = 12
MAX_STRENGTHS = 4
MAX_SCORED = 8
"""Solutions one batched score call judges (a set of more is asked in batches)."""

Stance = Literal["pursue", "later", "avoid"]
"""pursue: do it now; later: sequence it after the options pursued now; avoid: do not do it."""
Strength = Literal[1, 2, 3, 4, 5]
"""How well the critic's evidence backs a point: 1 weak … 5 decisive."""
ScoreValue = Literal[
    0, 5, 10, 15, 20, 25, 30, 35, 40, 45, 50, 55, 60, 65, 70, 75, 80, 85, 90, 95, 100
]
"""Feasibility from 0 (infeasible) to 100 (no concern), in steps of five."""


class Evidence(Frozen):
    """A retrieved passage shown to an agent, citable by ``id``."""

    id: str
    document_id: str
    text: str
    score: float = 0.0
    topics: tuple[str, ...] = ()
    title: str = ""
    """The source document's title."""
    about: tuple[OptionIndex, ...] = ()
    """The options this passage was retrieved for (empty: retrieved for the problem)."""

    @classmethod
    def of(cls, hit: ScoredPassage, *, title: str = "", about: tuple[int, ...] = ()) -> Evidence:
        """A retrieval hit as evidence an agent can cite."""
        return cls(
            id=hit.passage.id,
            document_id=hit.passage.document_id,
            text=hit.passage.text,
            score=hit.score,
            topics=hit.passage.topics,
            title=title,
            about=about,
        )


class OptionStance(Frozen):
    """A solution's stance on one of the problem's options."""

    option: OptionIndex
    stance: Stance


class OwnCourse(Frozen):
    """The course of action an agent proposes on an open question (the problem names no
    options), as a field of its own so peers read it without parsing the recommendations."""

    action: Text
    """The course, as one self-contained sentence."""
    backed: bool = True
    """Whether passages of the agent's evidence bear on it. False: none does, and the course
    only says where to start (it is no course to argue for)."""


class SolutionView(Frozen):
    """What a solution recommends, without its justification (what practicality agents see)."""

    title: str
    recommendations: tuple[str, ...]
    stances: tuple[OptionStance, ...] = ()
    course: OwnCourse | None = None
    """On an open question: the course of action proposed (None when choosing among options)."""

    def text(self) -> str:
        """The solution as one text, for similarity measures."""
        return " ".join(self.recommendations)


class BindingConstraint(Frozen):
    """A binding constraint of the client's decision as agents see it: a prohibition that
    rules options out (``forbids``), an order that bars options as a first move but allows
    them later (``not_first``, after ``after``), or a limit that bounds them (``limits``)."""

    id: Ref
    """``constraint.<n>``: cite it as a critique's citation or a violation's constraint."""
    text: Text
    kind: ConstraintKind = "other"
    forbids: Annotated[tuple[OptionIndex, ...], Field(max_length=8)] = ()
    """The options it rules out: never pursue one of them."""
    limits: Annotated[tuple[OptionIndex, ...], Field(max_length=8)] = ()
    """The options it only bounds (a cap, a deadline, an approval)."""
    not_first: Annotated[tuple[OptionIndex, ...], Field(max_length=8)] = ()
    """Options it bars as a first move but allows later: never pursue one now; sequencing it
    (``later``) is lawful."""
    after: OptionIndex | None = None
    """The option that must come before the ``not_first`` options (None: not stated)."""


class DecisionContext(Frozen):
    """The client's decision as every agent sees it: the question, its options, its facts and
    its binding constraints."""

    problem: str
    options: tuple[str, ...] = ()
    """The courses of action the client weighs (empty: agents propose their own)."""
    facts: tuple[Fact, ...] = ()
    """Client-cleared and market statements, citable by id."""
    exclusive: bool = False
    """The options are alternatives: choose exactly one (pursue) and reject the others
    (avoid); never sequence them (no ``later``)."""
    constraints: Annotated[tuple[BindingConstraint, ...], Field(max_length=MAX_CONSTRAINTS)] = ()
    """The decision's binding constraints: an option one of them forbids is never pursued."""

    @field_validator("options", mode="before")
    @classmethod
    def _labels(cls, value: object) -> object:
        """Options as the wire writes them (``{"id": "A", "label": …}``) read as labels."""
        if isinstance(value, list | tuple):
            return tuple(o["label"] if isinstance(o, dict) and "label" in o else o for o in value)
        return value

    @field_serializer("options")
    def _lettered(
        self, options: tuple[str, ...], info: SerializationInfo
    ) -> list[str] | list[dict[str, str]]:
        if not on_wire(info):
            return list(options)
        return [{"id": option_letter(i), "label": o} for i, o in enumerate(options)]


class RefusedProposal(Frozen):
    """A proposal the engine refused, told back to its agent so the next one differs."""

    title: str
    reason: str
    """Why it was refused (the vetoed solution it repeats)."""


class ProposeTask(DecisionContext):
    """Propose an initial solution from the agent's own evidence."""

    task: Literal["propose"] = "propose"
    agent_id: str
    evidence: tuple[Evidence, ...]
    excluded: tuple[SolutionView, ...] = ()
    """Vetoed solutions: neither they nor anything close to them may be proposed again."""
    attempt: int = 0
    """How many proposals of this agent were already refused as repeats in this regeneration."""
    refused: tuple[RefusedProposal, ...] = ()
    """This agent's proposals already refused in this regeneration, each with why."""
    max_recommendations: int = MAX_RECOMMENDATIONS


def one_of_violation(stances: Sequence[OptionStance]) -> str | None:
    """What breaks the rule of an exclusive decision (exactly one option pursued, the others
    avoided, none sequenced), or None when the stances keep it."""
    pursued = [s.option for s in stances if s.stance == "pursue"]
    later = [s.option for s in stances if s.stance == "later"]
    if len(pursued) <= 1 and not later:
        return None
    got = (
        [f"pursue on options {', '.join(map(option_letter, pursued))}"] if len(pursued) > 1 else []
    )
    got += [f"later on options {', '.join(map(option_letter, later))}"] if later else []
    return (
        "the options exclude each other: pursue exactly one and mark the others avoid, never "
        f"later (got {' and '.join(got)})"
    )


class ProposalOutput(Frozen):
    """A solution with its justification."""

    # The docstring is the reply schema's description, which every model reads: what holds
    # only for some decisions (the exclusive rule in `_one_of`) is told by the task's rules.

    title: Annotated[str, Field(min_length=1, max_length=160)]
    stances: Annotated[list[OptionStance], Field(max_length=8)] = []
    """The solution's stance on each option it addresses."""
    course: OwnCourse | None = None
    """On an open question (no options): the course of action proposed; None otherwise."""
    recommendations: Annotated[list[Text], Field(min_length=1, max_length=MAX_RECOMMENDATIONS)]
    rationale: Annotated[str, Field(max_length=MAX_RATIONALE)]
    citations: Annotated[list[Ref], Field(max_length=8)] = []
    """Passage ids relied on."""
    facts_used: Annotated[list[Ref], Field(max_length=MAX_FACTS_USED)] = []
    """Fact ids relied on (a reply schema admits every fact of its task)."""
    constraints_used: Annotated[list[Ref], Field(max_length=MAX_CONSTRAINTS)] = []
    """Constraint ids relied on."""

    @model_validator(mode="after")
    def _one_of(self, info: ValidationInfo) -> ProposalOutput:
        """Validated with the context ``{"exclusive": True}`` (an exclusive decision), a reply
        that pursues several options or sequences one is a schema violation: the model is
        shown the error and asked again, like any other (`hivemind_lab.llm.structured`)."""
        if isinstance(info.context, dict) and info.context.get("exclusive"):
            broken = one_of_violation(self.stances)
            if broken:
                raise ValueError(broken)
        return self

    def view(self) -> SolutionView:
        """The solution without its justification."""
        return SolutionView(
            title=self.title,
            recommendations=tuple(self.recommendations),
            stances=tuple(self.stances),
            course=self.course,
        )


class CritiquePoint(Frozen):
    """One point of a critique."""

    kind: Literal["support", "contradiction", "gap"]
    """support: evidence backs the target's stance on an option; contradiction: evidence goes
    against the target's stance on that option (``stance`` names the one it favours); gap: an
    option or a client fact the target ignores."""
    option: OptionIndex | None = None
    """The option addressed (None for a gap about a fact)."""
    recommendation: Literal[0, 1, 2, 3] | None = None
    """0-based index of the target's recommendation addressed, if one is."""
    claim: Text
    """The critic's point, as a self-contained sentence."""
    strength: Strength
    citation: Annotated[str, Field(max_length=MAX_ID)] | None = None
    """A passage id (or a fact id for a fact gap)."""
    course: Text | None = None
    """On an open question, for a contradiction: the course of action the critic's evidence
    favours instead, whole, so the target can adopt it."""
    instead: OptionIndex | None = None
    """For a contradiction of a pursued option: the option the critic's evidence favours in
    its place, so the target hears "but that" as well as "not this" (the engine then lets the
    target move towards the critic on that option too)."""
    stance: Stance | None = None
    """For a contradiction on an option: the stance the critic's evidence favours on it."""


class CritiqueTask(DecisionContext):
    """Critique one peer's solution with the critic's own evidence."""

    task: Literal["critique"] = "critique"
    critic_id: str
    critic_position: SolutionView
    target_id: str
    target: SolutionView
    evidence: tuple[Evidence, ...]


class CritiqueOutput(Frozen):
    points: Annotated[list[CritiquePoint], Field(max_length=MAX_POINTS)]
    summary: Annotated[str, Field(max_length=MAX_TEXT)] = ""


class CritiqueTarget(Frozen):
    target_id: str
    target: SolutionView


class BatchCritiqueTask(DecisionContext):
    """Critique every peer in one call (same information as one call per peer)."""

    task: Literal["critique_batch"] = "critique_batch"
    critic_id: str
    critic_position: SolutionView
    targets: tuple[CritiqueTarget, ...]
    evidence: tuple[Evidence, ...]
    """The critic's evidence on the options (the same for every target)."""


class TargetCritique(Frozen):
    target_id: Ref
    points: Annotated[list[CritiquePoint], Field(max_length=MAX_POINTS)]
    summary: Annotated[str, Field(max_length=MAX_TEXT)] = ""


class BatchCritiqueOutput(Frozen):
    critiques: Annotated[list[TargetCritique], Field(max_length=MAX_TARGETS)]


class ReceivedCritique(Frozen):
    critic_id: str
    points: tuple[CritiquePoint, ...]


class PointRef(Frozen):
    """A critique point the engine weighed for a reviser: which one, and its evidence weight."""

    critic_id: Ref
    point: Annotated[int, Field(ge=0, lt=MAX_POINTS)]
    """0-based index of the point in that critic's critique."""
    option: OptionIndex | None = None
    """The option the point addresses (None: a client fact)."""
    weight: Annotated[float, Field(ge=0.0, le=1.0)]
    """Evidence weight: distinct cited passages, stated strength, and whether the citation is
    in the evidence the critic was shown (`hivemind_lab.deliberation.theory.weigh_points`)."""


class ReviseTask(DecisionContext):
    """Revise the agent's solution after reading every critique of it."""

    task: Literal["revise"] = "revise"
    agent_id: str
    current: ProposalOutput
    critiques: tuple[ReceivedCritique, ...]
    stubbornness: float
    """The agent's stubbornness (0 to 1), for the record: the engine has already applied it
    in ``must_answer`` and ``may_weigh``."""
    must_answer: Annotated[tuple[PointRef, ...], Field(max_length=MAX_TARGETS * MAX_POINTS)] = ()
    """Points whose evidence weight clears the agent's bar: adopt each or rebut it from the
    agent's own evidence."""
    may_weigh: Annotated[tuple[PointRef, ...], Field(max_length=MAX_TARGETS * MAX_POINTS)] = ()
    """Points within the tolerance around the bar: adopt them or not. A stance change on an
    option that no point of either list addresses is not taken by the engine."""
    evidence: tuple[Evidence, ...] = ()
    """The agent's own evidence on the options, shown again."""
    cited: tuple[Evidence, ...] = ()
    """The passages its critics cite that are not in its own evidence, so the reviser reads
    what a point rests on before it adopts or rebuts it."""
    max_recommendations: int = MAX_RECOMMENDATIONS
    not_taken: NotTaken | None = None
    """Set when this is the second time of asking: the revision the engine could not take
    whole, and why (`hivemind_lab.deliberation.theory.hold_unanswered`)."""


class NotTaken(Frozen):
    """A revision the engine did not take, and why: the reviser is asked again with it rather
    than having its stances edited under its words."""

    revision: SolutionView
    reason: str


class RevisionOutput(ProposalOutput):
    """A revised solution with its justification, and the critique claims it took and left."""

    adopted: Annotated[list[Text], Field(max_length=MAX_ANSWERED)] = []
    """Critique claims taken into the solution."""
    rejected: Annotated[list[Text], Field(max_length=MAX_ANSWERED)] = []
    """Critique claims considered and not taken."""


class ScoreTask(DecisionContext):
    """Score one solution's feasibility under one constraint.

    Severity is not sent: the engine applies it to the model's anchor and concerns
    (`hivemind_lab.deliberation.practicality.constraint_score`), so the request is the same at
    every severity and a model's own variation cannot pass for the calibration's effect."""

    task: Literal["score"] = "score"
    constraint: str
    solution_id: str
    solution: SolutionView
    evidence: tuple[Evidence, ...]
    red_flags: tuple[str, ...] = ()
    mitigations: tuple[str, ...] = ()


class ScoreItem(Frozen):
    """One solution of a batched score, with the ids of the constraint's passages retrieved for
    it (every passage is in the task's ``evidence`` once)."""

    solution_id: str
    solution: SolutionView
    evidence_ids: tuple[str, ...] = ()


class BatchScoreTask(DecisionContext):
    """Score every distinct solution of a set under one constraint in one call.

    The same information as one `ScoreTask` per solution: the constraint's evidence for each
    solution (shared passages sent once) and its signals. Each solution is to be judged alone
    on the absolute rubric, and the engine hands each constraint agent the solutions in its own
    rotation, so that a position effect falls on a different solution for each agent
    (`hivemind_lab.deliberation.practicality.score`)."""

    task: Literal["score_batch"] = "score_batch"
    constraint: str
    solutions: Annotated[tuple[ScoreItem, ...], Field(min_length=1, max_length=MAX_SCORED)]
    evidence: tuple[Evidence, ...]
    red_flags: tuple[str, ...] = ()
    mitigations: tuple[str, ...] = ()

    def singles(self) -> tuple[ScoreTask, ...]:
        """The batch as the single task of each solution it holds: that solution's passages,
        the batch's signals (how a model that scores one solution at a time answers a batch)."""
        by_id = {e.id: e for e in self.evidence}
        shared = self.model_dump(include=set(DecisionContext.model_fields))
        return tuple(
            ScoreTask(
                **shared,
                constraint=self.constraint,
                solution_id=item.solution_id,
                solution=item.solution,
                evidence=tuple(by_id[i] for i in item.evidence_ids if i in by_id),
                red_flags=self.red_flags,
                mitigations=self.mitigations,
            )
            for item in self.solutions
        )


class Concern(Frozen):
    """One feasibility concern a constraint agent raises about a solution."""

    option: OptionIndex | None = None
    """The option it bears on (None: the solution as a whole)."""
    grade: Literal["minor", "major", "critical"]
    """minor: a cost or a condition; major: likely harm unless handled; critical: blocks it."""
    mitigated: bool = False
    """Whether the solution (or the client's facts) already answers it."""
    basis: Ref | None = None
    """The fact id, passage id or constraint id behind it."""
    text: Text
    """The concern, as one sentence."""


class Violation(Frozen):
    """A binding constraint the solution breaks by pursuing one of the options."""

    constraint: Ref
    """The constraint's id (``constraint.<n>``)."""
    option: OptionIndex
    """The option pursued in breach of it."""


class ScoreOutput(Frozen):
    score: ScoreValue
    """The model's anchor score on the rubric."""
    reason: Annotated[str, Field(max_length=MAX_REASON)]
    strengths: Annotated[list[Text], Field(max_length=MAX_STRENGTHS)] = []
    """What makes the solution feasible under the constraint (for the record and the report;
    the engine's number comes from the score and the concerns)."""
    flags: Annotated[list[Annotated[str, Field(max_length=MAX_ID)]], Field(max_length=6)] = []
    """Risk signals found in the solution."""
    concerns: Annotated[list[Concern], Field(max_length=6)] = []
    """The concerns behind the score; the engine weighs the unmitigated ones by severity
    (`hivemind_lab.deliberation.practicality.constraint_score`)."""
    violations: Annotated[list[Violation], Field(max_length=8)] = []
    """The binding constraints the solution breaks, per option it pursues (the engine scores
    such a solution 0 whatever ``score`` says)."""


class SolutionScore(ScoreOutput):
    """One solution's score in a batched reply."""

    solution_id: Ref


class BatchScoreOutput(Frozen):
    """A batched score: exactly one entry per solution of the task.

    Validated with the context ``{"solution_ids": [...]}`` (the caller's), a reply that leaves a
    solution out, scores one twice or names another is a schema violation, so the model is
    shown the error and asked again (`hivemind_lab.llm.structured`) rather than a solution
    silently going without its score."""

    scores: Annotated[list[SolutionScore], Field(min_length=1, max_length=MAX_SCORED)]

    @model_validator(mode="after")
    def _each_once(self, info: ValidationInfo) -> BatchScoreOutput:
        if isinstance(info.context, dict) and "solution_ids" in info.context:
            wanted = list(info.context["solution_ids"])
            got = [s.solution_id for s in self.scores]
            if sorted(got) != sorted(wanted):
                missing = [i for i in wanted if i not in got]
                extra = sorted({i for i in got if i not in wanted or got.count(i) > 1})
                raise ValueError(
                    "score each solution of the task exactly once by its solution_id"
                    + (f"; missing: {', '.join(missing)}" if missing else "")
                    + (f"; unknown or repeated: {', '.join(extra)}" if extra else "")
                )
        return self


class ClusterMember(Frozen):
    """One agent's solution in a cluster, with its justification (what the monitor reads)."""

    agent_id: str
    title: str
    stances: tuple[OptionStance, ...] = ()
    recommendations: tuple[str, ...]
    rationale: str
    citations: tuple[str, ...] = ()
    facts_used: tuple[str, ...] = ()


class Objection(Frozen):
    """A contradiction raised against a member that its revision did not take in."""

    critic_id: str
    target_id: str
    option: OptionIndex | None = None
    claim: str
    strength: int
    citation: str | None = None


class StandingConcern(Frozen):
    """An unmitigated major or critical concern of the practicality network on a member's
    solution, with the constraint that raised it."""

    constraint: str
    """The constraint whose agent raised it."""
    agent_id: str
    """The member whose solution it is about."""
    option: OptionIndex | None = None
    grade: Literal["major", "critical"]
    text: str
    basis: str | None = None


class SynthesizeTask(DecisionContext):
    """Write one cluster's combined rationale from its members' solutions and justifications."""

    task: Literal["synthesize"] = "synthesize"
    cluster_index: int
    members: tuple[ClusterMember, ...]
    objections: tuple[Objection, ...] = ()
    concerns: tuple[StandingConcern, ...] = ()
    """Major and critical concerns the constraint agents raised on the members' solutions that
    the solutions do not answer (unmitigated)."""


class RationaleOutput(Frozen):
    """A cluster's combined rationale: why its members agree, where they differ, and the
    strongest objection still standing, with the passages relied on."""

    shared: Annotated[str, Field(min_length=1, max_length=1200)]
    """The reasons the members share."""
    differences: Annotated[str, Field(max_length=900)] = ""
    """Where the members differ."""
    objection: Annotated[str, Field(max_length=900)] = ""
    """The strongest unresolved objection (empty when none stands)."""
    citations: Annotated[list[Ref], Field(max_length=12)] = []

    def text(self) -> str:
        """The rationale as one paragraph."""
        return " ".join(p for p in (self.shared, self.differences, self.objection) if p)


AnyTask = (
    ProposeTask
    | CritiqueTask
    | BatchCritiqueTask
    | ReviseTask
    | ScoreTask
    | BatchScoreTask
    | SynthesizeTask
)
"""Every task an agent (theory, practicality or the monitor) is asked."""
AgentTask = Annotated[AnyTask, Field(discriminator="task")]
"""A task read back from its JSON (`hivemind_lab.agents.prompts.parse_task`)."""


def validation_context(task: DecisionContext) -> dict[str, Any] | None:
    """What a reply to ``task`` is validated against beyond its schema: an exclusive
    decision's one-of rule (`ProposalOutput`), a batched score's solution ids
    (`BatchScoreOutput`)."""
    context: dict[str, Any] = {"exclusive": True} if task.exclusive else {}
    if isinstance(task, BatchScoreTask):
        context["solution_ids"] = [item.solution_id for item in task.solutions]
    return context or None
