"""Settings read from environment variables (pydantic-settings), with errors that name the
variable as the user wrote it.

A settings class derives from `EnvSettings` and names each field's variable with
``validation_alias``. Building one in code (``GraphConfig(store="neo4j")``) never reads the
environment; `EnvSettings.from_env` reads the named variables from the mapping it is given —
the process environment only when none is — so a test passes its own mapping and never sees
the caller's variables.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, Self

from pydantic import ValidationError
from pydantic.fields import FieldInfo
from pydantic_core import ErrorDetails
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from hivemind_lab.errors import InputError


class _MappingSource(EnvSettingsSource):
    """pydantic-settings' environment source over a given mapping instead of ``os.environ``."""

    def __init__(self, settings_cls: type[BaseSettings], env: Mapping[str, str]) -> None:
        self._env = env
        super().__init__(settings_cls)

    def _load_env_vars(self) -> Mapping[str, str | None]:
        # Names are case-sensitive (`EnvSettings`), so the mapping is read as given.
        return {k: v for k, v in self._env.items() if v or not self.env_ignore_empty}


class EnvSettings(BaseSettings):
    """Frozen settings whose fields may name an environment variable (``validation_alias``).

    An empty variable counts as unset; names are case-sensitive; a field is set by its name in
    code and by its variable in the environment."""

    model_config = SettingsConfigDict(
        frozen=True,
        extra="forbid",
        case_sensitive=True,
        env_ignore_empty=True,
        populate_by_name=True,  # validate_by_name from pydantic 2.11; the floor is 2.7
    )

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # Keyword arguments only: the environment is read by `from_env`, from its mapping.
        return (init_settings,)

    @classmethod
    def variables(cls) -> dict[str, str]:
        """Each environment variable the settings read → the field it sets."""
        return {
            field.validation_alias: name
            for name, field in cls.model_fields.items()
            if isinstance(field.validation_alias, str)
        }

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: Any) -> Self:
        """The settings from ``env``'s variables (the process environment when None), with
        every non-None keyword override winning over its variable.

        Raises:
            InputError: a bad value, named as the user gave it (the variable, or the keyword).
        """
        env = os.environ if env is None else env
        named = cls.variables()
        values = _MappingSource(cls, {k: v for k, v in env.items() if k in named})()
        given = {k: v for k, v in overrides.items() if v is not None}
        values = {k: v for k, v in values.items() if named.get(k) not in given}
        try:
            return cls(**values, **given)
        except ValidationError as exc:
            err = exc.errors(include_url=False)[0]
            name = str(err["loc"][0]) if err["loc"] else cls.__name__
            field = cls.model_fields.get(named.get(name, name))
            raise input_error(err, name, field) from None


def input_error(err: ErrorDetails, name: str, field: FieldInfo | None = None) -> InputError:
    """A pydantic error as an `InputError` naming what the user wrote (a variable or a field)
    with the value given and the values allowed (pydantic's own words when it gives none)."""
    if err["type"] == "missing":  # the input is every value given: secrets too
        return InputError(name, "required")
    allowed = _allowed(err, field)
    said = f"got {err.get('input')!r}"
    return InputError(name, said if allowed else f"{err['msg']}, {said}", allowed=allowed)


def _allowed(err: ErrorDetails, field: FieldInfo | None) -> str | None:
    """The values a field allows: its choices, or its kind and whole range, or its pattern."""
    ctx = err.get("ctx") or {}
    if "expected" in ctx:
        return str(ctx["expected"])
    if "pattern" in ctx:
        return f"text matching {ctx['pattern']}"
    if field is None:
        return None
    bounds = [
        f"{sign} {getattr(rule, key)}"
        for key, sign in _BOUNDS
        for rule in field.metadata
        if getattr(rule, key, None) is not None
    ]
    kind = _KINDS.get(field.annotation)
    return " ".join(filter(None, (kind, " and ".join(bounds)))) or None


_BOUNDS = (("gt", ">"), ("ge", ">="), ("lt", "<"), ("le", "<="))
_KINDS: dict[object, str] = {int: "a whole number", float: "a number", bool: "true or false"}
