"""What every ``hivemind-lab`` command shares: the two consoles and how an error is shown."""

from __future__ import annotations

import typing
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import Progress
from typer.models import ArgumentInfo, OptionInfo

from hivemind_lab.errors import HivemindError, InputError

if TYPE_CHECKING:
    from hivemind_lab.llm.endpoint import EndpointSettings, Prices

# Flags that `deliberate` and `intake` share: the client's decision and the model that reads it.
OptionFlags = Annotated[
    list[str] | None,
    typer.Option("--option", help="An option the client weighs (repeat for each)."),
]
ConstraintFlags = Annotated[
    list[str] | None,
    typer.Option("--constraint", help="A binding constraint (repeat for each)."),
]
OptionsFrom = Annotated[
    str,
    typer.Option(
        help="When no options are given: reader (refuses when unsure) or agents (they "
        "propose their own)."
    ),
]
ModelId = Annotated[
    str | None, typer.Option(help="Model id for the openai backend (or HIVEMIND_MODEL).")
]
BaseUrl = Annotated[
    str | None, typer.Option(help="Endpoint for the openai backend (or OPENAI_BASE_URL).")
]

console = Console()
err_console = Console(stderr=True)

FIELD_PARAMETERS: dict[str, str] = {
    "similarity_threshold": "similarity",
    "run_dir": "out",
    "knowledge_base": "kb",
    "options": "option",
    "constraints": "constraint",
}
"""Library field → the command parameter that sets it, where the two names differ (every other
field is set by the parameter of its own name, when the command has one)."""


def flags_of(command: Callable[..., Any]) -> dict[str, str]:
    """Each option of a typer command → its flag as the user types it (``critique_mode`` →
    ``--critique-mode``, ``exclusive`` → ``--exclusive``; an argument by its upper-case name),
    read from the command's own declarations so the two cannot drift."""
    flags: dict[str, str] = {}
    for name, hint in typing.get_type_hints(command, include_extras=True).items():
        for meta in getattr(hint, "__metadata__", ()):
            if isinstance(meta, OptionInfo):
                # Under Annotated, typer keeps a first declaration in ``default``.
                first = (meta.default,) if isinstance(meta.default, str) else ()
                declared = [d for d in (*first, *(meta.param_decls or ())) if d.startswith("--")]
                flags[name] = (
                    declared[0].split("/")[0] if declared else "--" + name.replace("_", "-")
                )
            elif isinstance(meta, ArgumentInfo):
                flags[name] = name.upper()  # as --help shows it: RUN_DIR
    return flags


def fail(
    exc: Exception,
    *,
    command: Callable[..., Any] | None = None,
    names: Mapping[str, str] | None = None,
) -> typer.Exit:
    """Print an error (escaped: messages quote values like ".[sweeps]") and exit with 2.

    With ``command``, an `InputError` about a field the command sets by a flag names the flag
    as typed (``--similarity``, not ``similarity_threshold``); ``names`` maps further fields
    to the words to use (``run_dir`` → ``--resume`` when the run came from --resume)."""
    text = str(exc)
    if isinstance(exc, InputError):
        flags = flags_of(command) if command is not None else {}
        name = (
            (names or {}).get(exc.field)
            or flags.get(exc.field)
            or flags.get(FIELD_PARAMETERS.get(exc.field, ""))
        )
        if name:
            text = exc.worded(name)
    err_console.print(
        f"[bold red]error:[/] {escape(text)}", highlight=False, markup=True, soft_wrap=True
    )
    return typer.Exit(code=2)


def erase(bar: Progress, exc: HivemindError) -> HivemindError:
    """Clear a progress display on failure, so no spinner frame is left after the error."""
    bar.live.transient = True
    return exc


@contextmanager
def on_ctrl_c(said: Callable[[], str]) -> Iterator[None]:
    """Ctrl-C inside the block prints ``said()`` (what was kept, what to run next) and exits
    130, as a shell expects; Typer would otherwise exit 130 without a word (a Ctrl-C during the
    seconds the engine's libraries take to load said nothing)."""
    try:
        yield
    except KeyboardInterrupt:
        err_console.print(f"interrupted: {said()}", highlight=False, soft_wrap=True)
        raise typer.Exit(code=130) from None


# Flags that `deliberate` and `sweep` share: how calls treat the model's endpoint. Each field's
# parameter has the field's own name, so an error about it names the flag as typed.
RequestTimeout = Annotated[
    float | None,
    typer.Option(
        "--request-timeout",
        help="Seconds one model request may take (or HIVEMIND_REQUEST_TIMEOUT_S).",
        show_default="120 for openai, 3600 for local",
    ),
]
Retries = Annotated[
    int | None,
    typer.Option(
        "--retries",
        help="Attempts after the first on a 429, 5xx, timeout or lost connection, 0-20 (or "
        "HIVEMIND_MAX_RETRIES).",
        show_default="5",
    ),
]
EndpointConcurrency = Annotated[
    int | None,
    typer.Option(
        "--endpoint-concurrency",
        help="Requests in flight to the endpoint from one process, 1-1024 (or "
        "HIVEMIND_ENDPOINT_CONCURRENCY).",
        show_default="8 for openai, the server's slots for local",
    ),
]
RateLimit = Annotated[
    float | None,
    typer.Option(
        "--rate-limit",
        help="Requests a minute to the endpoint, shared by every worker of a sweep (or "
        "HIVEMIND_RATE_LIMIT_RPM).",
        show_default="none",
    ),
]


def endpoint_settings(**flags: float | int | None) -> EndpointSettings:
    """The endpoint's settings from the environment, each flag given winning over its
    variable; a bad value raises an `InputError` naming the variable, or the field (which
    `fail` words as its flag)."""
    import os

    from hivemind_lab.llm.endpoint import EndpointSettings

    return EndpointSettings.from_env(os.environ, **flags)


InputPrice = Annotated[
    float | None,
    typer.Option(
        "--input-usd-per-mtok",
        help="US dollars a million prompt tokens, for the plan and the run's cost (or "
        "HIVEMIND_INPUT_USD_PER_MTOK).",
        show_default="0",
    ),
]
OutputPrice = Annotated[
    float | None,
    typer.Option(
        "--output-usd-per-mtok",
        help="US dollars a million completion tokens (or HIVEMIND_OUTPUT_USD_PER_MTOK).",
        show_default="0",
    ),
]
PlanFlag = Annotated[
    bool,
    typer.Option(
        "--plan",
        help="Print the expected calls, tokens and cost, and stop before the first model call.",
    ),
]


def prices(**flags: float | None) -> Prices:
    """Token prices from the environment, each flag given winning over its variable."""
    import os

    from hivemind_lab.llm.endpoint import Prices

    return Prices.from_env(os.environ, **flags)
