"""The ``hivemind-lab`` command line."""

from __future__ import annotations

import asyncio
import json
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table
from typer.core import TyperGroup

from hivemind_lab import cli_loops
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
app.command("rescore")(cli_loops.rescore)
kb_app.command("diff")(cli_loops.kb_diff)

console = Console()
err_console = Console(stderr=True)


def _erase(bar: Progress, exc: HivemindError) -> HivemindError:
    """Clear a progress display on failure, so no spinner frame is left after the error."""
    bar.live.transient = True
    return exc


def _missing_extra(*, ray: bool, optuna: bool) -> HivemindError | None:
    """Ray and Optuna are optional (the ``sweeps`` extra): say how to install them."""
    import importlib.util

    for needed, module in ((ray, "ray"), (optuna, "optuna")):
        if needed and importlib.util.find_spec(module) is None:
            return HivemindError(
                f"{module}: not installed (allowed: pip install -e '.[sweeps]', part of '.[dev]')"
            )
    return None


def _fail(exc: Exception) -> typer.Exit:
    # Escaped: messages quote values and commands with brackets (".[sweeps]", "[low, high]").
    err_console.print(
        f"[bold red]error:[/] {escape(str(exc))}", highlight=False, markup=True, soft_wrap=True
    )
    return typer.Exit(code=2)


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
            chosen_profile: Any = profile
            if profile is not None and (
                "," in profile or profile not in ("enterprise", "individual")
            ):
                chosen_profile = tuple(p.strip() for p in profile.split(",") if p.strip())
            request = request_for(
                prob,
                sufficiency=sufficiency,
                feasibility=feasibility,
                density=density,
                profile=chosen_profile,
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
    from hivemind_lab.deliberation import deliberate_async
    from hivemind_lab.engine import Progress as RunProgress
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


@llm_app.command("serve")
def llm_serve(
    model_file: Annotated[
        Path | None,
        typer.Option(
            help="GGUF model file (or HIVEMIND_MODEL_FILE).",
            show_default="the bundled SmolLM2-135M (plumbing, not strategy)",
        ),
    ] = None,
    port: Annotated[int, typer.Option(help="Port on 127.0.0.1 (0 picks a free one).")] = 0,
    slots: Annotated[int, typer.Option(help="Requests decoded in parallel (-np).")] = 2,
    context_size: Annotated[int, typer.Option(help="Tokens of context per slot.")] = 8192,
) -> None:
    """Run the local backend's llama.cpp server in the foreground (Ctrl-C stops it), for
    notebooks and sweeps that point the openai backend at it."""
    from hivemind_lab.llm.factory import BackendChoice, local_server

    try:
        choice = BackendChoice(backend="local", model_file=model_file, context_size=context_size)
        server = local_server(choice, slots=slots, port=port)
        with server:
            info = server.endpoint.info
            console.print(
                f"llama-server {info.server_version} serving {info.model_file} "
                f"(sha256 {info.model_sha256[:12]}…, {info.slots} slots × {info.context_size} "
                f"tokens, {info.threads} threads) at [bold]{server.base_url}[/] (pid {server.pid})",
                soft_wrap=True,
            )
            console.print(
                f"use it: hivemind-lab deliberate --backend openai --base-url {server.base_url} "
                f"--model {info.model_file} --concurrency {info.slots} …",
                soft_wrap=True,
            )
            code = server.wait()
            raise HivemindError(f"llama-server exited with code {code}:\n{server.log_tail()}")
    except HivemindError as exc:
        raise _fail(exc) from None
    except KeyboardInterrupt:
        err_console.print("stopped")


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
        cli_loops.chat_export(
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


@mcp_app.command("serve")
def mcp_serve(
    transport: Annotated[
        str, typer.Option(help="stdio (one client), http (streamable HTTP at /mcp) or sse.")
    ] = "stdio",
    host: Annotated[
        str, typer.Option(help="Bind address for http/sse (loopback unless a token file is set).")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port for http/sse (0 picks a free one).")] = 8765,
    token_file: Annotated[
        Path | None, typer.Option(help="Bearer-token hashes → models (HIVEMIND_TOKEN_FILE).")
    ] = None,
    allowed_host: Annotated[
        list[str] | None,
        typer.Option(
            help="Extra Host header accepted, e.g. hive.lan or hive.lan:8765; repeatable "
            "(HIVEMIND_ALLOWED_HOSTS)."
        ),
    ] = None,
    allowed_origin: Annotated[
        list[str] | None,
        typer.Option(help="Extra Origin accepted; repeatable (HIVEMIND_ALLOWED_ORIGINS)."),
    ] = None,
    public_url: Annotated[
        str | None,
        typer.Option(
            help="Base URL clients use, e.g. https://hive.example.org, advertised as the "
            "OAuth resource (HIVEMIND_PUBLIC_URL)."
        ),
    ] = None,
    conformance_fixtures: Annotated[
        bool, typer.Option(hidden=True, help="Serve the conformance suite's fixture tools.")
    ] = False,
) -> None:
    """Serve the six hivemind tools. Configured by SOURCE_MODEL, HIVEMIND_STORE, HIVEMIND_DB_PATH,
    NEO4J_URI/USER/PASSWORD, CONFLICT_THRESHOLD, CONSENSUS_PHI, MAX_CONTEXT_TOKENS and
    HIVEMIND_TOKEN_FILE / HIVEMIND_WEBHOOK_URLS / HIVEMIND_WEBHOOK_SECRET /
    HIVEMIND_ALLOWED_HOSTS / HIVEMIND_ALLOWED_ORIGINS / HIVEMIND_PUBLIC_URL."""
    from hivemind_lab.graph.config import GraphConfig
    from hivemind_lab.mcp_server.serve import free_port, serve
    from hivemind_lab.mcp_server.settings import ServerSettings

    if transport not in ("stdio", "http", "sse"):
        raise _fail(HivemindError(f"transport: unknown {transport!r} (allowed: stdio, http, sse)"))
    try:
        settings = ServerSettings.from_env(
            transport=transport,
            host=host,
            port=free_port(host) if port == 0 else port,
            token_file=token_file,
            allowed_hosts=tuple(allowed_host) if allowed_host else None,
            allowed_origins=tuple(allowed_origin) if allowed_origin else None,
            public_url=public_url,
            conformance_fixtures=conformance_fixtures or None,
        )
        serve(settings, GraphConfig.from_env())
    except HivemindError as exc:
        raise _fail(exc) from None


@token_app.command("add")
def mcp_token_add(
    model: Annotated[str, typer.Argument(help="The model name the token will act as.")],
    file: Annotated[Path, typer.Option(help="Token file to create or extend.")] = Path(
        "hivemind-tokens.json"
    ),
) -> None:
    """Create a bearer token for MODEL; only its hash is stored. The token is printed once."""
    from hivemind_lab.mcp_server.tokens import add_token

    try:
        token = add_token(file, model)
    except HivemindError as exc:
        raise _fail(exc) from None
    typer.echo(token)
    err_console.print(f"token for {model!r} added to {file} (store it now: it is not kept)")


@app.command()
def sweep(
    spec: Annotated[
        Path, typer.Argument(help="Experiment file, e.g. experiments/grocer-calibration.toml.")
    ],
    workers: Annotated[int, typer.Option(help="Local worker processes.")] = 1,
    ray: Annotated[
        str | None, typer.Option("--ray", help="Run on Ray: a cluster address, or 'local'.")
    ] = None,
    graph: Annotated[
        bool, typer.Option("--graph", help="Also write every run into the hivemind graph.")
    ] = False,
) -> None:
    """Run a calibration sweep; finished points are skipped, so an interrupted sweep resumes."""
    from hivemind_lab.experiments import load_spec
    from hivemind_lab.experiments import run as run_sweep

    try:
        experiment = load_spec(spec)
    except HivemindError as exc:
        raise _fail(exc) from None
    if workers < 1:
        raise _fail(HivemindError(f"workers: must be >= 1, got {workers}"))
    missing = _missing_extra(ray=ray is not None, optuna=experiment.space.kind == "optuna")
    if missing:
        raise _fail(missing)
    columns = (
        SpinnerColumn(),
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
    )
    failure: HivemindError | None = None
    with Progress(*columns, console=err_console) as bar:
        task_id = bar.add_task(f"sweep {experiment.name}", total=None)
        try:
            report = run_sweep(
                experiment,
                workers=workers,
                ray_address=ray,
                total=lambda n: bar.update(task_id, total=n),
                on_done=lambda s: bar.advance(task_id),
            )
        except HivemindError as exc:
            failure = _erase(bar, exc)
    if failure is not None:
        raise _fail(failure)
    skipped = sum(r.skipped for r in report.runs)
    console.print(
        f"{len(report.runs)} runs ({skipped} already done) in {report.wall_time_s:.1f} s; "
        f"{report.model_calls} model calls, {report.reused_calls} calls reused across points; "
        f"results in {report.root}"
    )
    from hivemind_lab.experiments import load as load_runs
    from hivemind_lab.experiments.compare import compare, compute_table, format_interval

    runs = load_runs(report.root)
    table = compare(runs)
    summary = Table(title="strategies (mean ± 95 % Student-t interval, n runs)")
    for col in ("strategy", "feasibility", "vetoes", "calls", "tokens"):
        summary.add_column(col)
    for row in table.iter_rows(named=True):
        summary.add_row(
            row["strategy"],
            *(
                format_interval(row[f"{m}_mean"], row[f"{m}_ci95"], row[f"{m}_n"], digits=d)
                for m, d in (
                    ("mean_feasibility", 1),
                    ("vetoes", 2),
                    ("run_calls", 0),
                    ("run_tokens", 0),
                )
            ),
        )
    console.print(summary)
    compute = compute_table(runs)
    if not compute.is_empty():
        side = Table(title="compute: baseline / its deliberation (flagged above 10 %)")
        for col in ("strategy", "problem", "seed", "calls", "tokens", "vote", "compute"):
            side.add_column(col)
        for row in compute.iter_rows(named=True):
            side.add_row(
                row["strategy"],
                row["problem"],
                str(row["seed"]),
                f"{row['run_calls']} / {row['deliberation_calls']}",
                f"{row['run_tokens']:,} / {row['deliberation_tokens']:,}",
                "tie" if row.get("tie") else "",
                "[red]MISMATCH[/]" if row["mismatch"] else "equal",
            )
        console.print(side)
    if graph:
        from hivemind_lab.experiments.graph_export import analysis_graph, export_runs
        from hivemind_lab.graph import GraphConfig, open_store

        knowledge = spec.resolve().parent.parent / experiment.knowledge_base
        try:
            config = GraphConfig.from_env()
            store = open_store(config)
            try:
                exported = export_runs(
                    analysis_graph(store, config), Path(report.root), knowledge=knowledge
                )
            finally:
                store.close()
        except HivemindError as exc:
            raise _fail(exc) from None
        console.print(f"graph: {exported.assertions} assertions written ({config.store})")


@app.command()
def report(
    run_dir: Annotated[
        Path, typer.Argument(help="A run directory, or a sweep folder experiments/runs/NAME.")
    ],
    out: Annotated[
        Path | None, typer.Option(help="Where to write the HTML (default: RUN_DIR/report.html).")
    ] = None,
    pdf: Annotated[
        bool, typer.Option("--pdf", help="Also print it to PDF with headless Chromium.")
    ] = False,
    force: Annotated[
        bool,
        typer.Option(
            "--force", help="Render even when the audit trail fails verification (red banner)."
        ),
    ] = False,
) -> None:
    """Write a self-contained HTML report (works offline) for executives.

    A run whose audit trail fails verification is refused (exit 1, naming the first bad record)
    unless --force is given."""
    from hivemind_lab.errors import AuditIntegrityError
    from hivemind_lab.reports import write_report

    try:
        path = write_report(run_dir, out, pdf=pdf, force=force)
    except AuditIntegrityError as exc:
        err_console.print(
            f"[bold red]audit FAILED[/]: {escape(str(exc))}", highlight=False, soft_wrap=True
        )
        raise typer.Exit(code=1) from None
    except HivemindError as exc:
        raise _fail(exc) from None
    console.print(f"report: {path}" + (f" and {path.with_suffix('.pdf')}" if pdf else ""))


@app.command()
def replay(run_dir: Annotated[Path, typer.Argument(help="A finished run directory.")]) -> None:
    """Re-run a deliberation from its response cache (no network) and compare result.json."""
    from hivemind_lab.experiments import replay as replay_run

    try:
        report = replay_run(run_dir)
    except HivemindError as exc:
        raise _fail(exc) from None
    if report.identical:
        console.print(
            f"[green]identical[/]: {report.compared_bytes} bytes of result.json match "
            f"(wall time, audit head and cache counts excluded); {report.network_calls} network calls"
        )
        return
    err_console.print(f"[bold red]DIFFERENT[/]: first difference at {report.first_difference}")
    raise typer.Exit(code=1)


def main() -> None:
    """Console entry point."""
    try:
        app()
    except KeyboardInterrupt:
        err_console.print("interrupted; continue with --resume RUN_DIR")
        sys.exit(130)
