"""Deliberation inputs: the client's request, the three calibrations and run limits.

Every bad value is refused with an `InputError` naming the field and its allowed range.
"""

from __future__ import annotations

import re
from typing import Any, Literal, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    ValidationError,
    field_validator,
    model_validator,
)

from hivemind_lab.agents.schemas import DecisionContext
from hivemind_lab.errors import InputError
from hivemind_lab.problems import AttachedDocument, Problem
from hivemind_lab.problems.decision import (
    MAX_OPTION_CHARS,
    MAX_OPTIONS,
    Fact,
    OptionsSource,
    extract_facts,
    extract_options,
)
from hivemind_lab.problems.exclusivity import ExclusiveSource, read_exclusive
from hivemind_lab.problems.options import declining

ProfileName = Literal["enterprise", "individual"]
CritiqueMode = Literal["pairwise", "batched"]

ALLOWED: dict[str, str] = {
    "problem": "non-empty text",
    "sufficiency": "integer >= 1",
    "feasibility": "integer 1-100",
    "density": "integer tokens > 0",
    "stubbornness": "0.0-1.0",
    "similarity_threshold": "0.0-1.0",
    "severity": "0.0-1.0",
    "max_rounds": "integer 1-100",
    "max_regenerations": "integer 0-50",
    "max_tokens": "integer > 0 or none",
    "max_cost_usd": "number > 0 or none",
    "concurrency": "integer 1-512",
    "profile": "enterprise, individual or a non-empty list of constraint names",
    "critique_mode": "pairwise or batched",
    "options": f"up to {MAX_OPTIONS} non-empty option names of at most {MAX_OPTION_CHARS} characters",
    "exclusive": "true (one of the options) or false (options may be combined or sequenced)",
}


class Calibrations(BaseModel):
    """The three dials of a deliberation.

    Attributes:
        stubbornness: how far theory agents move when criticised. 0 adopts every well-supported
            critique point; 1 never changes. Higher ⇒ smaller revisions, more rounds to halt.
        similarity_threshold: cosine similarity from which the monitor lumps two solutions into
            one cluster. Higher ⇒ stricter lumping ⇒ more distinct conclusions.
        severity: how critical constraint agents are. 0 lenient, 1 strict. Higher ⇒ lower
            feasibility scores ⇒ more vetoes.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    stubbornness: float = Field(default=0.3, ge=0.0, le=1.0)
    similarity_threshold: float = Field(default=0.35, ge=0.0, le=1.0)
    severity: float = Field(default=0.5, ge=0.0, le=1.0)


PRESETS: dict[str, Calibrations] = {
    "balanced": Calibrations(),
    "cooperative": Calibrations(stubbornness=0.1, similarity_threshold=0.3, severity=0.4),
    "adversarial": Calibrations(stubbornness=0.7, similarity_threshold=0.5, severity=0.7),
}
"""Named calibration presets."""


class Limits(BaseModel):
    """Bounds on a run's work."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_rounds: int = Field(default=6, ge=1, le=100)
    """Critique-and-revise rounds per generation before stopping as non_converged."""
    max_regenerations: int = Field(default=3, ge=0, le=50)
    """Regenerations after vetoes before stopping as vetoed_out."""
    max_tokens: int | None = Field(default=None, gt=0)
    """Token budget for the whole run (None: unlimited)."""
    max_cost_usd: float | None = Field(default=None, gt=0)
    """Cost budget for the whole run (None: unlimited)."""
    concurrency: int = Field(default=16, ge=1, le=512)
    """Model calls in flight at once."""


