"""Deliberation inputs: the client's request, the three calibrations and run limits.

Every bad value is refused with an `InputError` naming the field and its allowed range.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from pydantic import (
    BaseModel,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from hivemind_lab.calibrations import CALIBRATIONS, allowed
from hivemind_lab.calibrations import PRESETS as PRESETS
from hivemind_lab.calibrations import Calibrations as Calibrations
from hivemind_lab.errors import InputError
from hivemind_lab.models import FrozenRecord
from hivemind_lab.problems import AttachedDocument, Problem
from hivemind_lab.problems.model import (
    MAX_OPTION_CHARS,
    MAX_OPTIONS,
    Decision,
    DecisionSource,
    ExclusiveSource,
    ExclusivitySource,
    Fact,
    Option,
    OptionsSource,
)

if TYPE_CHECKING:  # the agents' schemas load with a run, not with the CLI's start-up
    from hivemind_lab.agents.schemas import BindingConstraint, DecisionContext

ProfileName = Literal["enterprise", "individual"]
CritiqueMode = Literal["pairwise", "batched"]
ScoreMode = Literal["per_solution", "batched"]
"""per_solution: one score call per constraint agent and distinct solution; batched: one call
per constraint agent for the whole set (`hivemind_lab.deliberation.practicality.score`)."""

ALLOWED: dict[str, str] = {
    "problem": "non-empty text",
    "sufficiency": "integer >= 1",
    "feasibility": "integer 1-100",
    "density": "integer tokens > 0",
    **{name: allowed(name) for name in CALIBRATIONS},
    "max_rounds": "integer 1-100",
    "min_rounds": "integer 0-100, at most max_rounds",
    "max_regenerations": "integer 0-50",
    "max_tokens": "integer > 0 or none",
    "max_cost_usd": "number > 0 or none",
    "concurrency": "integer 1-512",
    "profile": "enterprise, individual or a non-empty list of constraint names",
    "critique_mode": "pairwise or batched",
    "score_mode": "per_solution or batched",
    "options": f"up to {MAX_OPTIONS} non-empty option names of at most {MAX_OPTION_CHARS} characters",
    "exclusive": "true (one of the options) or false (options may be combined or sequenced)",
    "decision": "the client's decision, read at intake (request_for or problems.decide)",
}


class Limits(FrozenRecord):
    """Bounds on a run's work."""

    max_rounds: int = Field(default=6, ge=1, le=100)
    """Critique-and-revise rounds per generation before stopping as non_converged."""
    min_rounds: int = Field(default=1, ge=0, le=100)
    """Critique-and-revise rounds that run before the monitor may halt the loop (the spec's
    order: propose, critique, revise, then halt); 0 lets the monitor halt the proposals.
    Runs recorded before this limit existed read as 0."""
    max_regenerations: int = Field(default=3, ge=0, le=50)
    """Regenerations after vetoes before stopping as vetoed_out."""
    max_tokens: int | None = Field(default=None, gt=0)
    """Token budget for the whole run (None: unlimited)."""
    max_cost_usd: float | None = Field(default=None, gt=0)
    """Cost budget for the whole run (None: unlimited)."""
    concurrency: int = Field(default=16, ge=1, le=512)
    """Model calls in flight at once."""

    @model_validator(mode="after")
    def _rounds_in_order(self) -> Limits:
        if self.min_rounds > self.max_rounds:
            raise ValueError(
                f"min_rounds ({self.min_rounds}) exceeds max_rounds ({self.max_rounds})"
            )
        return self


