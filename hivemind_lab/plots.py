"""Plotly figures shared by reports and notebooks (pure: data in, figure out).

Every figure says what it shows and on how many runs or solutions; a mean over several runs
carries its Student-t interval and n, and a figure with nothing to show says why instead of
drawing empty axes (which reads as a broken chart).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import plotly.graph_objects as go
import polars as pl

from hivemind_lab.calibrations import Calibrations
from hivemind_lab.experiments.compare import t_half_width

if TYPE_CHECKING:  # annotations only: figures need no import of the run layer
    from hivemind_lab.runs.results import DeliberationResult

PALETTE = ("#1f4e79", "#c55a11", "#548235", "#7030a0", "#bf9000", "#2e75b6", "#a50021")
SETTINGS = ("problem", *Calibrations.model_fields, "seed")
"""Columns of a sweep's runs that a figure may pool over; titles name those it does."""


def empty_figure(title: str, message: str, *, height: int = 300) -> go.Figure:
    """A figure that says why there is nothing to plot."""
    fig = go.Figure()
    fig.add_annotation(
        text=message, x=0.5, y=0.5, xref="paper", yref="paper", showarrow=False, font={"size": 14}
    )
    fig.update_layout(
        title=title, height=height, xaxis={"visible": False}, yaxis={"visible": False}
    )
    return fig


def _threshold(fig: go.Figure, y: float, name: str) -> None:
    """A dashed threshold across the whole plot, named in the legend (a text label on the plot
    would overlap bars and points; a line through the data points alone vanishes when there is
    one point)."""
    line = {"dash": "dash", "color": PALETTE[1], "width": 2}
    fig.add_hline(y=y, line=line)
    fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines", line=line, name=name))


def _legend_below(fig: go.Figure) -> None:
    fig.update_layout(legend={"orientation": "h", "yanchor": "top", "y": -0.22, "x": 0})


def _integer_axis(title: str, values: Sequence[int]) -> dict[str, Any]:
    """An integer axis with half a step of room either side (one value would centre on a
    range of −1 to 1 otherwise)."""
    low, high = (min(values), max(values)) if values else (0, 1)
    return {
        "title": title,
        "tickmode": "linear",
        "dtick": 1,
        "tick0": 0,
        "range": [low - 0.5, high + 0.5],
    }


def feasibility_by_constraint(result: DeliberationResult) -> go.Figure:
    """Mean score per constraint of the last verdict, with the feasibility threshold."""
    title = "Feasibility per constraint"
    if not result.vetoes:
        return empty_figure(title, "No practicality verdict: no solution set was scored.")
    verdict = result.vetoes[-1]
    names = sorted(verdict.per_constraint)
    values = [verdict.per_constraint[n] for n in names]
    colours = [PALETTE[6] if v <= verdict.feasibility else PALETTE[0] for v in values]
    solutions = len({s.solution_id for s in verdict.scores})
    outcome = "vetoed" if verdict.vetoed else "passed"
    fig = go.Figure(go.Bar(x=names, y=values, marker_color=colours, name="mean score"))
    _threshold(fig, verdict.feasibility, f"feasibility {verdict.feasibility}")
    fig.update_layout(
        title=(
            f"{title}: last set ({outcome}), mean over {_count(solutions, 'plan')}; "
            "red = at or below feasibility"
        ),
        xaxis_title="constraint",
        yaxis_range=[0, 100],
        yaxis_title="score (0-100)",
        height=360,
        margin={"t": 50, "b": 40},
    )
    _legend_below(fig)
    return fig


def veto_history(result: DeliberationResult) -> go.Figure:
    """Mean feasibility of every attempt against the veto threshold (attempt 1 is the first set
    judged, as the report numbers them)."""
    title = "Practicality verdicts by attempt"
    if not result.vetoes:
        return empty_figure(title, "No practicality verdict: no solution set was scored.")
    gens = [v.regeneration + 1 for v in result.vetoes]
    vetoed = sum(v.vetoed for v in result.vetoes)
    fig = go.Figure(
        go.Scatter(
            x=gens,
            y=[v.mean_score for v in result.vetoes],
            mode="lines+markers",
            marker={
                "size": 11,
                "color": [PALETTE[6] if v.vetoed else PALETTE[2] for v in result.vetoes],
            },
            line={"color": PALETTE[0]},
            name="mean score",
        )
    )
    _threshold(
        fig, result.vetoes[0].feasibility, f"veto at or below {result.vetoes[0].feasibility}"
    )
    fig.update_layout(
        title=f"{title}: {_count(len(gens), 'verdict')}, {vetoed} vetoed (red)",
        xaxis=_integer_axis("attempt", gens),
        yaxis_title="mean score (0-100)",
        yaxis_range=[0, 100],
        height=340,
        margin={"t": 50, "b": 40},
    )
    _legend_below(fig)
    return fig


