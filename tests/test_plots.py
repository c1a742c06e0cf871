"""The data behind the workbench's figures: intervals with their n, what a mean pools over,
readable axes, and a message instead of empty axes (never pixels)."""

from __future__ import annotations

import math

import polars as pl
import pytest
from scipy import stats

from hivemind_lab import DeliberationResult, plots
from hivemind_lab.experiments.compare import compare, like_for_like


def _verdict(regeneration: int, mean: float, *, vetoed: bool) -> dict:
    scores = [
        {"constraint": c, "solution_id": s, "score": int(mean), "reason": "r"}
        for c in ("legal", "financial")
        for s in ("s1", "s2", "s3")
    ]
    return {
        "regeneration": regeneration,
        "scores": scores,
        "mean_score": mean,
        "per_constraint": {"legal": mean, "financial": mean},
        "feasibility": 55,
        "severity": 0.5,
        "vetoed": vetoed,
    }


def _metrics(regeneration: int, rnd: int, distinct: int) -> dict:
    return {
        "regeneration": regeneration,
        "round": rnd,
        "agents": 4,
        "distinct_conclusions": distinct,
        "revision_magnitude": 0.0,
        "diversity": 0.5,
        "adopted_points": 0,
        "refused_repeats": 0,
        "calls": 4,
        "tokens": 100,
    }


def _result(vetoes=(), metrics=()) -> DeliberationResult:
    # Built from its JSON form (as result.json holds it), so the test does not depend on where
    # the stage models live.
    return DeliberationResult.model_validate(
        {
            "status": "converged",
            "problem_id": "p",
            "rounds": 0,
            "total_rounds": 0,
            "regenerations": 0,
            "n_agents": 4,
            "conclusions": [],
            "vetoes": list(vetoes),
            "monitor": [],
            "metrics": list(metrics),
            "usage": {},
            "wall_time_s": 0.0,
        }
    )


ONE_GENERATION = _result([_verdict(0, 80.0, vetoed=False)], [_metrics(0, 0, 2)])


def test_a_single_attempt_still_shows_its_threshold_centred_on_attempt_1():
    """Attempts are numbered from 1 as the report's text numbers them (regeneration 0 is
    attempt 1), and a single one is centred on its own tick."""
    fig = plots.veto_history(ONE_GENERATION)
    lines = [s for s in fig.layout.shapes if s.y0 == s.y1 == 55]
    assert lines and lines[0].xref == "x domain" and (lines[0].x0, lines[0].x1) == (0, 1)
    assert list(fig.layout.xaxis.range) == [0.5, 1.5]
    assert list(fig.data[0].x) == [1] and fig.layout.xaxis.title.text == "attempt"
    assert "1 verdict, 0 vetoed" in fig.layout.title.text


def test_a_single_round_is_not_centred_on_round_minus_one():
    fig = plots.convergence(ONE_GENERATION)
    assert list(fig.layout.xaxis.range) == [-0.5, 0.5]
    assert "4 agents" in fig.layout.title.text


def test_feasibility_bars_name_the_axis_the_solutions_and_span_the_threshold():
    fig = plots.feasibility_by_constraint(ONE_GENERATION)
    assert fig.layout.xaxis.title.text == "constraint"
    assert list(fig.data[0].x) == ["financial", "legal"]  # alphabetical, stable across runs
    assert "passed" in fig.layout.title.text and "3 plans" in fig.layout.title.text
    assert any(s.y0 == 55 and (s.x0, s.x1) == (0, 1) for s in fig.layout.shapes)


@pytest.mark.parametrize(
    "figure", [plots.feasibility_by_constraint, plots.veto_history, plots.convergence]
)
def test_a_run_with_nothing_to_show_says_so(figure):
    fig = figure(_result())
    assert not [t for t in fig.data if t.x is not None and any(v is not None for v in t.x)]
    assert fig.layout.annotations and fig.layout.annotations[0].text.startswith("No ")


