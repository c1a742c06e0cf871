"""Calibration curves: each calibration swept over its whole range, the others held at their
defaults, on several problems and seeds; each point with a Student-t interval and its n.

A curve must show the calibration's documented direction and no dead zone: a stretch of
adjacent values where no run's outcome moves at all.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Literal

import polars as pl

from hivemind_lab.experiments.compare import t_half_width
from hivemind_lab.experiments.spec import ExperimentSpec
from hivemind_lab.inputs import Calibrations

Calibration = Literal["stubbornness", "similarity_threshold", "severity"]
Direction = Literal["up", "down"]


@dataclass(frozen=True)
class CurveDesign:
    """What one calibration's sweep measures and under which inputs its effect shows."""

    calibration: Calibration
    metric: str
    """A per-run column of `experiments.load`."""
    direction: Direction
    """The documented direction of ``metric`` as the calibration rises."""
    sufficiency: int
    feasibility: int
    max_rounds: int
    max_regenerations: int


DESIGNS: dict[Calibration, tuple[CurveDesign, ...]] = {
    # Higher stubbornness ⇒ smaller revisions, more rounds to halt (sufficiency 1: the loop runs
    # until the agents agree; feasibility 1: no veto mixes in).
    "stubbornness": (
        CurveDesign("stubbornness", "mean_revision_magnitude", "down", 1, 1, 10, 0),
        CurveDesign("stubbornness", "total_rounds", "up", 1, 1, 10, 0),
    ),
    # Higher threshold ⇒ more distinct conclusions (counted on the first proposals).
    "similarity_threshold": (
        CurveDesign("similarity_threshold", "initial_conclusions", "up", 1, 1, 1, 0),
    ),
    # Higher severity ⇒ lower feasibility scores (first verdict), more vetoes.
    "severity": (
        CurveDesign("severity", "first_feasibility", "down", 2, 75, 3, 2),
        CurveDesign("severity", "vetoes", "up", 2, 75, 3, 2),
    ),
}

VALUES = tuple(round(0.1 * i, 1) for i in range(11))
"""0.0, 0.1, … 1.0: the whole range."""


def curve_spec(
    calibration: Calibration,
    *,
    problems: tuple[str, ...],
    seeds: tuple[int, ...],
    values: tuple[float, ...] = VALUES,
    density: int = 6000,
    embedder: str | None = None,
) -> ExperimentSpec:
    """The sweep of one calibration over ``values`` (the others at their defaults)."""
    design = DESIGNS[calibration][0]
    defaults = Calibrations()
    space: dict[str, object] = {
        "kind": "grid",
        **{name: [getattr(defaults, name)] for name in DESIGNS},
        calibration: list(values),
    }
    return ExperimentSpec.model_validate(
        {
            "name": f"curve-{calibration.replace('_', '-')}" + (f"-{embedder}" if embedder else ""),
            "problems": list(problems),
            "inputs": {
                "sufficiency": design.sufficiency,
                "feasibility": design.feasibility,
                "density": density,
            },
            "limits": {
                "max_rounds": design.max_rounds,
                "max_regenerations": design.max_regenerations,
            },
            "space": space,
            "seeds": list(seeds),
            **({"embedder": embedder} if embedder else {}),
        }
    )


def curve(runs: pl.DataFrame, calibration: Calibration, metric: str) -> pl.DataFrame:
    """Mean, 95 % Student-t half-width and n of ``metric`` at each value of ``calibration``."""
    rows = (
        runs.filter(pl.col("strategy") == "deliberation")
        .group_by(calibration)
        .agg(
            pl.col(metric).cast(pl.Float64).mean().alias("mean"),
            pl.col(metric).cast(pl.Float64).std(ddof=1).alias("sd"),
            pl.col(metric).count().alias("n"),
        )
        .sort(calibration)
    )
    halves = [t_half_width(sd, n) for sd, n in zip(rows["sd"], rows["n"], strict=True)]
    return rows.with_columns(
        pl.col("mean").round(3), pl.Series("ci95", halves, dtype=pl.Float64).round(3)
    ).drop("sd")


def dead_zones(
    runs: pl.DataFrame, calibration: Calibration, metric: str
) -> list[tuple[float, float]]:
    """Adjacent values between which no run (same problem and seed) changes ``metric``."""
    frame = runs.filter(pl.col("strategy") == "deliberation").sort(calibration)
    values = sorted(set(frame[calibration].to_list()))
    by_value = {
        v: dict(
            zip(
                zip(g["problem"], g["seed"], strict=True),
                g[metric].to_list(),
                strict=True,
            )
        )
        for v in values
        for g in [frame.filter(pl.col(calibration) == v)]
    }
    return [(a, b) for a, b in itertools.pairwise(values) if by_value[a] == by_value[b]]


def direction_holds(points: pl.DataFrame, direction: Direction) -> bool:
    """The curve's ends go the documented way, and no step goes against it by more than the
    larger of the two intervals (noise)."""
    means = points["mean"].to_list()
    halves = [h or 0.0 for h in points["ci95"].to_list()]
    sign = 1 if direction == "up" else -1
    if sign * (means[-1] - means[0]) <= 0:
        return False
    return all(
        sign * (b - a) >= -max(ha, hb)
        for a, b, ha, hb in zip(means, means[1:], halves, halves[1:], strict=False)
    )
