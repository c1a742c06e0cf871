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

from pydantic import AliasChoices, ValidationError
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
        """Each environment variable the settings read → the field it sets (a field may name
        several with ``AliasChoices``: the first one set wins)."""
        out = {}
        for name, field in cls.model_fields.items():
            alias = field.validation_alias
            choices = alias.choices if isinstance(alias, AliasChoices) else [alias]
            out.update({choice: name for choice in choices if isinstance(choice, str)})
        return out

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
            raise cls._input_error(exc.errors(include_url=False)[0], named) from None

    @classmethod
    def _input_error(cls, err: ErrorDetails, named: Mapping[str, str]) -> InputError:
        name = str(err["loc"][0]) if err["loc"] else cls.__name__
        field = named.get(name, name)
        if err["type"] == "missing":  # its input is every value given, secrets too
            where = " or ".join(v for v, f in named.items() if f == field)
            said = f"not given and no {where} in the environment" if where else "not given"
            return InputError(field, said)
        return input_error(err, name, cls.model_fields.get(field))


def input_error(err: ErrorDetails, name: str, field: FieldInfo | None = None) -> InputError:
    """A pydantic error as an `InputError` naming what the user wrote (a variable or a field)
    with the value given and the values allowed (pydantic's own words when it gives none)."""
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
