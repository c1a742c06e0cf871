"""Calibration curves: each calibration swept over its whole range, the others held at their
defaults, on several problems and seeds; each point with a Student-t interval and its n.

A curve must show the calibration's documented direction and no dead zone: a stretch of
adjacent values where no run's outcome moves at all. Where every run already sits at the
metric's limit (rounds at max_rounds) nothing can move, so that stretch is reported as the
limit, not as a dead zone.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Literal

import polars as pl

from hivemind_lab.calibrations import CalibrationName as Calibration
from hivemind_lab.experiments.compare import t_half_width
from hivemind_lab.experiments.spec import ExperimentSpec
from hivemind_lab.inputs import Calibrations

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
    min_rounds: int = 1
    """The spec's loop: at least one critique and revise round before the monitor may halt."""
    similarity_threshold: float | None = None
    """The threshold held while another calibration moves (None: the default). Stubbornness
    acts through rounds only while the agents' plans stay apart, so its curve holds a threshold
    at which they do."""

    @property
    def limit(self) -> float | None:
        """The most ``metric`` can reach under these limits, if the limits bound it: a flat
        stretch there is the cap, not a calibration without effect."""
        if self.metric == "total_rounds":
            return float(self.max_rounds * (self.max_regenerations + 1))
        return None

    @property
    def bounds(self) -> tuple[float, float | None]:
        """The range the metric can take: intervals are clipped to it."""
        if self.metric == "mean_revision_magnitude":
            return 0.0, 1.0
        if self.metric == "first_feasibility":
            return 0.0, 100.0
        if self.metric == "vetoes":
            return 0.0, float(self.max_regenerations + 1)
        if self.metric == "initial_conclusions":
            return 1.0, None
        return 0.0, self.limit


DESIGNS: dict[Calibration, tuple[CurveDesign, ...]] = {
    # Higher stubbornness ⇒ smaller revisions, more rounds to halt (sufficiency 1: the loop runs
    # until the agents agree; feasibility 1: no veto mixes in). Threshold 0.5: plans with the
    # same first move are one conclusion, different first moves apart, so agreeing means
    # agreeing on what to do now. At 0.7 (held until 2026-12-01) agents also had to agree on
    # every sequel, and most development problems never met within 6 rounds at any
    # stubbornness above 0.2 (rounds 3.7 … 5.4, flat at the limit), after the similarity
    # counted an unnamed option as no commitment.
    "stubbornness": (
        CurveDesign("stubbornness", "mean_revision_magnitude", "down", 1, 1, 6, 0, 1, 0.5),
        CurveDesign("stubbornness", "total_rounds", "up", 1, 1, 6, 0, 1, 0.5),
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
    backend: str = "offline",
) -> ExperimentSpec:
    """The sweep of one calibration over ``values`` (the others at their defaults, or as its
    design holds them) with one backend (the model the curve is labelled with)."""
    design = DESIGNS[calibration][0]
    defaults = Calibrations()
    held: dict[str, object] = {name: [getattr(defaults, name)] for name in DESIGNS}
    if design.similarity_threshold is not None:
        held["similarity_threshold"] = [design.similarity_threshold]
    space: dict[str, object] = {"kind": "grid", **held, calibration: list(values)}
    name = f"curve-{calibration.replace('_', '-')}" + (f"-{embedder}" if embedder else "")
    return ExperimentSpec.model_validate(
        {
            "name": name + ("" if backend == "offline" else f"-{backend}"),
            "backend": backend,
            "problems": list(problems),
            "inputs": {
                "sufficiency": design.sufficiency,
                "feasibility": design.feasibility,
                "density": density,
            },
            "limits": {
                "max_rounds": design.max_rounds,
                "min_rounds": design.min_rounds,
                "max_regenerations": design.max_regenerations,
            },
            "space": space,
            "seeds": list(seeds),
            **({"embedder": embedder} if embedder else {}),
        }
    )


def curve(
    runs: pl.DataFrame,
    calibration: Calibration,
    metric: str,
    *,
    bounds: tuple[float, float | None] = (0.0, None),
) -> pl.DataFrame:
    """Mean, 95 % Student-t half-width and n of ``metric`` at each value of ``calibration``,
    with the interval's ends (``low``, ``high``) clipped to what the metric allows."""
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
    lowest, highest = bounds
    low = [
        None if h is None else max(lowest, m - h) for m, h in zip(rows["mean"], halves, strict=True)
    ]
    high = [
        None if h is None else (m + h if highest is None else min(highest, m + h))
        for m, h in zip(rows["mean"], halves, strict=True)
    ]
    return rows.with_columns(
        pl.col("mean").round(3),
        pl.Series("ci95", halves, dtype=pl.Float64).round(3),
        pl.Series("low", low, dtype=pl.Float64).round(3),
        pl.Series("high", high, dtype=pl.Float64).round(3),
    ).drop("sd")


def _by_value(
    runs: pl.DataFrame, calibration: Calibration, metric: str
) -> dict[float, dict[tuple[str, int], float]]:
    """Per calibration value, each run's ``metric`` keyed by its problem and seed."""
    frame = runs.filter(pl.col("strategy") == "deliberation")
    return {
        v: dict(zip(zip(g["problem"], g["seed"], strict=True), g[metric].to_list(), strict=True))
        for v in sorted(set(frame[calibration].to_list()))
        for g in [frame.filter(pl.col(calibration) == v)]
    }


def dead_zones(
    runs: pl.DataFrame, calibration: Calibration, metric: str, *, limit: float | None = None
) -> list[tuple[float, float]]:
    """Adjacent values between which no run (same problem and seed) changes ``metric``, except
    where every run is at ``limit`` on both sides (see `at_limit`)."""
    by_value = _by_value(runs, calibration, metric)
    capped = set(at_limit(runs, calibration, metric, limit)) if limit is not None else set()
    return [
        (a, b)
        for a, b in itertools.pairwise(by_value)
        if by_value[a] == by_value[b] and (a, b) not in capped
    ]


def widest_flat(zones: list[tuple[float, float]]) -> float:
    """The widest stretch of adjacent dead zones joined end to end (0 when there is none):
    two dead pairs 0.0-0.1 and 0.1-0.2 are one flat stretch 0.2 wide."""
    widest = 0.0
    start: float | None = None
    end: float | None = None
    for a, b in zones:
        if start is None or a != end:
            start = a
        end = b
        widest = max(widest, b - start)
    return round(widest, 6)


def per_problem(runs: pl.DataFrame, calibration: Calibration, metric: str) -> pl.DataFrame:
    """Mean of ``metric`` per problem (over seeds) at each value of ``calibration``: one row
    per problem, one column per value, so a curve that holds only on average shows."""
    frame = runs.filter(pl.col("strategy") == "deliberation")
    return (
        frame.group_by("problem", calibration)
        .agg(pl.col(metric).cast(pl.Float64).mean().round(3).alias(metric))
        .sort(calibration)
        .pivot(on=calibration, index="problem", values=metric)
        .sort("problem")
    )


def at_limit(
    runs: pl.DataFrame, calibration: Calibration, metric: str, limit: float | None
) -> list[tuple[float, float]]:
    """Adjacent values at both of which every run's ``metric`` is at ``limit``."""
    if limit is None:
        return []
    by_value = _by_value(runs, calibration, metric)
    full = {
        v
        for v, runs_at in by_value.items()
        if runs_at and all(m == limit for m in runs_at.values())
    }
    return [(a, b) for a, b in itertools.pairwise(by_value) if a in full and b in full]


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
