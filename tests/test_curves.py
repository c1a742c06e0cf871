"""Calibration curves: Student-t intervals with n − 1 degrees of freedom and their n, none for a
single run, and a flat stretch at the metric's limit told apart from a dead zone."""

from __future__ import annotations

import math

import polars as pl
import pytest
from scipy import stats

from hivemind_lab.experiments.curves import (
    DESIGNS,
    at_limit,
    curve,
    dead_zones,
    direction_holds,
    widest_flat,
)


def _runs(values: dict[float, list[float]], metric: str = "total_rounds") -> pl.DataFrame:
    rows = [
        {"strategy": "deliberation", "problem": "p", "seed": seed, "stubbornness": v, metric: m}
        for v, ms in values.items()
        for seed, m in enumerate(ms)
    ]
    rows.append({"strategy": "vote", "problem": "p", "seed": 0, "stubbornness": 0.0, metric: 99})
    return pl.DataFrame(rows)


def test_curve_points_are_means_with_t_intervals_and_their_n():
    runs = _runs({0.0: [1, 2, 3, 6], 0.5: [4]})
    points = curve(runs, "stubbornness", "total_rounds")
    first, second = points.row(0, named=True), points.row(1, named=True)
    sd = pl.Series([1, 2, 3, 6]).std()
    assert first["mean"] == 3.0 and first["n"] == 4  # the vote run is not a deliberation
    assert first["ci95"] == pytest.approx(stats.t.ppf(0.975, 3) * sd / math.sqrt(4), abs=1e-3)
    assert second["n"] == 1 and second["ci95"] is None


def test_runs_at_the_limit_are_not_a_dead_zone():
    design = next(d for d in DESIGNS["stubbornness"] if d.metric == "total_rounds")
    assert design.limit == 6.0
    runs = _runs({0.0: [2, 3], 0.5: [3, 3], 0.8: [3, 3], 0.9: [6, 6], 1.0: [6, 6]})
    assert at_limit(runs, "stubbornness", "total_rounds", design.limit) == [(0.9, 1.0)]
    assert dead_zones(runs, "stubbornness", "total_rounds", limit=design.limit) == [(0.5, 0.8)]
    assert dead_zones(runs, "stubbornness", "total_rounds") == [(0.5, 0.8), (0.9, 1.0)]


def test_an_unbounded_metric_has_no_limit():
    assert next(d for d in DESIGNS["severity"] if d.metric == "first_feasibility").limit is None


def test_direction_allows_noise_within_the_intervals_only():
    up = pl.DataFrame({"mean": [1.0, 0.9, 3.0], "ci95": [0.2, 0.2, None]})
    assert direction_holds(up, "up")
    assert not direction_holds(up.with_columns(pl.Series("ci95", [0.01, 0.01, None])), "up")


def test_intervals_are_clipped_to_what_the_metric_allows():
    design = next(d for d in DESIGNS["stubbornness"] if d.metric == "mean_revision_magnitude")
    runs = _runs({0.0: [0.0, 0.0, 0.9], 1.0: [0.9, 1.0, 1.0]}, metric=design.metric)
    points = curve(runs, "stubbornness", design.metric, bounds=design.bounds)
    assert points["low"].to_list()[0] == 0.0 and points["high"].to_list()[1] == 1.0
    assert points["ci95"].to_list()[0] > points["mean"].to_list()[0]  # the raw interval is not


def test_adjacent_dead_zones_join_into_one_flat_stretch():
    assert widest_flat([]) == 0
    assert widest_flat([(0.0, 0.1), (0.1, 0.2), (0.5, 0.6)]) == pytest.approx(0.2)
    assert widest_flat([(0.0, 0.1), (0.2, 0.3), (0.3, 0.4), (0.4, 0.5)]) == pytest.approx(0.3)


def test_the_curves_name_every_calibration_and_nothing_else():
    """The curve designs' Literal of calibration names is spelled out for type checkers; it
    must stay the calibrations' own fields (a new or renamed calibration shows here)."""
    from typing import get_args

    from hivemind_lab.calibrations import Calibrations
    from hivemind_lab.experiments.curves import DESIGNS, Calibration

    assert set(get_args(Calibration)) == set(Calibrations.model_fields) == set(DESIGNS)