GRID = pl.DataFrame(
    {
        "strategy": ["deliberation"] * 8,
        "stubbornness": [0.1, 0.1, 0.1, 0.1, 0.8, 0.8, 0.8, 0.8],
        "severity": [0.3, 0.3, 0.7, 0.7, 0.3, 0.3, 0.7, 0.7],
        "similarity_threshold": [0.25, 0.5] * 4,
        "total_rounds": [1, 3, 2, 2, 4, 4, 0, 2],
    }
)


def test_heatmap_cells_carry_their_n_and_the_title_names_what_was_pooled():
    fig = plots.heatmap(GRID, "total_rounds")
    heat = fig.data[0]
    assert [list(r) for r in heat.z] == [[2.0, 4.0], [2.0, 1.0]]
    assert heat.text[0][0] == "2.0<br>n=2"  # rounds to one decimal, not four
    assert fig.layout.xaxis.title.text.startswith("Stubbornness (")  # a name and a unit
    assert list(heat.x) == ["0.1", "0.8"]
    assert "similarity threshold (2 values)" in fig.layout.title.text  # named, not the field
    assert "_" not in fig.layout.title.text
    assert "n = 2 runs per cell" in fig.layout.title.text
    assert heat.zmin == 0  # counts start at zero, not at the smallest cell


def test_heatmap_of_a_rate_uses_a_fixed_scale_and_says_when_every_cell_is_equal():
    rate = GRID.with_columns(pl.lit(0.0).alias("veto_rate"))
    fig = plots.heatmap(rate, "veto_rate", zrange=(0, 1))
    assert (fig.data[0].zmin, fig.data[0].zmax) == (0, 1)
    assert "every cell 0.0" in fig.layout.title.text


def test_an_estimate_of_equal_runs_shows_no_empty_interval():
    """Runs that all gave one value read as that value over all of them, not '0.00 (0.00–0.00,
    n 4)'; runs that differ keep their interval, and one run has none."""
    from hivemind_lab.reports.calibrations import estimate

    same, spread, one = (
        estimate([0.0] * 4, "vetoes"),
        estimate([0.0, 1.0, 0.0, 2.0], "vetoes"),
        estimate([3.0], "vetoes"),
    )
    assert same.low == same.high == same.mean and "–" not in same.text() and "4" in same.text()
    assert "–" in spread.text() and "n 4" in spread.text()
    assert "–" not in one.text() and "n 1" in one.text()


def test_intervals_are_clipped_to_what_the_metric_can_take():
    """A count's interval stops at 0 and a score's at 100, whatever the t interval says."""
    runs = pl.DataFrame(
        {"severity": [0.5, 0.5, 0.5], "vetoes": [0, 0, 3], "mean_feasibility": [99.0, 100.0, 90.0]}
    )
    for column, low, high in (("vetoes", 0.0, None), ("mean_feasibility", None, 100.0)):
        trace = plots.line_by(runs, "severity", column).data[0]
        mean = trace.y[0]
        if low is not None:
            assert mean - trace.error_y.arrayminus[0] == pytest.approx(low)
        if high is not None:
            assert mean + trace.error_y.array[0] == pytest.approx(high)


def test_a_random_search_is_drawn_as_points_not_a_mostly_empty_grid():
    rng = [0.13, 0.27, 0.41, 0.58, 0.72, 0.9]
    scattered = pl.DataFrame(
        {"stubbornness": rng, "severity": rng[::-1], "total_rounds": [1, 2, 3, 2, 1, 4]}
    )
    assert not plots.is_grid(scattered, "stubbornness", "severity")
    assert plots.is_grid(GRID, "stubbornness", "severity")
    fig = plots.points(scattered, "total_rounds")
    assert len(fig.data[0].x) == 6 and fig.data[0].type == "scatter"


def test_line_intervals_are_student_t_with_n_minus_one_df_and_absent_at_n_1():
    runs = pl.DataFrame({"x": [0.0, 0.0, 0.0, 1.0], "y": [1.0, 2.0, 3.0, 5.0]})
    fig = plots.line_by(runs, "x", "y")
    trace = fig.data[0]
    expected = stats.t.ppf(0.975, 2) * 1.0 / math.sqrt(3)
    assert trace.error_y.array[0] == pytest.approx(expected)
    assert trace.error_y.array[1] is None
    assert list(trace.customdata) == [3, 1]
    assert "none at n = 1" in fig.layout.title.text
    assert "n = 1–3 runs per point" in fig.layout.title.text