def convergence(result: DeliberationResult) -> go.Figure:
    """Distinct conclusions per round, one line per attempt (numbered from 1, as the report
    numbers them)."""
    title = "Distinct conclusions per round"
    if not result.metrics:
        return empty_figure(title, "No round was recorded.")
    fig = go.Figure()
    gens = sorted({m.regeneration for m in result.metrics})
    for gen in gens:
        rows = [m for m in result.metrics if m.regeneration == gen]
        fig.add_trace(
            go.Scatter(
                x=[m.round for m in rows],
                y=[m.distinct_conclusions for m in rows],
                mode="lines+markers",
                name=f"attempt {gen + 1}",
                line={"color": PALETTE[gen % len(PALETTE)]},
            )
        )
    fig.update_layout(
        title=f"{title} ({result.n_agents} agents; round 0 = first proposals)",
        xaxis=_integer_axis("round", [m.round for m in result.metrics]),
        yaxis={"title": "distinct conclusions", "dtick": 1, "rangemode": "tozero"},
        showlegend=len(gens) > 1,
        height=340,
        margin={"t": 50, "b": 40},
    )
    _legend_below(fig)
    return fig


def _pooled(runs: pl.DataFrame, keys: Sequence[str]) -> str:
    """Which settings a mean pools over: those other than ``keys`` with more than one value."""
    from hivemind_lab.reports.calibrations import measure

    parts = [
        f"{measure(c).label.lower()} ({runs[c].n_unique()} values)"
        for c in SETTINGS
        if c in runs.columns and c not in keys and runs[c].n_unique() > 1
    ]
    return "pooled over " + ", ".join(parts) if parts else ""


