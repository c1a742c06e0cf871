"""Deliberation inputs: the client's request, the three calibrations and run limits.

Every bad value is refused with an `InputError` naming the field and its allowed range.
"""

from __future__ import annotations

from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from hivemind_lab.errors import InputError
from hivemind_lab.problems import AttachedDocument

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
            f"{err['msg'].rstrip('.').lower()}, got {got!r}"[:300],
            allowed=ALLOWED.get(field),
        ) from None
