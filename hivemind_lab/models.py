"""The two pydantic bases every data model of the project derives from.

Pure data is immutable (`Frozen`); a model of a file the project writes and reads back
(`FrozenRecord`: manifests, specs, exports) also refuses unknown fields, so a typo or a file
from a newer writer is an error rather than silently dropped. Standard library and pydantic
only, so any layer may import it.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Frozen(BaseModel):
    """An immutable value: hashable, safe to share between tasks and processes."""

    model_config = ConfigDict(frozen=True)


class FrozenRecord(Frozen):
    """A frozen model of a stored file: unknown fields are refused."""

    model_config = ConfigDict(frozen=True, extra="forbid")
