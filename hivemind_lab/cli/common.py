"""What every ``hivemind-lab`` command shares: the two consoles and how an error is shown."""

from __future__ import annotations

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import Progress

from hivemind_lab.errors import HivemindError

console = Console()
err_console = Console(stderr=True)


def fail(exc: Exception) -> typer.Exit:
    """Print an error (escaped: messages quote values like ".[sweeps]") and exit with 2."""
    err_console.print(
        f"[bold red]error:[/] {escape(str(exc))}", highlight=False, markup=True, soft_wrap=True
    )
    return typer.Exit(code=2)


def erase(bar: Progress, exc: HivemindError) -> HivemindError:
    """Clear a progress display on failure, so no spinner frame is left after the error."""
    bar.live.transient = True
    return exc
