"""How a run ended: the one vocabulary of statuses and the words each shows to a reader.

Every place that names or shows a status (the result model, the reports, the terminal summary,
the notebooks) reads it from here, so a new status cannot be written by one and missing in
another (a report once crashed with ``KeyError: 'abstained'``).
"""

from __future__ import annotations

from typing import Literal, NamedTuple, get_args

Status = Literal[
    "converged",
    "non_converged",
    "vetoed_out",
    "abstained",
    "budget_exhausted",
    "no_evidence",
]
"""How a run ended. ``abstained``: after a veto every theory agent produced only repeats of
vetoed plans, so there was no new set to judge. ``no_evidence``: no agent found evidence bearing
on the question (the plans rest only on an agent's own maxims)."""

STATUSES: tuple[Status, ...] = get_args(Status)


class StatusWords(NamedTuple):
    """What a reader is told about a status."""

    label: str
    """A short badge ("Converged", "No consensus")."""
    happened: str
    """One sentence: what happened in the run."""
    recommends: bool
    """Whether a run ending so can carry a recommendation a reader may act on."""


WORDS: dict[Status, StatusWords] = {
    "converged": StatusWords(
        "Converged",
        "The agents converged on a plan, and it passed the practicality review.",
        True,
    ),
    "non_converged": StatusWords(
        "No consensus",
        "The agents still disagreed when the rounds ran out; the plan shown has the most "
        "support, not agreement.",
        True,
    ),
    "vetoed_out": StatusWords(
        "Vetoed",
        "Every set of plans the agents produced failed the practicality review, so there is no "
        "recommendation.",
        False,
    ),
    "abstained": StatusWords(
        "No new plan",
        "After a veto the agents had nothing new to propose (each would only have repeated a "
        "vetoed plan), so there is no recommendation.",
        False,
    ),
    "budget_exhausted": StatusWords(
        "Stopped early",
        "The token or cost budget ran out before the deliberation finished; anything shown is "
        "unfinished.",
        False,
    ),
    "no_evidence": StatusWords(
        "No evidence",
        "No agent found evidence in the knowledge base bearing on the question; the plans rest "
        "only on the agents' own maxims and are not advice.",
        False,
    ),
}


def words(status: str) -> StatusWords:
    """The reader's words for a status; an unknown one (a newer run read by older code) is
    shown as it is named rather than failing the report."""
    if status in WORDS:
        return WORDS[status]
    return StatusWords(
        status.replace("_", " ").capitalize(), f"The run ended as {status!r}.", False
    )