class DeliberationRequest(FrozenRecord):
    """What the client asks: the problem and the sliders."""

    problem: str = Field(min_length=1)
    """The problem, in words."""
    sufficiency: int = Field(ge=1)
    """Halt the theory loop once distinct conclusions <= sufficiency."""
    feasibility: int = Field(ge=1, le=100)
    """Veto the solution set when the mean constraint score <= feasibility."""
    density: int = Field(gt=0)
    """Target tokens of knowledge per theory agent."""
    client_data: tuple[AttachedDocument, ...] = ()
    market_data: tuple[AttachedDocument, ...] = ()
    profile: ProfileName | tuple[str, ...] = "enterprise"
    """Practicality profile, or a custom list of constraints."""
    critique_mode: CritiqueMode = "pairwise"
    """pairwise: N(N-1) critique calls a round; batched: one call per critic (N calls)."""
    score_mode: ScoreMode = "per_solution"
    """per_solution: one call per constraint agent and distinct solution; batched: one call per
    constraint agent for the set. Runs recorded before 2026-12-04 read as per_solution."""
    problem_id: str = "ad-hoc"
    """Identifier of the problem (for reports and graph export)."""
    problem_title: str = ""
    """The problem's title (for reports)."""
    decision: Decision
    """The client's decision, read once at intake (`request_for`, the CLI's and notebooks'
    intake, `hivemind_lab.problems.decide`) and recorded; a request never reads its question."""

    @model_validator(mode="before")
    @classmethod
    def _no_older_copies(cls, data: Any) -> Any:
        # Requests recorded before 2026-12-03 also wrote the decision's options and
        # exclusivity in older words: copies of the decision, dropped when read.
        if isinstance(data, dict) and data.get("decision") is not None:
            return {k: v for k, v in data.items() if k not in _OLDER_COPIES}
        return data

    @property
    def options(self) -> tuple[str, ...]:
        """The decision's option labels."""
        return self.decision.labels

    @property
    def options_source(self) -> OptionsSource:
        """given, extracted or agents: the decision's option source in the older words."""
        return _OLD_OPTION_SOURCE[self.decision.options_source]

    @property
    def exclusive(self) -> bool:
        """The options are alternatives: a solution pursues exactly one and rejects the others
        (never sequences them)."""
        return bool(self.decision.exclusive)

    @property
    def exclusive_source(self) -> ExclusiveSource:
        """Where ``exclusive`` came from, in the older words (``default``: not stated)."""
        return _OLD_EXCLUSIVE_SOURCE[self.decision.exclusive_source]

    def context(self) -> DecisionContext:
        """The decision as every agent sees it: question, options, facts and binding
        constraints."""
        from hivemind_lab.agents.schemas import DecisionContext

        return DecisionContext(
            problem=self.problem,
            options=self.options,
            facts=self.facts(),
            exclusive=self.exclusive,
            constraints=binding_view(self.decision),
        )

    def facts(self) -> tuple[Fact, ...]:
        """The client's facts, as the decision recorded them."""
        return self.decision.facts

    @field_validator("problem")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        return value.strip()

    @field_validator("profile")
    @classmethod
    def _profile(cls, value: str | tuple[str, ...]) -> str | tuple[str, ...]:
        if isinstance(value, tuple) and (not value or any(not v.strip() for v in value)):
            raise ValueError("custom profile needs at least one non-empty constraint name")
        return value


_OLD_OPTION_SOURCE: dict[DecisionSource, OptionsSource] = {
    "toml": "given",
    "front_matter": "given",
    "flag": "given",
    "request": "given",
    "notebook": "given",
    "intake": "extracted",
    "reader": "extracted",
    "agents": "agents",
}
_OLD_EXCLUSIVE_SOURCE: dict[ExclusivitySource | None, ExclusiveSource] = {
    "toml": "problem",
    "front_matter": "problem",
    "flag": "cli",
    "request": "request",
    "notebook": "request",
    "intake": "question",
    "reader": "question",
    None: "default",
}
_NEW_EXCLUSIVE_SOURCE: dict[str, ExclusivitySource | None] = {
    "problem": "toml",
    "cli": "flag",
    "request": "request",
    "question": "reader",
    "default": None,
}


_OLDER_COPIES = frozenset({"options", "options_source", "exclusive", "exclusive_source"})


