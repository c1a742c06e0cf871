"""The ``hivemind-lab`` command line."""

from __future__ import annotations

import asyncio
import json
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import (
    BarColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table
from typer.core import TyperGroup

from hivemind_lab.cli import experiments, loops, services
from hivemind_lab.cli.common import console, err_console, fail
from hivemind_lab.cli.common import erase as _erase
from hivemind_lab.errors import HivemindError
from hivemind_lab.inputs import PRESETS

_BALANCED = PRESETS["balanced"]


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
app.add_typer(kb_app, name="kb")
app.add_typer(audit_app, name="audit")
app.add_typer(mcp_app, name="mcp")
llm_app = typer.Typer(help="The local language-model server (llama.cpp).", no_args_is_help=True)
app.add_typer(llm_app, name="llm")
mcp_app.add_typer(token_app, name="token")
app.command("rescore")(loops.rescore)
kb_app.command("diff")(loops.kb_diff)
llm_app.command("serve")(services.llm_serve)
mcp_app.command("serve")(services.mcp_serve)
token_app.command("add")(services.mcp_token_add)
app.command("sweep")(experiments.sweep)
app.command("report")(experiments.report)
app.command("replay")(experiments.replay)


def _fail(exc: Exception) -> typer.Exit:
    return fail(exc)


@kb_app.command("check")
def kb_check(
    kb: Annotated[
        Path, typer.Option(help="Folder (or file) of .md, .txt or .jsonl documents.")
    ] = Path("data/knowledge"),
) -> None:
    """Validate every document of a knowledge base and print corpus statistics."""
    from hivemind_lab.knowledge.documents import load_documents

    try:
        docs = load_documents(kb)
    except HivemindError as exc:
        raise _fail(exc) from None
    tokens = [d.tokens for d in docs]
    schools = sorted({d.school for d in docs})
    console.print(
        f"{len(docs)} documents, {sum(tokens)} tokens (min {min(tokens)}, max {max(tokens)}), "
        f"{len(schools)} schools: {', '.join(schools)}"
    )


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
        docs = load_documents(kb)
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


@app.command()
def deliberate(
    problem: Annotated[
        str | None, typer.Option(help="Problem TOML file, or the problem as text.")
    ] = None,
    sufficiency: Annotated[
        int | None,
        typer.Option(
            help="Halt when distinct conclusions ≤ this (≥ 1).",
            show_default="the problem's suggestion, else 2",
        ),
    ] = None,
    feasibility: Annotated[
        int | None,
        typer.Option(
            help="Veto when mean constraint score ≤ this (1–100).",
            show_default="the problem's suggestion, else 50",
        ),
    ] = None,
    density: Annotated[
        int | None,
        typer.Option(
            help="Tokens of knowledge per theory agent (> 0).",
            show_default="the problem's suggestion, else 6000",
        ),
    ] = None,
    stubbornness: Annotated[
        float | None,
        typer.Option(
            help="0 adopts every well-supported critique … 1 never revises.",
            show_default=f"the preset's; balanced {_BALANCED.stubbornness}",
        ),
    ] = None,
    similarity: Annotated[
        float | None,
        typer.Option(
            help="Monitor's similarity threshold (0–1).",
            show_default=f"the preset's; balanced {_BALANCED.similarity_threshold}",
        ),
    ] = None,
    severity: Annotated[
        float | None,
        typer.Option(
            help="Constraint agents' strictness (0–1).",
            show_default=f"the preset's; balanced {_BALANCED.severity}",
        ),
    ] = None,
    preset: Annotated[
        str, typer.Option(help="Calibration preset: balanced, cooperative, adversarial.")
    ] = "balanced",
    profile: Annotated[
        str | None, typer.Option(help="enterprise, individual, or comma-separated constraints.")
    ] = None,
    critique_mode: Annotated[
        str, typer.Option(help="pairwise (N(N−1) calls) or batched (N calls).")
    ] = "pairwise",
    backend: Annotated[
        str,
        typer.Option(
            help="offline (no network), openai (any compatible endpoint) or local (a llama.cpp "
            "server started for the run; set up by `make llama`)."
        ),
    ] = "offline",
    model: Annotated[
        str | None, typer.Option(help="Model id for the openai backend (or HIVEMIND_MODEL).")
    ] = None,
    base_url: Annotated[
        str | None, typer.Option(help="Endpoint for the openai backend (or OPENAI_BASE_URL).")
    ] = None,
    model_file: Annotated[
        Path | None,
        typer.Option(
            help="GGUF model for the local backend (or HIVEMIND_MODEL_FILE).",
            show_default="the bundled SmolLM2-135M (plumbing, not strategy)",
        ),
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed for slicing and agents.")] = 0,
    max_rounds: Annotated[int, typer.Option(help="Rounds before stopping as non_converged.")] = 6,
    max_regenerations: Annotated[
        int, typer.Option(help="Regenerations before stopping as vetoed_out.")
    ] = 3,
    max_tokens: Annotated[int | None, typer.Option(help="Token budget for the run.")] = None,
    concurrency: Annotated[int, typer.Option(help="Model calls in flight at once.")] = 16,
    kb: Annotated[Path, typer.Option(help="Knowledge base folder.")] = Path("data/knowledge"),
    practicality_kb: Annotated[Path, typer.Option(help="Constraint knowledge folder.")] = Path(
        "data/practicality"
    ),
    out: Annotated[
        Path | None, typer.Option(help="Run directory (default runs/<problem>-<time>).")
    ] = None,
    resume: Annotated[Path | None, typer.Option(help="Continue the run in this directory.")] = None,
    latency: Annotated[
        float, typer.Option(help="Artificial seconds per model call (demos, tests).", hidden=True)
    ] = 0.0,
) -> None:
    """Run a deliberation: theory network → monitor → practicality network, with an audit trail."""
    # Only the light input modules before validation: a bad value is answered in well under a
    # second; the deliberation machinery (scikit-learn, the OpenAI SDK, plotly) loads after.
    from hivemind_lab.inputs import (
        PRESETS,
        Calibrations,
        DeliberationRequest,
        Limits,
        build,
        request_for,
    )
    from hivemind_lab.problems import resolve_problem

    try:
        if resume is not None:
            manifest = (
                json.loads((resume / "manifest.json").read_text("utf-8"))
                if (resume / "manifest.json").exists()
                else None
            )
            if manifest is None:
                raise HivemindError(f"resume: {str(resume)!r} holds no run (no manifest.json)")
            request = DeliberationRequest.model_validate(manifest["request"])
            cal = Calibrations.model_validate(manifest["calibrations"])
            limits = Limits.model_validate(manifest["limits"])
            seed = int(manifest["seed"])
            kb, practicality_kb = (
                Path(manifest["knowledge_base"]),
                Path(manifest["practicality_kb"]),
            )
            backend, model = (
                manifest["backend"],
                manifest["model"] if manifest["backend"] == "openai" else None,
            )
            started_with = manifest.get("model_info", {}).get("model_path")
            if backend == "local" and model_file is None and started_with:
                model_file = Path(started_with)  # the weights the run started with
            run_dir = resume
        else:
            if problem is None:
                raise HivemindError(
                    "problem: required (a .toml, .txt or .md problem file, or the problem text)"
                )
            prob = resolve_problem(problem)
            if preset not in PRESETS:
                raise HivemindError(f"preset: unknown {preset!r} (allowed: {', '.join(PRESETS)})")
            base = PRESETS[preset]
            cal = build(
                Calibrations,
                stubbornness=base.stubbornness if stubbornness is None else stubbornness,
                similarity_threshold=base.similarity_threshold
                if similarity is None
                else similarity,
                severity=base.severity if severity is None else severity,
            )
            request = request_for(
                prob,
                sufficiency=sufficiency,
                feasibility=feasibility,
                density=density,
                profile=profile,
                critique_mode=critique_mode,
            )
            limits = build(
                Limits,
                max_rounds=max_rounds,
                max_regenerations=max_regenerations,
                max_tokens=max_tokens,
                concurrency=concurrency,
            )
            stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
            run_dir = out or Path("runs") / f"{prob.id}-{stamp}"
        from hivemind_lab.llm.factory import backend_choice  # loads the openai SDK: ~1 s

        choice = backend_choice(
            backend, model=model, base_url=base_url, model_file=model_file, latency_s=latency
        )
    except HivemindError as exc:
        raise _fail(exc) from None
    from hivemind_lab.deliberation import Progress as RunProgress
    from hivemind_lab.deliberation import deliberate_async
    from hivemind_lab.llm.factory import open_model
    from hivemind_lab.reports import write_report

    columns = (
        SpinnerColumn(),
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        TextColumn("{task.fields[detail]}"),
        TimeElapsedColumn(),
    )
    failure: HivemindError | None = None
    with Progress(*columns, console=err_console, transient=False) as bar:
        task_id = bar.add_task("deliberating", total=limits.max_rounds, detail="")

        def on_progress(p: RunProgress) -> None:
            bar.update(
                task_id,
                completed=p.round,
                description=f"generation {p.regeneration} · round {p.round} · {p.phase}",
                detail=f"calls {p.calls} · tokens {p.tokens}"
                + (f" · distinct {p.distinct}" if p.distinct is not None else ""),
            )

        try:
            # A local server lives for this block only and is stopped by its PID on any exit.
            with open_model(choice, concurrency=limits.concurrency) as chat:
                served = getattr(chat, "server", None)
                if served is not None:
                    err_console.print(
                        f"local model {served.info.model_file} on llama-server "
                        f"{served.base_url} (pid {served.pid})",
                        highlight=False,
                        soft_wrap=True,
                    )
                result = asyncio.run(
                    deliberate_async(
                        request,
                        cal,
                        limits,
                        model=chat,
                        run_dir=run_dir,
                        seed=seed,
                        knowledge_base=kb,
                        practicality_kb=practicality_kb,
                        on_progress=on_progress,
                        resume=resume is not None,
                    )
                )
        except HivemindError as exc:
            failure = _erase(bar, exc)
    if failure is not None:
        if (run_dir / "manifest.json").exists() and not (run_dir / "result.json").exists():
            err_console.print(f"the run is resumable: hivemind-lab deliberate --resume {run_dir}")
        raise _fail(failure)
    report = write_report(run_dir, force=True)
    _print_summary(result, run_dir)
    console.print(f"report: {report} (and report.md)")


def _print_summary(result: Any, run_dir: Path) -> None:
    console.print(
        f"[bold]{result.status}[/] after {result.rounds} round(s) in the final generation, "
        f"{result.regenerations} regeneration(s), {result.n_agents} theory agents; "
        f"{result.usage.calls} calls, {result.usage.tokens} tokens, "
        f"{result.usage.cache_hits} cache hits, {result.wall_time_s:.1f} s"
    )
    table = Table(title="Conclusions")
    for col in ("rank", "conclusion", "agents", "feasibility"):
        table.add_column(col)
    for c in result.conclusions:
        table.add_row(str(c.rank), c.title, str(len(c.agents)), f"{c.mean_score:.1f}")
    if result.conclusions:
        console.print(table)
    console.print(f"run directory: {run_dir}")


@audit_app.command("verify")
def audit_verify(
    path: Annotated[Path, typer.Argument(help="audit.jsonl file or run directory.")],
) -> None:
    """Check the hash chain; exits non-zero naming the first bad record."""
    from hivemind_lab.audit.log import verify_log

    target = path / "audit.jsonl" if path.is_dir() else path
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
    from hivemind_lab.audit.log import export_log

    if format == "chat-jsonl":
        loops.chat_export(
            path, out, roles=role, outcome=outcome, include_client_data=include_client_data
        )
        return
    target = path / "audit.jsonl" if path.is_dir() else path
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
