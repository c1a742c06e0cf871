"""Errors that users see. Each names the field or file at fault and what is allowed."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class HivemindError(Exception):
    """Base class for every error hivemind_lab raises on purpose."""


class InputError(HivemindError, ValueError):
    """A user-supplied value is out of range or malformed.

    Attributes:
        field: the name of the offending field (or file path).
        message: what is wrong with it, without the field's name.
        allowed: a human description of the allowed values.
    """

    def __init__(self, field: str, message: str, *, allowed: str | None = None) -> None:
        self.field = field
        self.message = message
        self.allowed = allowed
        super().__init__(self.worded(field))

    def worded(self, name: str) -> str:
        """The message under another name for the field: the CLI names the flag the user typed
        (``--similarity``) where the library names its field (``similarity_threshold``)."""
        text = f"{name}: {self.message}"
        if self.allowed:
            text += f" (allowed: {self.allowed})"
        return text


def did_you_mean(value: str, choices: Iterable[str]) -> str:
    """The hint "did you mean 'x'? " naming the choice nearest to a mistyped ``value``, or ""
    when no choice is close (difflib's ratio ≥ 0.6, its default cut-off)."""
    near = difflib.get_close_matches(value.strip().lower(), [str(c) for c in choices], n=1)
    return f"did you mean {near[0]!r}? " if near else ""


class DocumentError(HivemindError):
    """One or more knowledge documents failed validation; lists every problem by file and field."""

    def __init__(self, problems: list[str], *, documents: int | None = None) -> None:
        self.problems = problems
        # Each problem starts with "<file or file:line>: "; count documents, not problems.
        bad = len({p.split(": ", 1)[0] for p in problems})
        of = f" of {documents}" if documents else ""
        lines = "\n".join(f"  - {p}" for p in problems)
        said = f"{bad} invalid document{'s' if bad != 1 else ''}{of}, {len(problems)} problem"
        super().__init__(f"{said}{'s' if len(problems) != 1 else ''}:\n{lines}")


class CacheMissError(HivemindError):
    """Replay mode asked for a response that is not in the cache (replay never calls the network)."""


class AuditIntegrityError(HivemindError):
    """An audit log failed verification; `index` is the first bad record (0-based line)."""

    def __init__(self, index: int, reason: str) -> None:
        self.index = index
        self.reason = reason
        super().__init__(f"record {index}: {reason}")
