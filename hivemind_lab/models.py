"""The pydantic bases every data model of the project derives from.

Pure data is immutable (`Frozen`); a model of a file the project writes and reads back
(`FrozenRecord`: manifests, specs, exports) also refuses unknown fields, so a typo or a file
from a newer writer is an error rather than silently dropped. An audit `Event` is a record of
that kind: what one line of a run's audit trail says. Standard library and pydantic only, so
any layer may import it (the agent caller writes its call records as events without importing
the run layer that reads them).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict


class Frozen(BaseModel):
    """An immutable value: hashable, safe to share between tasks and processes."""

    model_config = ConfigDict(frozen=True)


class FrozenRecord(Frozen):
    """A frozen model of a stored file: unknown fields are refused."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class Event(FrozenRecord):
    """An audit event: its ``kind`` (a ``Literal`` in each subclass) and its payload's fields.

    Written through `hivemind_lab.runs.audit.AuditLog.append`; read back through
    `hivemind_lab.runs.events.parse`, which tolerates what older versions wrote.
    """

    kind: str

    def payload(self) -> dict[str, Any]:
        """The JSON payload this event is written as."""
        return self.model_dump(mode="json", exclude={"kind"})
