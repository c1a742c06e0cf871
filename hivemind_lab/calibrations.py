"""The three calibrations of a deliberation and their named presets.

A module of its own with nothing but pydantic behind it, so the command line can show the
defaults in ``--help`` (and the MCP server start) without loading the problem reader.
"""

from __future__ import annotations

from pydantic import Field

from hivemind_lab.models import FrozenRecord


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

    stubbornness: float = Field(default=0.3, ge=0.0, le=1.0)
    similarity_threshold: float = Field(default=0.65, ge=0.0, le=1.0)
    severity: float = Field(default=0.5, ge=0.0, le=1.0)


PRESETS: dict[str, Calibrations] = {
    "balanced": Calibrations(),
    "cooperative": Calibrations(stubbornness=0.1, similarity_threshold=0.5, severity=0.4),
    "adversarial": Calibrations(stubbornness=0.7, similarity_threshold=0.8, severity=0.7),
}
"""Named calibration presets."""
