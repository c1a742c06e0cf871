"""Typed settings from environment variables, with errors that name the variable at fault."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from hivemind_lab.errors import InputError

M = TypeVar("M", bound=BaseModel)


def from_env(
    model: type[M],
    env: Mapping[str, str],
    variables: Mapping[str, str],
    *,
    extra: Mapping[str, Any] | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> M:
    """Build ``model`` from ``env`` (``variables`` maps variable → field); values from ``extra``
    and non-None ``overrides`` win. A bad value raises `InputError` naming its variable."""
    values: dict[str, Any] = {field: env[var] for var, field in variables.items() if env.get(var)}
    values.update(extra or {})
    values.update({k: v for k, v in (overrides or {}).items() if v is not None})
    try:
        return model(**values)
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        field = str(err["loc"][0]) if err["loc"] else model.__name__
        name = next((var for var, f in variables.items() if f == field), field)
        raise InputError(name, f"{err['msg']}, got {err.get('input')!r}") from None
