"""Sweeps take what `deliberate` takes (text problems, the profile, explicit options and
constraints), and their views follow the sweep: heatmaps over the knobs the grid varied,
intervals within the metric's range, a strategies table with named columns."""

from __future__ import annotations

import polars as pl

from hivemind_lab import plots
from hivemind_lab.experiments import ExperimentSpec, load, load_spec, run
from hivemind_lab.reports.sweep import render_sweep_html, strategy_table
from hivemind_lab.runs.rundir import read_manifest
from tests.support import REPO

GROCER = "data/problems/regional-grocer-discounter-price-war.toml"
SMALL = {"max_rounds": 1, "max_regenerations": 0}


def test_a_sweep_over_two_other_knobs_draws_those_two(tmp_path):
    spec = ExperimentSpec.model_validate(
        {
            "name": "two-knobs",
            "backend": "test",
            "problems": [GROCER],
            "inputs": {"sufficiency": 2, "feasibility": 1, "density": 12000},
            "limits": SMALL,
            "space": {"similarity_threshold": [0.3, 0.8], "severity": [0.2, 0.9]},
        }
    )
    root = tmp_path / "runs"
    run(spec, project=REPO, root=root)
    delib = load(root)
    figure = plots.heatmap(delib, "total_rounds")
    assert figure.layout.xaxis.title.text.startswith("Similarity threshold")
    assert figure.layout.yaxis.title.text.startswith("Severity")
    assert [len(row) for row in figure.data[0].z] == [2, 2]  # every cell of the 2 × 2 grid
    page = render_sweep_html(root)
    assert "Stubbornness (" not in page  # no chart or table over the knob the grid held


def test_a_text_problem_with_a_profile_options_and_a_constraint_sweeps(tmp_path):
    question = tmp_path / "move.txt"
    question.write_text(
        "Should I take the job offer in Leeds or stay in my current role in Bristol? My "
        "partner works in Bristol and I care for my mother twice a week.\n",
        encoding="utf-8",
    )
    spec_file = tmp_path / "move.toml"
    spec_file.write_text(
        f"""problems = ["{question}"]
backend = "test"
[inputs]
sufficiency = 2
feasibility = 1
density = 12000
profile = "individual"
options = ["Take the Leeds offer", "Stay in the Bristol role"]
constraints = ["I must be in Bristol twice a week to care for my mother"]
exclusive = true
[limits]
max_rounds = 1
max_regenerations = 0
[space]
stubbornness = [0.2, 0.8]
""",
        encoding="utf-8",
    )
    spec = load_spec(spec_file)  # it had refused the .txt problem as "not valid TOML"
    root = tmp_path / "runs"
    report = run(spec, project=REPO, root=root)
    assert len(report.runs) == 2
    for summary in report.runs:
        manifest = read_manifest(root / summary.run_id)
        assert manifest.request.profile == "individual"
        decision = manifest.request.decision
        assert [o.label for o in decision.options] == list(spec.inputs.options)
        assert decision.exclusive is True
        assert [c.text for c in decision.constraints] == list(spec.inputs.constraints)
    # Inputs a sweep did not set leave its run ids as they were.
    plain = ExperimentSpec.model_validate(
        {
            "name": "plain",
            "problems": [GROCER],
            "inputs": {"sufficiency": 1, "feasibility": 1, "density": 9000},
        }
    )
    assert set(plain.inputs.identity()) == {
        "sufficiency",
        "feasibility",
        "density",
        "critique_mode",
    }


def test_an_interval_never_leaves_the_metrics_range():
    table = pl.DataFrame(
        {
            "strategy": ["deliberation", "vote"],
            "runs": [2, 2],
            **{
                f"{m}_{k}": values
                for m, by_kind in {
                    "mean_feasibility": {"mean": [84.6, 3.0], "ci95": [42.5, 20.0]},
                    "vetoes": {"mean": [0.5, 0.0], "ci95": [6.4, None]},
                    "run_calls": {"mean": [120.0, 60.0], "ci95": [10.0, 5.0]},
                    "run_tokens": {"mean": [9000.0, 4000.0], "ci95": [100.0, 50.0]},
                }.items()
                for k, values in {**by_kind, "n": [2, 2]}.items()
            },
        }
    )
    bars = plots.strategy_bars(table, "mean_feasibility").data[1]
    tops = [m + u for m, u in zip(bars.y, bars.error_y.array, strict=True)]
    bottoms = [m - d for m, d in zip(bars.y, bars.error_y.arrayminus, strict=True)]
    assert max(tops) == 100 and min(bottoms) == 0  # it reached 127 on the 0-100 scale
    shown = strategy_table(table)
    assert shown.columns[:2] == ["Strategy", "Runs"]
    assert shown.columns[2] == "Feasibility score (mean of the final set, 0–100)"
    assert shown.row(0)[2] == "84.6 (42.1–100.0, n 2)"
    assert shown.row(0)[3].startswith("0.50 (0.00–")  # vetoes are never below 0