def recorded_decision(request: dict[str, Any]) -> Decision:
    """The decision of a request recorded before decisions were (manifests of version 1 and
    2): its recorded options and exclusivity, marked ``derived``. Nothing is read again: the
    question is not read for options or facts (a run then had no facts of its own)."""
    labels = [str(o) for o in request.get("options") or ()]
    source: DecisionSource = (
        "agents"
        if not labels
        else "reader"
        if request.get("options_source") == "extracted"
        else "request"
    )
    exclusive = request.get("exclusive")
    stated = _NEW_EXCLUSIVE_SOURCE.get(str(request.get("exclusive_source") or "request"))
    return Decision(
        options=tuple(Option(label=label, source=source) for label in labels),
        options_source=source,
        exclusive=exclusive if isinstance(exclusive, bool) else None,
        exclusive_source=stated if isinstance(exclusive, bool) else None,
        reader_version="recorded",
        derived=True,
    )


M = TypeVar("M", bound=BaseModel)


def build(model: type[M], **values: Any) -> M:
    """Validate values into ``model``; the first bad field becomes an `InputError`."""
    try:
        return model.model_validate(values)
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        # The innermost field with an allowed range names it (a decision's ``exclusive``).
        named = [str(p) for p in err["loc"] if str(p) in ALLOWED]
        field = named[-1] if named else str(err["loc"][0]) if err["loc"] else model.__name__
        got = err.get("input")
        raise InputError(
            field,
            f"{re.sub(r'^value error, ', '', err['msg'].rstrip('.').lower())}, got {got!r}"[:300],
            allowed=ALLOWED.get(field),
        ) from None


def request_for(
    problem: Problem, *, decision: Decision | None = None, **overrides: Any
) -> DeliberationRequest:
    """The deliberation request for a problem: its question, decision, data and suggested
    sliders, with any slider given in ``overrides`` (None means "use the problem's").

    The decision is ``decision`` when given (the CLI builds it with the user's flags), else
    built here from the problem and any ``options``/``exclusive`` override (an ``exclusive``
    override wins over the problem's; ``exclusive_source="cli"`` from the CLI). The one place a
    problem becomes a request (CLI, notebooks, sweeps and tests use it).
    """
    options = overrides.pop("options", None) or ()
    exclusive = overrides.pop("exclusive", None)
    exclusive_source = overrides.pop("exclusive_source", None)
    if decision is None:
        # Imported here: the CLI checks sliders with a placeholder decision before it loads
        # the rule reader, so that a bad value is answered fast.
        from hivemind_lab.problems.decision import decide

        decision = decide(
            problem,
            options=options,
            exclusive=exclusive,
            exclusive_source="flag" if exclusive_source == "cli" else "request",
        )
    values: dict[str, Any] = {
        "problem": problem.question,
        "problem_id": problem.id,
        "problem_title": problem.title,
        "sufficiency": problem.suggested.sufficiency,
        "feasibility": problem.suggested.feasibility,
        "density": problem.suggested.density,
        "client_data": problem.client_data,
        "market_data": problem.market_data,
        "profile": problem.profile,
        "decision": decision,
    }
    values.update({k: v for k, v in overrides.items() if v is not None})
    if isinstance(values["profile"], str):
        values["profile"] = parse_profile(values["profile"])
    return build(DeliberationRequest, **values)


def parse_profile(text: str) -> ProfileName | tuple[str, ...]:
    """A profile as written in a problem file or on the command line: a named profile, or
    comma-separated constraint names."""
    names = tuple(p.strip() for p in text.split(",") if p.strip())
    if len(names) == 1 and names[0] in ("enterprise", "individual"):
        return names[0]  # type: ignore[return-value]  # "enterprise, " is still the profile
    return names


def binding_view(decision: Decision) -> tuple[BindingConstraint, ...]:
    """A decision's binding constraints as agents see them (text cut to a task's bound)."""
    from hivemind_lab.agents.schemas import BindingConstraint
    from hivemind_lab.wire import MAX_TEXT

    return tuple(
        BindingConstraint.model_validate(
            {
                "id": c.id,
                "text": c.text if len(c.text) <= MAX_TEXT else c.text[: MAX_TEXT - 1] + "…",
                "kind": c.kind,
                "forbids": c.forbids,
                "limits": c.limits,
                "not_first": c.not_first,
                "after": c.after,
            }
        )
        for c in decision.constraints
    )
