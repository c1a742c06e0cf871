"""The sweep report: calibrations compared on a grid, and the deliberation against baselines."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from hivemind_lab import plots
from hivemind_lab.errors import InputError
from hivemind_lab.reports.page import Figure, figure_list, render
from hivemind_lab.runs.sweepdir import SweepDir


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
    """A report comparing the calibrations and strategies of a sweep."""
    from hivemind_lab.experiments import load
    from hivemind_lab.experiments.compare import compare, compute_table, format_interval

    runs = load(root)
    if runs.is_empty():
        raise InputError("run_dir", f"{str(root)!r} holds no finished runs")
    delib = runs.filter(runs["strategy"] == "deliberation")
    figs = [
        plots.heatmap(delib, "total_rounds", title="Rounds to halt (stubbornness × severity)"),
        plots.heatmap(delib, "vetoes", title="Vetoes (stubbornness × severity)"),
        plots.line_by(
            delib,
            "similarity_threshold",
            "initial_conclusions",
            title="Distinct conclusions against the similarity threshold (round 0)",
        ),
    ]
    table = compare(runs)
    metrics = (("mean_feasibility", 1), ("vetoes", 2), ("run_calls", 0))
    strategies = Table(
        ["strategy", "runs", "feasibility", "vetoes", "calls"],
        [
            [str(r["strategy"]), str(r["runs"])]
            + [
                format_interval(r[f"{m}_mean"], r[f"{m}_ci95"], r[f"{m}_n"], digits=d)
                for m, d in metrics
            ]
            for r in table.iter_rows(named=True)
        ],
    )
    shown = figure_list([*figs, plots.strategy_bars(table, "mean_feasibility")])
    sections = [
        Section("Calibrations", figures=shown[: len(figs)]),
        Section(
            "Deliberation against baselines at equal compute",
            table=strategies,
            figures=shown[len(figs) :],
        ),
    ]
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


def _last_sweep(root: Path) -> list[str]:
    """What the latest sweep reused, re-ran because stale and ran anew (none for a lone run)."""
    note = SweepDir(root).read_last_sweep()
    return [f"last sweep: {note.summary}"] if note else []
