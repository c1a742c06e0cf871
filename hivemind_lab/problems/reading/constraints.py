"""Binding constraints are not read from prose: the problem file (``[[constraints]]``), the
``--constraint`` flag or the model intake state them, with the options each forbids or limits.

`read_constraints` stays importable for the stand-in's policy (`hivemind_lab.agents.policy.binding`
reads its facts through it) and reads nothing: a fact is never a binding constraint unless the
decision records it as one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from hivemind_lab.problems.model import ConstraintKind

__all__ = ["ReadConstraint", "read_constraints"]


class ReadConstraint(NamedTuple):
    """A constraint as a reader found it."""

    text: str
    quote: str | None
    kind: ConstraintKind
    forbids: tuple[int, ...]
    limits: tuple[int, ...]


def read_constraints(text: str, options: Sequence[str] = ()) -> tuple[ReadConstraint, ...]:
    """No constraint: prose is not read for them (see the module's docstring)."""
    del text, options
    return ()
