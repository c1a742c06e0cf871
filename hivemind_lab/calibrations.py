"""The three calibrations of a deliberation and their named presets.

A module of its own with nothing but pydantic behind it, so the command line can show the
defaults in ``--help`` (and the MCP server start) without loading the problem reader.
"""

from __future__ import annotations

from typing import Literal, get_args

from annotated_types import Ge, Le
from pydantic import Field

from hivemind_lab.models import FrozenRecord

CalibrationName = Literal["stubbornness", "similarity_threshold", "severity"]
"""A calibration's name: a field of `Calibrations` (a test holds the two equal)."""
CALIBRATIONS: tuple[str, ...] = get_args(CalibrationName)
"""The calibration names, in the model's order (a sweep's axes)."""


class Calibrations(FrozenRecord):
    """The three dials of a deliberation.

    Attributes:
        stubbornness: how far theory agents move when criticised. 0 adopts every well-supported
            critique point; 1 never changes. Higher ⇒ smaller revisions, more rounds to halt.
        similarity_threshold: cosine similarity from which the monitor lumps two solutions into
            one cluster. Higher ⇒ stricter lumping ⇒ more distinct conclusions.
        severity: how critical constraint agents are. 0 lenient, 1 strict. Higher ⇒ lower
            feasibility scores ⇒ more vetoes.
    """

    stubbornness: float = Field(
        default=0.3, ge=0.0, le=1.0, description="0 adopts every critique, 1 never revises"
    )
    similarity_threshold: float = Field(
        default=0.65, ge=0.0, le=1.0, description="cosine similarity, 0–1"
    )
    severity: float = Field(default=0.5, ge=0.0, le=1.0, description="0 lenient, 1 strict")


def bounds(name: str) -> tuple[float, float]:
    """The range a calibration may take, from its field's bounds."""
    rules = Calibrations.model_fields[name].metadata
    low = next(r.ge for r in rules if isinstance(r, Ge))
    high = next(r.le for r in rules if isinstance(r, Le))
    return float(low), float(high)  # type: ignore[arg-type]  # the fields' bounds are floats


def allowed(name: str) -> str:
    """A calibration's range as an error message states it (``0.0-1.0``)."""
    low, high = bounds(name)
    return f"{low}-{high}"


def scale(name: str) -> str:
    """What the ends of a calibration's scale mean, in words (its field's description)."""
    return Calibrations.model_fields[name].description or "{}–{}".format(*bounds(name))


PRESETS: dict[str, Calibrations] = {
    "balanced": Calibrations(),
    "cooperative": Calibrations(stubbornness=0.1, similarity_threshold=0.5, severity=0.4),
    "adversarial": Calibrations(stubbornness=0.7, similarity_threshold=0.8, severity=0.7),
}
"""Named calibration presets."""
