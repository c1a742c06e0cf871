"""Experiment commands of ``hivemind-lab``: sweeps, reports and replay. Registered on the CLI
in `hivemind_lab.cli.app`; nothing heavy is imported until a command runs."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
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

from hivemind_lab.cli.common import (
    EndpointConcurrency,
    InputPrice,
    OutputPrice,
    PlanFlag,
    RateLimit,
    RequestTimeout,
    Retries,
    console,
    endpoint_settings,
    err_console,
    on_ctrl_c,
    prices,
)
from hivemind_lab.cli.common import erase as _erase
from hivemind_lab.cli.common import fail as _fail
from hivemind_lab.errors import HivemindError

if TYPE_CHECKING:
    import polars as pl

    from hivemind_lab.experiments.spec import ExperimentSpec


def _missing_extra(*, ray: bool, optuna: bool) -> HivemindError | None:
    """Ray and Optuna are optional (the ``sweeps`` extra): say how to install them."""
    import importlib.util

    for needed, module in ((ray, "ray"), (optuna, "optuna")):
        if needed and importlib.util.find_spec(module) is None:
            return HivemindError(
                f"{module}: not installed (allowed: pip install -e '.[sweeps]', part of '.[dev]')"
            )
    return None


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
    timeout_s: RequestTimeout = None,
    max_retries: Retries = None,
    max_concurrency: EndpointConcurrency = None,
    rate_limit_rpm: RateLimit = None,
    input_usd_per_mtok: InputPrice = None,
    output_usd_per_mtok: OutputPrice = None,
    plan: PlanFlag = False,
) -> None:
    """Run a calibration sweep; finished points are skipped, so an interrupted sweep resumes."""
    from hivemind_lab.experiments.spec import load_spec

    with on_ctrl_c(lambda: "before the sweep started: nothing was written"):
        try:
            experiment = load_spec(spec)
            settings = endpoint_settings(
                timeout_s=timeout_s,
                max_retries=max_retries,
                max_concurrency=max_concurrency,
                rate_limit_rpm=rate_limit_rpm,
            )
            cost = prices(
                input_usd_per_mtok=input_usd_per_mtok, output_usd_per_mtok=output_usd_per_mtok
            )
        except HivemindError as exc:
            raise _fail(exc, command=sweep) from None
        experiment = _with_sample_knowledge(experiment)
        if workers < 1:
            raise _fail(HivemindError(f"workers: must be >= 1, got {workers}"))
        missing = _missing_extra(ray=ray is not None, optuna=experiment.space.kind == "optuna")
        if missing:
            raise _fail(missing)
        if plan:
            from hivemind_lab.experiments.planning import plan_sweep

            try:
                planned = plan_sweep(experiment, Path.cwd(), prices=cost)
            except HivemindError as exc:
                raise _fail(exc, command=sweep) from None
            for line in planned.lines():
                console.print(escape(line), highlight=False, soft_wrap=True)
            return
        from hivemind_lab.experiments import run as run_sweep  # seconds on a busy machine

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
    interrupted = False
    root = Path("experiments") / "runs" / experiment.name  # where run_sweep puts it (cwd)
    fresh = not root.exists()
    with Progress(*columns, console=err_console) as bar:
        task_id = bar.add_task(f"sweep {experiment.name}", total=None)
        try:
            report = run_sweep(
                experiment,
                workers=workers,
                ray_address=ray,
                total=lambda n: bar.update(task_id, total=n),
                on_done=lambda s: bar.advance(task_id),
                settings=settings,
            )
        except HivemindError as exc:
            failure = _erase(bar, exc)
        except KeyboardInterrupt:
            bar.live.transient = True
            interrupted = True
    if interrupted:
        raise _sweep_interrupted(root, spec, workers=workers, ray=ray, graph=graph)
    if failure is not None:
        if fresh and root.is_dir() and not any(p.is_dir() for p in root.iterdir()):
            import shutil

            shutil.rmtree(root)  # a sweep refused before its first run leaves nothing behind
        raise _fail(failure, command=sweep)
    # Ctrl-C while the summary is read and printed: the sweep itself is done.
    with on_ctrl_c(
        lambda: (
            f"the sweep had finished; its results are in {report.root} (summary: "
            f"hivemind-lab report {report.root})"
        )
    ):
        console.print(
            f"{len(report.runs)} runs ({report.reuse_line()}) in {report.wall_time_s:.1f} s; "
            f"{report.model_calls} model calls, {report.reused_calls} calls reused across points; "
            f"results in {report.root}"
        )
        from hivemind_lab.experiments import load as load_runs
        from hivemind_lab.experiments.compare import compare, compute_table
        from hivemind_lab.reports.sweep import roster_table, strategy_table

        runs = load_runs(report.root)
        _print_calibrations(runs, objective=experiment.space.objective)
        # As the sweep report and the explorer show it: named columns, clipped intervals.
        shown = strategy_table(compare(runs))
        summary = Table(title="strategies: mean (95 % Student-t interval, n runs)")
        for col in shown.columns:
            summary.add_column(col)
        for cells in shown.iter_rows():
            summary.add_row(*cells)
        console.print(summary)
        by_roster = (
            roster_table(compare(runs, by=["roster", "strategy"]))
            if "roster" in runs.columns
            else None
        )
        if by_roster is not None and not by_roster.is_empty():
            table = Table(title="rosters: mean (95 % Student-t interval, n runs)")
            for col in by_roster.columns:
                table.add_column(col)
            for cells in by_roster.iter_rows():
                table.add_row(*cells)
            console.print(table)
        compute = compute_table(runs)
        if not compute.is_empty():
            side = Table(title="compute: baseline / its deliberation (flagged above 10 %)")
            rostered = "roster" in compute.columns
            for col in ("strategy", "problem", "seed", "calls", "tokens", "vote", "compute"):
                side.add_column(col)
            if rostered:
                side.add_column("roster")
            for row in compute.iter_rows(named=True):
                side.add_row(
                    row["strategy"],
                    row["problem"],
                    str(row["seed"]),
                    f"{row['run_calls']} / {row['deliberation_calls']}",
                    f"{row['run_tokens']:,} / {row['deliberation_tokens']:,}",
                    "tie" if row.get("tie") else "",
                    "[red]MISMATCH[/]" if row["mismatch"] else "equal",
                    *([row["roster"]] if rostered else []),
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


def _print_calibrations(runs: pl.DataFrame, *, objective: str) -> None:
    """The calibrations first: the best setting for the spec's objective, then per calibration
    each outcome at each value (mean, clipped 95 % interval, n), as the sweep report says it."""
    from hivemind_lab.reports import calibrations

    best = calibrations.best_setting(runs, objective)
    if best is not None:
        console.print(best.text(), highlight=False, soft_wrap=True)
    for effect in calibrations.effects(runs):
        outcomes = list(effect.rows[0].outcomes)
        table = Table(title=f"{effect.measure.title}: mean (95 % interval, n runs)")
        for col in [
            effect.measure.label.lower(),
            *(calibrations.measure(o).title for o in outcomes),
        ]:
            table.add_column(col)
        for row in effect.rows:
            table.add_row(
                row.label or effect.measure.number(row.value),
                *(row.outcomes[o].text() for o in outcomes),
            )
        console.print(table)


def _with_sample_knowledge(experiment: ExperimentSpec) -> ExperimentSpec:
    """A spec that keeps the default knowledge folders ("data/knowledge") reads the project's
    sample when the folder it is run from has none, as `deliberate` does (a sweep run outside
    the project failed on "'<cwd>/data/practicality' holds no constraint folders")."""
    from hivemind_lab.samples import KNOWLEDGE, PRACTICALITY, sample_path

    found = {
        "knowledge_base": str(sample_path(experiment.knowledge_base, KNOWLEDGE)),
        "practicality_kb": str(sample_path(experiment.practicality_kb, PRACTICALITY)),
    }
    unchanged = found == {
        "knowledge_base": experiment.knowledge_base,
        "practicality_kb": experiment.practicality_kb,
    }
    return experiment if unchanged else experiment.model_copy(update=found)


def _sweep_interrupted(
    root: Path, spec: Path, *, workers: int, ray: str | None, graph: bool
) -> typer.Exit:
    """Ctrl-C on a sweep: what was kept and the exact command that carries on (exit 130)."""
    import shlex

    finished = sum(1 for p in root.glob("*/result.json")) if root.is_dir() else 0
    again = ["hivemind-lab", "sweep", str(spec)]
    again += ["--workers", str(workers)] if workers != 1 else []
    again += ["--ray", ray] if ray else []
    again += ["--graph"] if graph else []
    err_console.print(
        f"interrupted: {root} keeps {finished} finished runs (an unfinished run resumes from "
        f"its audit and cached replies); finished points are skipped when you run:\n  "
        + shlex.join(again),
        highlight=False,
        soft_wrap=True,
    )
    return typer.Exit(code=130)


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

    A run whose audit fails verification is refused (exit 1, naming the bad record) unless --force.
    """
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
        raise _fail(exc, command=report) from None
    console.print(f"report: {path}" + (f" and {path.with_suffix('.pdf')}" if pdf else ""))


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
