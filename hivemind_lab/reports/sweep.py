"""The sweep report: calibrations compared on a grid, and the deliberation against baselines."""

from __future__ import annotations

import json
from pathlib import Path

from hivemind_lab import plots
from hivemind_lab.errors import InputError
from hivemind_lab.reports.page import Block, figures, page


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
    rows = "".join(
        f"<tr><td>{r['strategy']}</td><td>{r['runs']}</td>"
        + "".join(
            f"<td>{format_interval(r[f'{m}_mean'], r[f'{m}_ci95'], r[f'{m}_n'], digits=d)}</td>"
            for m, d in (("mean_feasibility", 1), ("vetoes", 2), ("run_calls", 0))
        )
        + "</tr>"
        for r in table.iter_rows(named=True)
    )
    blocks = [
        Block("Calibrations", figures(figs, first=True)),
        Block(
            "Deliberation against baselines at equal compute",
            "<table><tr><th>strategy</th><th>runs</th><th>feasibility</th><th>vetoes</th>"
            f"<th>calls</th></tr>{rows}</table>"
            + figures([plots.strategy_bars(table, "mean_feasibility")], first=False),
        ),
    ]
    compute = compute_table(runs)
    if not compute.is_empty():
        lines = "".join(
            f"<tr><td>{r['strategy']}</td><td>{r['problem']}</td><td>{r['seed']}</td>"
            f"<td>{r['run_calls']} / {r['deliberation_calls']}</td>"
            f"<td>{r['run_tokens']:,} / {r['deliberation_tokens']:,}</td>"
            f"<td>{'tie' if r.get('tie') else ''}</td>"
            f"<td>{'MISMATCH' if r['mismatch'] else 'equal'}</td></tr>"
            for r in compute.iter_rows(named=True)
        )
        blocks.append(
            Block(
                "Compute: each baseline beside its deliberation",
                "<p>Calls and tokens of the baseline / of the deliberation it stands beside; a "
                "difference above 10 % in either is flagged. A tie: the vote's winning clusters "
                "tied in size (all were kept).</p><table><tr><th>strategy</th><th>problem</th>"
                "<th>seed</th><th>calls</th><th>tokens</th><th>vote</th><th>compute</th></tr>"
                f"{lines}</table>",
            )
        )
    return page(
        title=f"Sweep report: {Path(root).name}",
        header_lines=[f"{runs.height} runs", *_last_sweep(Path(root))],
        blocks=blocks,
    )


def _last_sweep(root: Path) -> list[str]:
    """What the latest sweep reused, re-ran because stale and ran anew (none for a lone run)."""
    from hivemind_lab.experiments.sweep import LAST_SWEEP

    try:
        note = json.loads((root / LAST_SWEEP).read_text("utf-8"))
    except (OSError, ValueError):
        return []
    return (
        [f"last sweep: {note['summary']}"] if isinstance(note, dict) and "summary" in note else []
    )
