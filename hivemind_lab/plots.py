"""Plotly figures shared by reports and notebooks (pure: data in, figure out)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import plotly.graph_objects as go
import polars as pl

from hivemind_lab.results import DeliberationResult

PALETTE = ("#1f4e79", "#c55a11", "#548235", "#7030a0", "#bf9000", "#2e75b6", "#a50021")


def _threshold(fig: go.Figure, x: Sequence[Any], y: float, name: str) -> None:
    """A dashed threshold line named in the legend (a text label on the plot would overlap bars
    and points)."""
    fig.add_trace(
        go.Scatter(
            x=list(x),
            y=[y] * len(x),
            mode="lines",
            line={"dash": "dash", "color": PALETTE[1]},
            name=name,
            hoverinfo="name",
        )
    )


def _legend_below(fig: go.Figure) -> None:
    fig.update_layout(legend={"orientation": "h", "yanchor": "top", "y": -0.22, "x": 0})


def feasibility_by_constraint(result: DeliberationResult) -> go.Figure:
    """Mean score per constraint of the final verdict, with the feasibility threshold."""
    verdict = result.vetoes[-1] if result.vetoes else None
    names = list(verdict.per_constraint) if verdict else []
    values = [verdict.per_constraint[n] for n in names] if verdict else []
    colours = [PALETTE[6] if verdict and v <= verdict.feasibility else PALETTE[0] for v in values]
    fig = go.Figure(go.Bar(x=names, y=values, marker_color=colours, name="mean score"))
    if verdict and names:
        _threshold(fig, names, verdict.feasibility, f"feasibility {verdict.feasibility}")
    fig.update_layout(
        title="Feasibility per constraint (final solution set; red = at or below feasibility)",
        yaxis_range=[0, 100],
        yaxis_title="score (0-100)",
        height=360,
        margin={"t": 50, "b": 40},
    )
    _legend_below(fig)
    return fig


def veto_history(result: DeliberationResult) -> go.Figure:
    """Mean feasibility of every generation against the veto threshold."""
    gens = [v.regeneration for v in result.vetoes]
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
    if result.vetoes:
        _threshold(fig, gens, result.vetoes[0].feasibility, "veto at or below")
    fig.update_layout(
        title="Practicality verdicts by generation (red = vetoed)",
        xaxis={"title": "generation", "tickmode": "linear", "dtick": 1, "tick0": 0},
        yaxis_title="mean score",
        yaxis_range=[0, 100],
        height=340,
        margin={"t": 50, "b": 40},
    )
    _legend_below(fig)
    return fig


def convergence(result: DeliberationResult) -> go.Figure:
    """Distinct conclusions per round, one line per generation."""
    fig = go.Figure()
    for gen in sorted({m.regeneration for m in result.metrics}):
        rows = [m for m in result.metrics if m.regeneration == gen]
        fig.add_trace(
            go.Scatter(
                x=[m.round for m in rows],
                y=[m.distinct_conclusions for m in rows],
                mode="lines+markers",
                name=f"generation {gen}",
                line={"color": PALETTE[gen % len(PALETTE)]},
            )
        )
    fig.update_layout(
        title="Distinct conclusions per round",
        xaxis={"title": "round", "tickmode": "linear", "dtick": 1, "tick0": 0},
        yaxis={"title": "distinct conclusions", "dtick": 1, "rangemode": "tozero"},
        height=340,
        margin={"t": 50, "b": 40},
    )
    _legend_below(fig)
    return fig


def heatmap(
    runs: pl.DataFrame,
    value: str,
    *,
    x: str = "stubbornness",
    y: str = "severity",
    title: str | None = None,
) -> go.Figure:
    """Mean of ``value`` over a calibration grid (e.g. rounds to halt, veto rate)."""
    grid = runs.group_by([x, y]).agg(pl.col(value).cast(pl.Float64).mean()).sort([y, x])
    xs, ys = sorted(grid[x].unique().to_list()), sorted(grid[y].unique().to_list())
    lookup = {(r[x], r[y]): r[value] for r in grid.iter_rows(named=True)}
    z = [[lookup.get((a, b)) for a in xs] for b in ys]
    # Categorical axes: one cell per grid value, labelled with it (a numeric axis would space
    # and label cells by plotly's own ticks, not the values the grid ran).
    fig = go.Figure(
        go.Heatmap(
            x=[str(a) for a in xs],
            y=[str(b) for b in ys],
            z=z,
            colorscale="Blues",
            colorbar={"title": value},
            texttemplate="%{z:.2f}",
        )
    )
    fig.update_layout(
        title=title or f"{value} by {x} × {y}",
        xaxis={"title": x, "type": "category"},
        yaxis={"title": y, "type": "category"},
        height=380,
    )
    return fig


def line_by(
    runs: pl.DataFrame, x: str, y: str, *, color: str | None = None, title: str | None = None
) -> go.Figure:
    """Mean of ``y`` against ``x`` (optionally one line per ``color`` value)."""
    keys = [x] + ([color] if color else [])
    grid = runs.group_by(keys).agg(pl.col(y).cast(pl.Float64).mean()).sort(keys)
    fig = go.Figure()
    groups: Sequence = grid[color].unique().sort().to_list() if color else [None]
    for i, group in enumerate(groups):
        part = grid.filter(pl.col(color) == group) if color else grid
        fig.add_trace(
            go.Scatter(
                x=part[x].to_list(),
                y=part[y].to_list(),
                mode="lines+markers",
                name=str(group) if color else y,
                line={"color": PALETTE[i % len(PALETTE)]},
            )
        )
    fig.update_layout(title=title or f"{y} against {x}", xaxis_title=x, yaxis_title=y, height=340)
    return fig


def strategy_bars(table: pl.DataFrame, metric: str) -> go.Figure:
    """Deliberation vs. baselines: mean with 95 % confidence intervals."""
    fig = go.Figure(
        go.Bar(
            x=table["strategy"].to_list(),
            y=table[f"{metric}_mean"].to_list(),
            error_y={"type": "data", "array": table[f"{metric}_ci95"].to_list()},
            marker_color=[PALETTE[i % len(PALETTE)] for i in range(table.height)],
        )
    )
    fig.update_layout(
        title=f"{metric} by strategy (95 % CI)", height=320, margin={"t": 50, "b": 40}
    )
    return fig
