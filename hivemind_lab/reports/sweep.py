"""The sweep report: calibrations compared on a grid, and the deliberation against baselines."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl
from pydantic import ValidationError

from hivemind_lab import plots
from hivemind_lab.errors import InputError
from hivemind_lab.reports import calibrations
from hivemind_lab.reports.page import Figure, figure_list, render
from hivemind_lab.runs.sweepdir import SweepDir

if TYPE_CHECKING:
    from hivemind_lab.experiments.spec import Objective


@dataclass(frozen=True)
class Table:
    header: list[str]
    rows: list[list[str]]


@dataclass(frozen=True)
class Section:
    """One section of the sweep page: paragraphs, a table and figures, all plain values."""

    heading: str
    paragraphs: list[str] = field(default_factory=list)
    table: Table | None = None
    figures: list[Figure] = field(default_factory=list)


def render_sweep_html(root: str | Path) -> str:
    """A report on a sweep: the calibrations first (each one's effect on each outcome, the best
    setting for the sweep's objective), then the deliberation against its baselines."""
    from hivemind_lab.experiments import load
    from hivemind_lab.experiments.compare import compare, compute_table

    runs = load(root)
    if runs.is_empty():
        raise InputError("run_dir", f"{str(root)!r} holds no finished runs")
    delib = calibrations.deliberations(runs)
    sections = calibration_sections(delib, objective=sweep_objective(Path(root)))
    table = compare(runs)
    shown = strategy_table(table)
    strategies = Table(shown.columns, [list(row) for row in shown.iter_rows()])
    sections.append(
        Section(
            "Deliberation against baselines at equal compute",
            table=strategies,
            figures=figure_list([plots.strategy_bars(table, "mean_feasibility")]),
        )
    )
    compute = compute_table(runs)
    if not compute.is_empty():
        sections.append(
            Section(
                "Compute: each baseline beside its deliberation",
                paragraphs=[
                    "Calls and tokens of the baseline / of the deliberation it stands beside; a "
                    "difference above 10 % in either is flagged. A tie: the vote's winning "
                    "clusters tied in size (all were kept)."
                ],
                table=Table(
                    ["strategy", "problem", "seed", "calls", "tokens", "vote", "compute"],
                    [
                        [
                            str(r["strategy"]),
                            str(r["problem"]),
                            str(r["seed"]),
                            f"{r['run_calls']} / {r['deliberation_calls']}",
                            f"{r['run_tokens']:,} / {r['deliberation_tokens']:,}",
                            "tie" if r.get("tie") else "",
                            "MISMATCH" if r["mismatch"] else "equal",
                        ]
                        for r in compute.iter_rows(named=True)
                    ],
                ),
            )
        )
    return render(
        "sweep_report.html.j2",
        title=f"Sweep report: {Path(root).name}",
        header_lines=[f"{runs.height} runs", *_last_sweep(Path(root))],
        sections=sections,
        banners=[],
    )


STRATEGY_METRICS = ("mean_feasibility", "vetoes", "run_calls", "run_tokens")
"""What the strategies table shows of each strategy, in this order."""


def strategy_table(table: pl.DataFrame) -> pl.DataFrame:
    """`compare`'s table as a reader reads it: one named column per metric (its label and
    unit), each cell "mean (low–high, n N)" with the interval kept within what the metric can
    take, instead of three raw columns per metric."""
    header = ["Strategy", "Runs"] + [calibrations.measure(m).title for m in STRATEGY_METRICS]
    rows = [
        [str(r["strategy"]), str(r["runs"])]
        + [
            calibrations.interval(m, r[f"{m}_mean"], r[f"{m}_ci95"], r[f"{m}_n"]).text()
            if r[f"{m}_mean"] is not None
            else f"– (n {r[f'{m}_n']})"
            for m in STRATEGY_METRICS
        ]
        for r in table.iter_rows(named=True)
    ]
    return pl.DataFrame(rows, schema=header, orient="row")


ROSTER_METRICS = (
    "initial_diversity",
    "final_diversity",
    "distinct_conclusions",
    "mean_feasibility",
    "vetoes",
    "run_tokens",
)
"""What the rosters table shows of each roster and strategy: the monitor's diversity first."""


def roster_table(table: pl.DataFrame) -> pl.DataFrame:
    """`compare(runs, by=["roster", "strategy"])` as a reader reads it: each roster's
    deliberation beside its vote baseline at equal compute, the monitor's diversity of the
    proposals and at the end first (empty for a sweep without rosters)."""
    if table.is_empty() or "roster" not in table.columns:
        return pl.DataFrame()
    shown = [m for m in ROSTER_METRICS if f"{m}_mean" in table.columns]
    header = ["Roster", "Strategy", "Runs"] + [calibrations.measure(m).title for m in shown]
    rows = [
        [str(r["roster"]), str(r["strategy"]), str(r["runs"])]
        + [
            calibrations.interval(m, r[f"{m}_mean"], r[f"{m}_ci95"], r[f"{m}_n"]).text()
            if r[f"{m}_mean"] is not None
            else f"– (n {r[f'{m}_n']})"
            for m in shown
        ]
        for r in table.iter_rows(named=True)
    ]
    return pl.DataFrame(rows, schema=header, orient="row")


def sweep_objective(root: Path) -> Objective:
    """The objective the sweep's spec states ([space] objective; the default when the folder
    holds no spec this version reads)."""
    from hivemind_lab.experiments.spec import ExperimentSpec, Space

    recorded = SweepDir(root).read_spec()
    if recorded is None:
        return Space().objective
    try:
        return ExperimentSpec.model_validate(recorded.spec).space.objective
    except ValidationError:  # a spec this version no longer reads
        return Space().objective


def calibration_sections(delib: pl.DataFrame, *, objective: str) -> list[Section]:
    """The calibrations' part of a sweep report: the best setting, then per calibration a
    table of each outcome at each value (mean, clipped interval, n) and how it moves, then
    the charts (a heatmap on a grid; points coloured by outcome for a random search)."""
    best = calibrations.best_setting(delib, objective)
    effects = calibrations.effects(delib)
    lead = [best.text()] if best else []
    if not effects:
        lead.append("Every run used the same calibrations: there is no effect to show.")
    sections = [Section("Calibrations", paragraphs=lead)]
    for effect in effects:
        outcomes = list(effect.rows[0].outcomes)
        sections.append(
            Section(
                effect.measure.label,
                paragraphs=[
                    f"{effect.measure.title}. Each cell: mean (95 % Student-t interval, "
                    "clipped to what the outcome can take; n runs), pooled over the other "
                    "calibrations, problems and seeds.",
                    *(effect.change(o) + "." for o in outcomes),
                ],
                table=Table(
                    [effect.measure.label.lower()]
                    + [calibrations.measure(o).title for o in outcomes],
                    [
                        [row.label or effect.measure.number(row.value)]
                        + [row.outcomes[o].text() for o in outcomes]
                        for row in effect.rows
                    ],
                ),
            )
        )
    figs = _calibration_figures(delib)
    if figs:
        sections.append(Section("Charts", figures=figure_list(figs)))
    return sections


def _calibration_figures(delib: pl.DataFrame) -> list[Any]:
    """Heatmaps over the two calibrations the grid varied; one varied, each outcome against it;
    a random search (its scattered points would leave most cells of a grid empty), each run as
    a point at those calibrations."""
    moved = calibrations.swept(delib)
    if delib.is_empty() or not moved:
        return []
    x, y = calibrations.heatmap_axes(delib)
    if len(moved) == 1:
        figs = [
            plots.line_by(delib, x, "total_rounds", title="Rounds to halt"),
            plots.line_by(delib, x, "vetoes", title="Vetoes per run"),
        ]
    elif plots.is_grid(delib, x, y):
        figs = [
            plots.heatmap(delib, "total_rounds", x=x, y=y, title="Rounds to halt"),
            plots.heatmap(delib, "vetoes", x=x, y=y, title="Vetoes per run"),
        ]
    else:
        figs = [
            plots.points(delib, "total_rounds", x=x, y=y, title="Rounds to halt, run by run"),
            plots.points(delib, "vetoes", x=x, y=y, title="Vetoes, run by run"),
        ]
    if delib["similarity_threshold"].n_unique() > 1:
        figs.append(
            plots.line_by(
                delib,
                "similarity_threshold",
                "initial_conclusions",
                title="Distinct conclusions at round 0 against the similarity threshold",
            )
        )
    return figs


def _last_sweep(root: Path) -> list[str]:
    """What the latest sweep reused, re-ran because stale and ran anew (none for a lone run)."""
    note = SweepDir(root).read_last_sweep()
    return [f"last sweep: {note.summary}"] if note else []