def _count(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _n_text(counts: Sequence[int], unit: str) -> str:
    low, high = min(counts), max(counts)
    return f"n = {low} {unit}" if low == high else f"n = {low}–{high} {unit}"


def _interval_note(counts: Sequence[int]) -> str:
    """What the error bars are, and where there are none (a single run has no interval)."""
    if not counts or max(counts) < 2:
        return "one run each: no interval"
    note = "mean ± 95 % Student-t interval"
    return note + " (none at n = 1)" if min(counts) < 2 else note


def _subtitle(*parts: str) -> str:
    return "; ".join(p for p in parts if p)


def heatmap(
    runs: pl.DataFrame,
    value: str,
    *,
    x: str | None = None,
    y: str | None = None,
    title: str | None = None,
    zrange: tuple[float, float] | None = None,
) -> go.Figure:
    """Mean of ``value`` over a calibration grid (e.g. rounds to halt, veto rate), each cell
    with its n; the subtitle names the settings pooled into each cell. The axes ``x`` and ``y``
    are by default the calibrations the sweep varied (`calibrations.heatmap_axes`). ``zrange``
    fixes the colour scale (rates: (0, 1)) so figures compare; otherwise it starts at 0
    (counts)."""
    from hivemind_lab.reports.calibrations import heatmap_axes, measure

    if x is None or y is None:
        x, y = heatmap_axes(runs) if not runs.is_empty() else ("stubbornness", "severity")
    mx, my, mv = measure(x), measure(y), measure(value)
    name = title or f"{mv.label} by {mx.label.lower()} × {my.label.lower()}"
    if runs.is_empty() or value not in runs.columns:
        return empty_figure(name, f"No runs with {value!r} to show.")
    grid = (
        runs.group_by([x, y])
        .agg(pl.col(value).cast(pl.Float64).mean().alias("mean"), pl.len().alias("n"))
        .sort([y, x])
    )
    xs, ys = sorted(grid[x].unique().to_list()), sorted(grid[y].unique().to_list())
    cells = {(r[x], r[y]): (r["mean"], r["n"]) for r in grid.iter_rows(named=True)}
    z = [[cells.get((a, b), (None, 0))[0] for a in xs] for b in ys]
    text = [
        [
            ""
            if (c := cells.get((a, b))) is None or c[0] is None
            else f"{mv.number(c[0])}<br>n={c[1]}"
            for a in xs
        ]
        for b in ys
    ]
    values = [v for row in z for v in row if v is not None]
    low, high = zrange or (min(0.0, *values), max(values) if values else 1.0)
    if high <= low:
        high = low + 1.0
    same = f"every cell {mv.number(values[0])}" if values and len(set(values)) == 1 else ""
    subtitle = _subtitle(
        "mean per cell",
        _n_text(grid["n"].to_list(), "runs per cell"),
        _pooled(runs, (x, y)),
        same,
    )
    # Categorical axes: one cell per grid value, labelled with it (a numeric axis would space
    # and label cells by plotly's own ticks, not the values the grid ran).
    fig = go.Figure(
        go.Heatmap(
            x=[f"{a:g}" for a in xs],
            y=[f"{b:g}" for b in ys],
            z=z,
            text=text,
            texttemplate="%{text}",
            hovertemplate=f"{mx.label} %{{x}}, {my.label} %{{y}}: %{{text}}<extra></extra>",
            zmin=low,
            zmax=high,
            colorscale="Blues",
            colorbar={"title": mv.unit or mv.label},
        )
    )
    fig.update_layout(
        title=f"{name}<br><sup>{subtitle}</sup>",
        xaxis={"title": mx.title, "type": "category"},
        yaxis={"title": my.title, "type": "category"},
        height=380,
    )
    return fig


def is_grid(runs: pl.DataFrame, x: str, y: str, *, filled: float = 0.5) -> bool:
    """Whether the runs fill at least ``filled`` of the cells of an x × y grid: a random
    search's scattered values give one run per row and column, a mostly empty grid."""
    if runs.is_empty() or x not in runs.columns or y not in runs.columns:
        return False
    cells = runs.select(x, y).unique().height
    return cells >= filled * runs[x].n_unique() * runs[y].n_unique()


def points(
    runs: pl.DataFrame,
    value: str,
    *,
    x: str = "stubbornness",
    y: str = "severity",
    title: str | None = None,
) -> go.Figure:
    """Each run as a point at its calibrations, coloured and labelled by ``value``: the chart
    for a random search, whose points fit no grid."""
    from hivemind_lab.reports.calibrations import measure

    mx, my, mv = measure(x), measure(y), measure(value)
    name = title or f"{mv.label} by {mx.label.lower()} and {my.label.lower()}"
    if runs.is_empty() or value not in runs.columns:
        return empty_figure(name, f"No runs with {value!r} to show.")
    values = runs[value].cast(pl.Float64).to_list()
    fig = go.Figure(
        go.Scatter(
            x=runs[x].to_list(),
            y=runs[y].to_list(),
            mode="markers+text",
            text=[mv.number(v) for v in values],
            textposition="top center",
            marker={
                "size": 14,
                "color": values,
                "colorscale": "Blues",
                "cmin": min(0.0, *values),
                "showscale": True,
                "colorbar": {"title": mv.unit or mv.label},
                "line": {"width": 1, "color": "#59636e"},
            },
            hovertemplate=f"{mx.label} %{{x:.2f}}, {my.label} %{{y:.2f}}: %{{text}}<extra></extra>",
        )
    )
    subtitle = _subtitle(_count(runs.height, "run"), _pooled(runs, (x, y)))
    fig.update_layout(
        title=f"{name}<br><sup>{subtitle}</sup>",
        xaxis={"title": mx.title, "range": [-0.05, 1.05], "tickformat": ".1f"},
        yaxis={"title": my.title, "range": [-0.05, 1.05], "tickformat": ".1f"},
        height=380,
    )
    return fig


def _interval_trace(
    xs: Sequence[Any],
    means: Sequence[float | None],
    halves: Sequence[float | None],
    ns: Sequence[int],
    name: str,
    colour: str,
    column: str = "",
) -> go.Scatter:
    """Means with their intervals, each bound clipped to what ``column`` can take (a count
    never below 0, a score never above 100)."""
    from hivemind_lab.reports.calibrations import measure

    m = measure(column)
    pairs = list(zip(means, halves, strict=True))
    up = [None if h is None or v is None else m.clip(v + h) - v for v, h in pairs]
    down = [None if h is None or v is None else v - m.clip(v - h) for v, h in pairs]
    return go.Scatter(
        x=list(xs),
        y=list(means),
        error_y={"type": "data", "array": up, "arrayminus": down, "visible": True},
        customdata=list(ns),
        hovertemplate="%{x}: %{y:."
        + str(m.digits)
        + "f} (n=%{customdata})<extra>"
        + name
        + "</extra>",
        mode="lines+markers",
        name=name,
        line={"color": colour},
    )


def _x_axis(title: str, values: Sequence[Any]) -> dict[str, Any]:
    if values and all(isinstance(v, int) for v in values):
        return _integer_axis(title, values)
    return {"title": title}


def line_by(
    runs: pl.DataFrame,
    x: str,
    y: str,
    *,
    color: str | None = None,
    title: str | None = None,
    ylabel: str | None = None,
) -> go.Figure:
    """Mean of ``y`` against ``x`` with 95 % Student-t intervals (none at n = 1), optionally
    one line per ``color`` value; the subtitle gives n and the settings pooled."""
    from hivemind_lab.reports.calibrations import measure

    name = title or f"{measure(y).label} against {measure(x).label.lower()}"
    if runs.is_empty() or y not in runs.columns:
        return empty_figure(name, f"No runs with {y!r} to show.")
    keys = [x] + ([color] if color else [])
    grid = (
        runs.group_by(keys)
        .agg(
            pl.col(y).cast(pl.Float64).mean().alias("mean"),
            pl.col(y).cast(pl.Float64).std(ddof=1).alias("sd"),
            pl.col(y).count().alias("n"),
        )
        .sort(keys)
    )
    fig = go.Figure()
    groups: Sequence = grid[color].unique().sort().to_list() if color else [None]
    for i, group in enumerate(groups):
        part = grid.filter(pl.col(color) == group) if color else grid
        halves = [t_half_width(sd, n) for sd, n in zip(part["sd"], part["n"], strict=True)]
        fig.add_trace(
            _interval_trace(
                part[x].to_list(),
                part["mean"].to_list(),
                halves,
                part["n"].to_list(),
                f"{measure(color).label.lower()} {group:g}"
                if color and isinstance(group, float)
                else f"{color} {group}"
                if color
                else measure(y).label,
                PALETTE[i % len(PALETTE)],
                y,
            )
        )
    counts = grid["n"].to_list()
    subtitle = _subtitle(
        _interval_note(counts),
        _n_text(counts, "runs per point"),
        _pooled(runs, keys),
    )
    fig.update_layout(
        title=f"{name}<br><sup>{subtitle}</sup>",
        xaxis=_x_axis(measure(x).title, grid[x].to_list()),
        yaxis_title=ylabel or measure(y).title,
        showlegend=bool(color),
        height=360,
    )
    return fig


def curve_figure(
    points: pl.DataFrame,
    calibration: str,
    metric: str,
    *,
    cap: float | None = None,
    title: str | None = None,
) -> go.Figure:
    """A calibration curve (`experiments.curves.curve` output: mean, ci95, n per value) with its
    intervals; ``cap`` draws a limit the metric cannot pass (e.g. max_rounds), so a flat end
    reads as the cap and not as insensitivity."""
    from hivemind_lab.reports.calibrations import measure

    name = title or f"{measure(metric).label} against {measure(calibration).label.lower()}"
    if points.is_empty():
        return empty_figure(name, "No runs at any value of the calibration.")
    counts = points["n"].to_list()
    fig = go.Figure(
        _interval_trace(
            points[calibration].to_list(),
            points["mean"].to_list(),
            points["ci95"].to_list(),
            counts,
            measure(metric).label,
            PALETTE[0],
            metric,
        )
    )
    if cap is not None:
        _threshold(fig, cap, f"limit {cap:g}")
    subtitle = _subtitle(_interval_note(counts), _n_text(counts, "runs per value"))
    fig.update_layout(
        title=f"{name}<br><sup>{subtitle}</sup>",
        xaxis={"title": measure(calibration).title, "range": [-0.05, 1.05]},
        yaxis={"title": measure(metric).title, "rangemode": "tozero"},
        showlegend=cap is not None,
        height=360,
    )
    return fig


def strategy_bars(table: pl.DataFrame, metric: str) -> go.Figure:
    """Deliberation vs. baselines (`compare` output): mean with 95 % Student-t intervals, each
    bar labelled with its n."""
    from hivemind_lab.reports.calibrations import measure

    m = measure(metric)
    name = f"{m.label} by strategy"
    if table.is_empty():
        return empty_figure(name, "No runs to compare.")
    counts = table[f"{metric}_n"].to_list()
    labels = [f"{s} (n={n})" for s, n in zip(table["strategy"], counts, strict=True)]
    means = table[f"{metric}_mean"].to_list()
    fig = go.Figure(
        go.Bar(
            x=labels,
            y=means,
            marker_color=[PALETTE[i % len(PALETTE)] for i in range(table.height)],
            showlegend=False,
        )
    )
    # The intervals ride on invisible points: a bar draws a flat cap for a missing interval,
    # which reads as ± 0. Each bound stays within what the metric can take (a score <= 100).
    pairs = list(zip(means, table[f"{metric}_ci95"].to_list(), strict=True))
    # A bound the range does not cut keeps its width exactly (v + h - v is not always h).
    up = [None if h is None or v is None else _within(h, m.clip(v + h) - v) for v, h in pairs]
    down = [None if h is None or v is None else _within(h, v - m.clip(v - h)) for v, h in pairs]
    fig.add_trace(
        go.Scatter(
            x=labels,
            y=means,
            mode="markers",
            marker={"opacity": 0},
            error_y={"type": "data", "array": up, "arrayminus": down, "color": "#333"},
            customdata=counts,
            hovertemplate="%{x}: %{y:.2f}<extra></extra>",
            showlegend=False,
        )
    )
    subtitle = _interval_note(counts)
    fig.update_layout(
        title=f"{name}<br><sup>{subtitle}</sup>",
        xaxis_title="strategy",
        yaxis_title=m.title,
        height=340,
        margin={"t": 60, "b": 40},
    )
    return fig


def _within(half: float, clipped: float) -> float:
    """An interval's width on one side: ``half`` when the measure's range does not cut it,
    else ``clipped``, the width left to the range's end."""
    return clipped if clipped < half and not math.isclose(clipped, half) else half


def divergence_heatmap(
    agents: Sequence[str],
    matrix: Sequence[Sequence[float]],
    *,
    runs: Mapping[str, str] | None = None,
    name: str = "Divergence between agents (0 = every subject shared, 1 = no subject in common)",
    note: str = "each agent's own stances are claims about itself, so even agents of one mind "
    "score above 0",
) -> go.Figure:
    """Pairwise divergence of agents on a fixed 0-1 scale (comparable across figures), read
    like a table (first agent top left); the diagonal, trivially 0, is left blank so the
    colours show the pairs. The default ``name`` and ``note`` describe the spec's divergence,
    which counts subjects, not claims; pass the stance measure's own for `stance_divergence`."""
    if len(agents) < 2:
        return empty_figure(name, "Fewer than two agents: no pair to compare.")
    z = [[None if i == j else v for j, v in enumerate(row)] for i, row in enumerate(matrix)]
    subtitle = f"{len(agents)} agents" + (f" of {len(runs)} runs" if runs else "")
    legend = "<br>".join(f"{run}: {text}" for run, text in (runs or {}).items())
    fig = go.Figure(
        go.Heatmap(
            x=list(agents),
            y=list(agents),
            z=z,
            zmin=0,
            zmax=1,
            colorscale="Viridis",
            colorbar={"title": "divergence"},
            hovertemplate="%{y} vs %{x}: %{z:.3f}<extra></extra>",
        )
    )
    fig.update_layout(
        title=(f"{name}<br><sup>{subtitle}; diagonal blank; {note}</sup>"),
        xaxis={"tickangle": -45, "type": "category"},
        yaxis={"autorange": "reversed", "type": "category"},
        height=650,
    )
    if legend:
        lines = len(runs or {})
        fig.add_annotation(
            text=legend,
            x=0,
            y=0,
            yshift=-75,
            xref="paper",
            yref="paper",
            showarrow=False,
            align="left",
            xanchor="left",
            yanchor="top",
            font={"size": 11},
        )
        fig.update_layout(margin={"b": 90 + 16 * lines}, height=650 + 16 * lines)
    return fig
