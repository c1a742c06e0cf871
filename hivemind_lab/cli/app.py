"""The ``hivemind-lab`` command tree: every group and command is registered here, in the
order ``--help`` lists them; the kb and audit commands live here, the others beside it."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table
from typer.core import TyperGroup

from hivemind_lab.cli import deliberate, experiments, intake, loops, services
from hivemind_lab.cli.common import console, err_console, fail
from hivemind_lab.errors import HivemindError, InputError
from hivemind_lab.samples import KNOWLEDGE, sample_path


def _tidy_help(command: Any, ctx: Any) -> None:
    """Flags render as bare flags (not ``--pdf <bool>``), arguments as upper-case names."""
    for param in [*command.params, command.get_help_option(ctx)]:
        if param is None or param.metavar is not None:
            continue
        if getattr(param, "is_flag", False):
            param.metavar = ""
        elif param.param_type_name == "argument":
            param.metavar = param.name.upper()


class _Group(TyperGroup):
    """A command group whose commands' help shows flags and arguments as users type them."""

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        command = super().get_command(ctx, cmd_name)
        if command is not None:
            _tidy_help(command, ctx)
        return command

    def format_help(self, ctx: Any, formatter: Any) -> None:
        _tidy_help(self, ctx)
        super().format_help(ctx, formatter)

    def list_commands(self, ctx: Any) -> list[str]:
        """``deliberate``, what most users came for, is listed first."""
        return sorted(super().list_commands(ctx), key=lambda name: name != "deliberate")