class DeliberationRequest(BaseModel):
    """What the client asks: the problem and the sliders."""

    model_config = ConfigDict(frozen=True, extra="forbid")

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
    problem_id: str = "ad-hoc"
    """Identifier of the problem (for reports and graph export)."""
    problem_title: str = ""
    """The problem's title (for reports)."""
    options: tuple[str, ...] = Field(default=(), max_length=MAX_OPTIONS)
    """The courses of action the client weighs; read from the question when not given."""
    options_source: OptionsSource = "agents"
    """Where the options came from (``agents``: none found, agents propose their own)."""
    exclusive: StrictBool = False
    """The options are alternatives: a solution pursues exactly one and rejects the others
    (never sequences them). Read from the question when not given."""
    exclusive_source: ExclusiveSource = "default"
    """Where ``exclusive`` came from (``default``: not given and not read, so combinable)."""

    @model_validator(mode="before")
    @classmethod
    def _options_from_question(cls, data: Any) -> Any:
        if isinstance(data, dict) and not data.get("options"):
            found = extract_options(str(data.get("problem", "")))
            data = {
                **data,
                "options": found,
                "options_source": "extracted" if found else "agents",
            }
        elif isinstance(data, dict) and "options_source" not in data:
            data = {**data, "options_source": "given"}
        options = data.get("options") if isinstance(data, dict) else None
        if isinstance(options, (list, tuple)) and len(options) == 1 and str(options[0]).strip():
            # one option is a yes/no decision: weigh it against declining it
            data = {**data, "options": (options[0], declining(str(options[0]).strip()))}
        return _exclusivity(data)

    @field_validator("options")
    @classmethod
    def _option_names(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        cleaned = tuple(v.strip() for v in value)
        if any(not v or len(v) > MAX_OPTION_CHARS for v in cleaned):
            raise ValueError(f"each option must be 1-{MAX_OPTION_CHARS} characters")
        if len(set(cleaned)) != len(cleaned):
            raise ValueError("options must be distinct")
        return cleaned

    def context(self) -> DecisionContext:
        """The decision as every agent sees it: question, options and facts."""
        return DecisionContext(
            problem=self.problem, options=self.options, facts=self.facts(), exclusive=self.exclusive
        )

    def facts(self) -> tuple[Fact, ...]:
        """The client's facts: client and market data cut into citable statements."""
        return extract_facts(
            self.problem,
            [(d.id, d.text) for d in self.client_data],
            [(d.id, d.text) for d in self.market_data],
            options=self.options,
        )

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


def _exclusivity(data: Any) -> Any:
    """``exclusive`` as given (source ``request`` unless named), else as the question states
    it, else the default: combinable."""
    if not isinstance(data, dict):
        return data
    if data.get("exclusive") is not None:
        return {**data, "exclusive_source": data.get("exclusive_source") or "request"}
    options = data.get("options")
    listed = [str(o) for o in options] if isinstance(options, (list, tuple)) else []
    read = read_exclusive(str(data.get("problem", "")), listed)
    return {
        **data,
        "exclusive": bool(read),
        "exclusive_source": "default" if read is None else "question",
    }


M = TypeVar("M", bound=BaseModel)


def build(model: type[M], **values: Any) -> M:
    """Validate values into ``model``; the first bad field becomes an `InputError`."""
    try:
        return model.model_validate(values)
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        field = str(err["loc"][0]) if err["loc"] else model.__name__
        got = err.get("input")
        raise InputError(
            field,
            f"{re.sub(r'^value error, ', '', err['msg'].rstrip('.').lower())}, got {got!r}"[:300],
            allowed=ALLOWED.get(field),
        ) from None


def request_for(problem: Problem, **overrides: Any) -> DeliberationRequest:
    """The deliberation request for a problem: its question, options, data and suggested
    sliders, with any slider or option given in ``overrides`` (None means "use the problem's");
    an ``exclusive`` override wins over the problem's (``exclusive_source="cli"`` from the CLI).

    The one place a problem becomes a request (CLI, notebooks, sweeps and tests use it).
    """
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
    }
    if problem.options:
        values["options"] = problem.options
    if problem.exclusive is not None:
        values.update(exclusive=problem.exclusive, exclusive_source="problem")
    if overrides.get("exclusive") is not None:
        values["exclusive_source"] = overrides.get("exclusive_source") or "request"
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
