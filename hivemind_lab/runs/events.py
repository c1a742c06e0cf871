"""What an audit record says: one typed event per kind, written and read through this module.

An `AuditRecord` keeps its hash chain over the raw ``payload`` it was written with; its
`event` is that payload read as one member of the `AnyEvent` union, discriminated by a
``Literal`` kind. An event's fields are its payload's (``kind`` is the record's own field), so
logs written before this module existed read as the same events. Events are written as these
models (`AuditLog.append` takes one) and refuse unknown fields; reading is tolerant instead: a
payload an older version wrote with fields this one no longer has reads as its event without
them (the record's hash still covers them), and a kind this version does not know, or a payload
it cannot read at all, reads as an `Unknown` event. Old logs still verify and read, they never
fail to load.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal, Self, get_args

from pydantic import Field, TypeAdapter, ValidationError, model_validator

from hivemind_lab.agents.calls import LlmKind as LlmKind
from hivemind_lab.agents.calls import ModelCall as ModelCall
from hivemind_lab.llm.base import Usage
from hivemind_lab.models import Event as Event
from hivemind_lab.problems.model import Decision, IntakeRecord
from hivemind_lab.runs.results import (
    ConstraintScore,
    Critique,
    MonitorReport,
    PracticalityVerdict,
    Solution,
    Status,
)

if TYPE_CHECKING:
    from hivemind_lab.deliberation.state import RunState


# -- the client's request -------------------------------------------------------------------
class DecisionRecorded(Event):
    """The client's decision as the run deliberates it: the audit trail's first record."""

    kind: Literal["decision.recorded"] = "decision.recorded"
    decision: Decision


class DeliberationRequested(Event):
    """A new deliberation: its request, calibrations, limits, seed and slices."""

    kind: Literal["deliberation.request"] = "deliberation.request"
    request: dict[str, Any]
    calibrations: dict[str, Any]
    limits: dict[str, Any]
    seed: int
    slices: list[dict[str, Any]]


class BaselineRequested(Event):
    """A new baseline run: its whole manifest (the payload is the manifest's JSON)."""

    kind: Literal["baseline.request"] = "baseline.request"
    manifest: dict[str, Any]

    @model_validator(mode="before")
    @classmethod
    def _payload_is_the_manifest(cls, data: Any) -> Any:
        if isinstance(data, dict) and "manifest" not in data:
            return {
                "kind": data.get("kind", "baseline.request"),
                "manifest": {k: v for k, v in data.items() if k != "kind"},
            }
        return data

    @property
    def strategy(self) -> str:
        return str(self.manifest.get("strategy"))

    def payload(self) -> dict[str, Any]:
        return dict(self.manifest)


# -- the engine ------------------------------------------------------------------------------
class PhaseMark(Event):
    phase: str
    regeneration: int
    round: int


class Resume(PhaseMark):
    """A run continued from its last checkpoint."""

    kind: Literal["engine.resume"] = "engine.resume"

    @classmethod
    def at(cls, state: RunState) -> Resume:
        return cls(phase=state.phase, regeneration=state.regeneration, round=state.round)


class Checkpoint(PhaseMark):
    """A phase completed and was checkpointed."""

    kind: Literal["engine.checkpoint"] = "engine.checkpoint"

    @classmethod
    def at(cls, state: RunState) -> Checkpoint:
        return cls(phase=state.phase, regeneration=state.regeneration, round=state.round)


class BudgetExhausted(Event):
    kind: Literal["engine.budget_exhausted"] = "engine.budget_exhausted"
    reason: str


class Result(Event):
    """The run ended with this status."""

    kind: Literal["engine.result"] = "engine.result"
    status: Status
    conclusions: int | None = None


# -- the theory network ----------------------------------------------------------------------
class Proposal(Solution, Event):
    """A theory agent's proposal (the payload is the `Solution`)."""

    kind: Literal["theory.proposal"] = "theory.proposal"

    @classmethod
    def of(cls, solution: Solution) -> Self:
        return cls.model_validate(solution.model_dump())

    @property
    def solution(self) -> Solution:
        return Solution.model_validate(self.model_dump(exclude={"kind"}))

    def payload(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude={"kind"})


class Revision(Proposal):
    """A theory agent's revised solution."""

    kind: Literal["theory.revision"] = "theory.revision"  # type: ignore[assignment]


class CritiqueGiven(Critique, Event):
    """A critic's critique of one peer's solution (the payload is the `Critique`)."""

    kind: Literal["theory.critique"] = "theory.critique"

    @classmethod
    def of(cls, critique: Critique) -> CritiqueGiven:
        return cls.model_validate(critique.model_dump())

    @property
    def critique(self) -> Critique:
        return Critique.model_validate(self.model_dump(exclude={"kind"}))

    def payload(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude={"kind"})


class RepeatRefused(Event):
    """A solution refused as a repeat of a vetoed one."""

    kind: Literal["theory.repeat_refused"] = "theory.repeat_refused"
    solution: str


class Abstained(Event):
    kind: Literal["theory.abstained"] = "theory.abstained"
    agents: list[str]


# -- the monitor -----------------------------------------------------------------------------
class Clusters(MonitorReport, Event):
    """The monitor's clusters after a phase (the payload is the `MonitorReport`)."""

    kind: Literal["monitor.clusters"] = "monitor.clusters"

    @classmethod
    def of(cls, report: MonitorReport) -> Clusters:
        return cls.model_validate(report.model_dump())

    def payload(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude={"kind"})


class NonConverged(Event):
    kind: Literal["monitor.non_converged"] = "monitor.non_converged"
    rounds: int
    distinct: int
    sufficiency: int


class Rationales(Event):
    """Combined rationales by cluster index (the payload's keys are the indices)."""

    kind: Literal["monitor.rationales"] = "monitor.rationales"
    by_cluster: dict[str, str] = Field(default_factory=dict)
    """The texts by cluster index (written as the payload itself)."""

    @model_validator(mode="before")
    @classmethod
    def _payload_is_the_texts(cls, data: Any) -> Any:
        if isinstance(data, dict) and "by_cluster" not in data:
            return {
                "kind": data.get("kind", "monitor.rationales"),
                "by_cluster": {k: v for k, v in data.items() if k != "kind"},
            }
        return data

    @classmethod
    def of(cls, texts: dict[int, str]) -> Rationales:
        return cls(by_cluster={str(k): v for k, v in texts.items()})

    @property
    def texts(self) -> dict[int, str]:
        return {int(k): str(v) for k, v in self.by_cluster.items()}

    def payload(self) -> dict[str, Any]:
        return dict(self.by_cluster)


class Vote(Event):
    """A baseline's vote: cluster sizes, the winning clusters, whether a tie widened them."""

    kind: Literal["baseline.vote"] = "baseline.vote"
    clusters: list[int]
    winners: list[int]
    tie: bool


class BudgetSpent(Event):
    kind: Literal["baseline.budget_spent"] = "baseline.budget_spent"
    generation: int


# -- the practicality network ----------------------------------------------------------------
class Score(ConstraintScore, Event):
    """One constraint agent's score (the payload is the `ConstraintScore`)."""

    kind: Literal["practicality.score"] = "practicality.score"

    @classmethod
    def of(cls, score: ConstraintScore) -> Score:
        return cls.model_validate(score.model_dump())

    @property
    def constraint_score(self) -> ConstraintScore:
        return ConstraintScore.model_validate(self.model_dump(exclude={"kind"}))

    def payload(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude={"kind"})


class Verdict(Event):
    """A non-converged set that clears practicality, reported as it stands."""

    kind: Literal["practicality.verdict"] = "practicality.verdict"
    mean_score: float
    per_constraint: dict[str, float]
    feasibility: int
    vetoed: bool

    @classmethod
    def of(cls, verdict: PracticalityVerdict) -> Verdict:
        return cls(
            mean_score=verdict.mean_score,
            per_constraint=verdict.per_constraint,
            feasibility=verdict.feasibility,
            vetoed=verdict.vetoed,
        )


class Pass(Event):
    kind: Literal["practicality.pass"] = "practicality.pass"
    mean_score: float
    feasibility: int | None = None


class Veto(Event):
    """The whole set is vetoed (``vetoed_solutions``: the set's ids)."""

    kind: Literal["practicality.veto"] = "practicality.veto"
    mean_score: float
    regeneration: int
    feasibility: int | None = None
    vetoed_solutions: list[str] = []


# -- the compliance rescore ------------------------------------------------------------------
class RescoreStart(Event):
    kind: Literal["rescore.start"] = "rescore.start"
    original: dict[str, Any]
    practicality_kb: str
    constraints: list[str]
    severity: float
    feasibility: int
    knowledge: dict[str, Any]


class RescoreSet(Event):
    kind: Literal["rescore.set"] = "rescore.set"
    regeneration: int
    solution_ids: list[str]


class RescoreVerdict(Event):
    kind: Literal["rescore.verdict"] = "rescore.verdict"
    regeneration: int
    outcome: str
    before: dict[str, Any]
    after: dict[str, Any]


class RescoreResult(Event):
    kind: Literal["rescore.result"] = "rescore.result"
    outcomes: dict[str, str]
    regenerated: bool
    note: str


# -- model calls and the log itself (`ModelCall`: `hivemind_lab.agents.calls`) ---------------
class IntakeCalled(Event):
    """The model intake's call that read the client's decision (`hivemind_lab.problems.intake`),
    written right after ``decision.recorded``. It is copied from the recorded decision's
    `IntakeRecord`: the call was made once, before the run, and a resume or replay never makes
    it again."""

    kind: Literal["llm.intake"] = "llm.intake"
    backend: str
    model: str
    request_key: str
    """The call's response-cache key (backend, model and the whole request)."""
    prompt: list[dict[str, Any]]
    responses: list[dict[str, Any]]
    """Each reply's content, usage and whether the cache served it (as `ModelCall`'s)."""
    dropped: list[str] = Field(default_factory=list)
    """What the quote checks dropped, each with why."""
    error: str | None = None

    @classmethod
    def of(cls, call: IntakeRecord) -> IntakeCalled:
        usage = call.usage or tuple(Usage() for _ in call.replies)
        return cls(
            backend=call.backend,
            model=call.model,
            request_key=call.request_key,
            prompt=[m.model_dump() for m in call.prompt],
            responses=[
                {"content": reply, "usage": used.model_dump(), "cached": call.cached}
                for reply, used in zip(call.replies, usage, strict=False)
            ],
            dropped=list(call.dropped),
            error=call.error,
        )


class Repair(Event):
    """A torn last line, never acknowledged, was cut off when the log was reopened."""

    kind: Literal["audit.repair"] = "audit.repair"
    dropped_bytes: int


class Unknown(Event):
    """A kind this version does not know, or a payload it cannot read: kept as written (read
    only: `AuditLog.append` refuses it, a writer writes a typed event)."""

    kind: str
    data: dict[str, Any] = Field(default_factory=dict)

    def payload(self) -> dict[str, Any]:
        return dict(self.data)


Known = Annotated[
    DecisionRecorded
    | DeliberationRequested
    | BaselineRequested
    | Resume
    | Checkpoint
    | BudgetExhausted
    | Result
    | Proposal
    | Revision
    | CritiqueGiven
    | RepeatRefused
    | Abstained
    | Clusters
    | NonConverged
    | Rationales
    | Vote
    | BudgetSpent
    | Score
    | Verdict
    | Pass
    | Veto
    | RescoreStart
    | RescoreSet
    | RescoreVerdict
    | RescoreResult
    | ModelCall
    | IntakeCalled
    | Repair,
    Field(discriminator="kind"),
]
AnyEvent = Known | Unknown
_KNOWN: TypeAdapter[Known] = TypeAdapter(Known)
_BY_KIND: dict[str, type[Event]] = {
    kind: member
    for member in get_args(get_args(Known)[0])
    for kind in get_args(member.model_fields["kind"].annotation)
}

Entry = tuple[str, Event]
"""Who spoke, and what."""


def parse(kind: str, payload: dict[str, Any]) -> AnyEvent:
    """A record's payload as its typed event, read tolerantly: fields an older version wrote
    that this one does not know are left out; `Unknown` when it still does not read."""
    data = {**payload, "kind": kind}
    try:
        return _KNOWN.validate_python(data)
    except ValidationError:
        model = _BY_KIND.get(kind)
        # Rationales and a baseline's request are whole mappings: nothing of theirs is retired.
        if model is not None and model not in (Rationales, BaselineRequested):
            kept = {k: v for k, v in data.items() if k in model.model_fields}
            if len(kept) < len(data):
                try:
                    return _KNOWN.validate_python(kept)
                except ValidationError:
                    pass
        return Unknown(kind=kind, data=payload)