app = typer.Typer(
    cls=_Group,
    help="Multi-agent strategic deliberation on a shared knowledge base.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
kb_app = typer.Typer(cls=_Group, help="Inspect and slice knowledge bases.", no_args_is_help=True)
audit_app = typer.Typer(cls=_Group, help="Verify and export audit trails.", no_args_is_help=True)
mcp_app = typer.Typer(
    cls=_Group, help="The Hivemind MCP server for AI clients.", no_args_is_help=True
)
token_app = typer.Typer(
    cls=_Group, help="Bearer tokens of multi-client HTTP mode.", no_args_is_help=True
)


def _print_version(value: bool) -> None:
    if value:
        from hivemind_lab import __version__

        console.print(f"hivemind-lab {__version__}", highlight=False)
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_print_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """Multi-agent strategic deliberation on a shared knowledge base."""


app.add_typer(kb_app, name="kb")
app.add_typer(audit_app, name="audit")
app.add_typer(mcp_app, name="mcp")
llm_app = typer.Typer(help="The local language-model server (llama.cpp).", no_args_is_help=True)
app.add_typer(llm_app, name="llm")
mcp_app.add_typer(token_app, name="token")
app.command("rescore")(loops.rescore)
kb_app.command("diff")(loops.kb_diff)
llm_app.command("serve")(services.llm_serve)
mcp_app.command("serve", help=services.mcp_serve_help())(services.mcp_serve)
token_app.command("add")(services.mcp_token_add)
token_app.command("list")(services.mcp_token_list)
token_app.command("remove")(services.mcp_token_remove)
app.command("sweep")(experiments.sweep)
app.command("report")(experiments.report)
app.command("replay")(experiments.replay)
app.command("deliberate")(deliberate.deliberate)
app.command("intake")(intake.intake)


def _fail(exc: Exception) -> typer.Exit:
    return fail(exc)


@kb_app.command("check")
def kb_check(
    folder: Annotated[
        Path | None,
        typer.Argument(help="The knowledge base to check (the same as --kb).", show_default=False),
    ] = None,
    kb: Annotated[
        Path, typer.Option(help="Folder (or file) of .md, .txt or .jsonl documents.")
    ] = Path("data/knowledge"),
    density: Annotated[int, typer.Option(help="Tokens per agent to check the corpus at.")] = 6000,
) -> None:
    """Validate every document of a knowledge base (each bad file with its reasons, skipped
    files with why) and print corpus statistics; exit 1 if any file failed."""
    from hivemind_lab.knowledge.documents import check_documents, density_advice

    if folder is not None and kb != Path("data/knowledge") and folder != kb:
        raise fail(
            InputError("kb", f"two folders given: {str(folder)!r} and {str(kb)!r}"),
            command=kb_check,
        )
    try:
        check = check_documents(sample_path(folder or kb, KNOWLEDGE))
    except HivemindError as exc:
        raise _fail(exc) from None
    for where, reasons in check.problems.items():
        err_console.print(
            f"[red]bad[/] {where}: {'; '.join(reasons)}", highlight=False, markup=True
        )
    for where, reason in check.skipped.items():
        err_console.print(f"skipped {where}: {reason}", highlight=False)
    docs = check.documents
    tokens = [d.tokens for d in docs] or [0]
    schools = sorted({d.school for d in docs})
    console.print(
        f"{len(docs)} document{'s' if len(docs) != 1 else ''} read, {len(check.problems)} "
        f"failed, {len(check.skipped)} "
        f"skipped; {sum(tokens)} tokens (min {min(tokens)}, max {max(tokens)}), "
        f"{len(schools)} school{'s' if len(schools) != 1 else ''}: {', '.join(schools)}",
        highlight=False,
    )
    advice = density_advice(docs, density) if docs else None
    if advice:
        err_console.print(f"warning: {advice}", highlight=False)
    if check.problems:
        raise typer.Exit(code=1)


@kb_app.command("slice")
def kb_slice(
    density: Annotated[int, typer.Option(help="Target tokens per slice (one slice per agent).")],
    kb: Annotated[
        Path, typer.Option(help="Folder (or file) of .md, .txt or .jsonl documents.")
    ] = Path("data/knowledge"),
    seed: Annotated[int, typer.Option(help="Seed for the local search.")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """Slice a knowledge base into agent slices of about DENSITY tokens (documents never cut)."""
    import warnings

    from hivemind_lab.knowledge.documents import load_documents
    from hivemind_lab.knowledge.slicing import plan_slices
    from hivemind_lab.tokens import default_counter

    if density <= 0:  # before touching the knowledge base, so the real mistake is named
        raise _fail(
            HivemindError(f"density: must be a positive integer, got {density} (allowed: > 0)")
        )
    try:
        docs = load_documents(sample_path(kb, KNOWLEDGE))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = plan_slices(docs, density, seed=seed)
    except HivemindError as exc:
        raise _fail(exc) from None
    if as_json:
        payload = result.model_dump(mode="json")
        payload["token_counter"] = default_counter().name
        typer.echo(json.dumps(payload, indent=2))
        return
    table = Table(title=f"{result.n_agents} slices at density {density} ({default_counter().name})")
    for col in ("slice", "tokens", "deviation", "documents", "topics"):
        table.add_column(
            col, justify="right" if col in ("slice", "tokens", "deviation") else "left"
        )
    for s in result.slices:
        table.add_row(
            str(s.index),
            str(s.tokens),
            f"{s.deviation:+d}",
            ", ".join(s.document_ids),
            ", ".join(s.topics),
        )
    console.print(table)
    console.print(
        f"objective Σ|tokens−density| = {result.objective} (first-fit: {result.first_fit_objective}); "
        f"coherence {result.coherence:.2f}; method {result.method}"
    )
    for note in result.warnings:
        err_console.print(f"[yellow]warning:[/] {note}")


@audit_app.command("verify")
def audit_verify(
    path: Annotated[Path, typer.Argument(help="audit.jsonl file or run directory.")],
) -> None:
    """Check the hash chain; exits non-zero naming the first bad record."""
    from hivemind_lab.runs.audit import verify_log
    from hivemind_lab.runs.rundir import RunDir

    target = RunDir(path).audit_path if path.is_dir() else path
    try:
        report = verify_log(target)
    except HivemindError as exc:
        raise _fail(exc) from None
    if report.ok:
        console.print(f"[green]intact[/]: {report.records} records, head {report.head}")
        return
    err_console.print(f"[bold red]TAMPERED[/]: record {report.first_bad}: {report.reason}")
    raise typer.Exit(code=1)


@audit_app.command("export")
def audit_export(
    path: Annotated[
        Path, typer.Argument(help="audit.jsonl file, run directory (or sweep, for chat-jsonl).")
    ],
    format: Annotated[
        str, typer.Option(help="parquet, jsonl, or chat-jsonl (agent calls as chats).")
    ] = "parquet",
    out: Annotated[Path | None, typer.Option(help="Output file (default beside the log).")] = None,
    role: Annotated[
        list[str] | None,
        typer.Option(help="chat-jsonl: theory, practicality or monitor (repeatable)."),
    ] = None,
    outcome: Annotated[
        str, typer.Option(help="chat-jsonl: all, cleared or vetoed solution sets.")
    ] = "all",
    include_client_data: Annotated[
        bool,
        typer.Option("--include-client-data", help="chat-jsonl: keep the problem and facts."),
    ] = False,
) -> None:
    """Export a verified audit trail (chat-jsonl: every agent call as a training record)."""
    from hivemind_lab.runs.audit import export_log
    from hivemind_lab.runs.rundir import RunDir

    if format == "chat-jsonl":
        loops.chat_export(
            path, out, roles=role, outcome=outcome, include_client_data=include_client_data
        )
        return
    target = RunDir(path).audit_path if path.is_dir() else path
    if format not in ("parquet", "jsonl"):
        raise _fail(
            HivemindError(f"format: unknown {format!r} (allowed: parquet, jsonl, chat-jsonl)")
        )
    destination = out or target.with_name(f"audit.export.{format}")
    try:
        written = export_log(target, destination, format=format)  # type: ignore[arg-type]
    except HivemindError as exc:
        raise _fail(exc) from None
    console.print(f"exported {written}")


def main() -> None:
    """Console entry point."""
    try:
        app()
    except KeyboardInterrupt:
        err_console.print("interrupted; continue with --resume RUN_DIR")
        sys.exit(130)
