"""Calibration explorer: reactive sliders over a cached sweep (`marimo run notebooks/explorer.py`).

Move the severity and similarity-threshold sliders (they step through the values the sweep ran);
the charts show rounds to halt and mean feasibility against stubbornness at that point.
Everything is served from this machine: the sweep runs offline and charts embed no remote assets.
"""

import marimo

__generated_with = "0.25.2"
app = marimo.App(width="medium", app_title="Calibration explorer")


@app.cell
def _():
    import marimo as mo
    import polars as pl

    from hivemind_lab import plots
    from hivemind_lab.experiments.compare import compare
    from hivemind_lab.workbench import cached_sweep, project_root

    return cached_sweep, compare, mo, pl, plots, project_root


@app.cell
def _(mo):
    mo.md(
        "# Calibration explorer\n"
        "Rounds to halt and mean feasibility against stubbornness, for the severity and "
        "similarity threshold chosen below, over the `grocer-calibration` sweep. "
        "*Offline stand-in (not an LLM): illustrative figures.*"
    )
    return


@app.cell
def _(cached_sweep, project_root):
    # Finished points are read from experiments/runs/; missing ones run offline first (~20 s).
    runs = cached_sweep(project_root())
    return (runs,)


@app.cell
def _(mo, runs):
    delib = runs.filter(runs["strategy"] == "deliberation")
    severities = sorted(delib["severity"].unique().to_list())
    similarities = sorted(delib["similarity_threshold"].unique().to_list())
    severity = mo.ui.slider(
        steps=severities, value=severities[0], label="severity", show_value=True
    )
    similarity = mo.ui.slider(
        steps=similarities, value=similarities[0], label="similarity threshold", show_value=True
    )
    mo.hstack([severity, similarity], justify="start", gap=2)
    return delib, severity, similarity


@app.cell
def _(delib, mo, pl, plots, severity, similarity):
    from hivemind_lab.reports.page import figures

    view = delib.filter(
        (pl.col("severity") == float(severity.value))
        & (pl.col("similarity_threshold") == float(similarity.value))
    )
    charts = [
        plots.line_by(
            view,
            "stubbornness",
            "total_rounds",
            title="Rounds to halt against stubbornness",
            ylabel="rounds, all generations",
        ),
        plots.line_by(
            view,
            "stubbornness",
            "mean_feasibility",
            title="Mean feasibility against stubbornness",
            ylabel="mean feasibility (0-100)",
        ),
    ]
    # The charts carry their own plotly.js: marimo's plotly view would fetch MathJax from a CDN.
    mo.vstack(
        [
            mo.md(
                f"**{view.height} runs** at severity {severity.value}, "
                f"similarity threshold {similarity.value}"
            ),
            mo.iframe(figures(charts, first=True), height="720px"),
        ]
    )
    return (view,)


@app.cell
def _(compare, runs):
    # Baselines ran at the sweep's first calibration: compare() pairs like with like.
    compare(runs)
    return


if __name__ == "__main__":
    app.run()