def test_line_over_agent_counts_uses_whole_number_ticks():
    cost = pl.DataFrame({"agents": [3, 4, 7], "calls": [28, 41, 72]})
    fig = plots.line_by(cost, "agents", "calls")
    assert fig.layout.xaxis.dtick == 1 and list(fig.layout.xaxis.range) == [2.5, 7.5]
    assert "one run each: no interval" in fig.layout.title.text


def test_baselines_are_compared_only_with_deliberations_at_their_own_settings():
    runs = pl.DataFrame(
        {
            "strategy": ["deliberation", "deliberation", "deliberation", "vote"],
            "problem": ["p"] * 4,
            "seed": [0] * 4,
            "stubbornness": [0.1, 0.5, 0.8, 0.1],
            "similarity_threshold": [0.25] * 4,
            "severity": [0.3] * 4,
        }
    )
    paired = like_for_like(runs)
    assert paired["strategy"].to_list() == ["deliberation", "vote"]
    assert paired["stubbornness"].to_list() == [0.1, 0.1]
    only_delib = runs.filter(pl.col("strategy") == "deliberation")
    assert like_for_like(only_delib).height == 3
    # compare() by strategy pairs them itself (the sweep summary and report set 27 against 1).
    table = compare(runs.with_columns(pl.Series("vetoes", [0, 1, 2, 1])))
    assert table["vetoes_n"].to_list() == [1, 1]


def test_strategy_bars_label_each_bar_with_its_n():
    table = pl.DataFrame(
        {
            "strategy": ["deliberation", "vote"],
            "vetoes_mean": [0.5, 1.0],
            "vetoes_ci95": [0.2, None],
            "vetoes_n": [4, 1],
        }
    )
    fig = plots.strategy_bars(table, "vetoes")
    bars, intervals = fig.data
    assert list(bars.x) == ["deliberation (n=4)", "vote (n=1)"]
    assert bars.error_y.array is None  # a bar would draw a flat cap (± 0) for the missing one
    assert list(intervals.error_y.array) == [0.2, None]
    assert "none at n = 1" in fig.layout.title.text
    # Named by the measure with its unit, never by the column ("mean_feasibility by strategy").
    for text in (fig.layout.title.text, fig.layout.yaxis.title.text):
        assert "_" not in text and "vetoes" not in text
    assert "(" in fig.layout.yaxis.title.text


def test_divergence_heatmap_blanks_the_diagonal_on_a_fixed_scale_read_top_down():
    fig = plots.divergence_heatmap(
        ["a", "b"], [[0.0, 0.8], [0.8, 0.0]], runs={"run1": "stubbornness 0.1"}
    )
    heat = fig.data[0]
    assert [list(r) for r in heat.z] == [[None, 0.8], [0.8, None]]
    assert (heat.zmin, heat.zmax) == (0, 1)
    assert fig.layout.yaxis.autorange == "reversed"
    assert "same claims" not in fig.layout.title.text  # the score counts subjects, not claims
    assert "run1: stubbornness 0.1" in fig.layout.annotations[0].text
    assert plots.divergence_heatmap(["a"], [[0.0]]).layout.annotations[0].text.startswith("Fewer")


def test_curve_figure_draws_its_intervals_and_a_cap():
    points = pl.DataFrame(
        {"stubbornness": [0.0, 1.0], "mean": [2.0, 10.0], "n": [3, 1], "ci95": [0.5, None]}
    )
    fig = plots.curve_figure(points, "stubbornness", "total_rounds", cap=10)
    assert list(fig.data[0].error_y.array) == [0.5, None]
    assert any(s.y0 == 10 for s in fig.layout.shapes)
    assert fig.layout.yaxis.title.text == "Rounds to halt (rounds, every attempt)"
    assert "none at n = 1" in fig.layout.title.text
    assert plots.curve_figure(points.clear(), "stubbornness", "total_rounds").layout.annotations
