"""Calibration explorer: reactive sliders over a cached sweep (`marimo run notebooks/explorer.py`)."""

import marimo

__generated_with = "0.25.2"
app = marimo.App(width="medium")


@app.cell
def _():
    import marimo as mo
    import polars as pl

    from hivemind_lab import plots
    from hivemind_lab.experiments.compare import compare
    from hivemind_lab.workbench import cached_sweep, project_root

    return cached_sweep, compare, mo, pl, plots, project_root


@app.cell
def _(cached_sweep, project_root):
    # Finished points are read from experiments/runs/; missing ones run offline first (~20 s).
    runs = cached_sweep(project_root())
    return (runs,)


@app.cell
def _(mo, runs):
    delib = runs.filter(runs["strategy"] == "deliberation")
    severity = mo.ui.dropdown(
        options=[str(v) for v in sorted(delib["severity"].unique())],
        value=str(delib["severity"].min()),
        label="severity",
    )
    similarity = mo.ui.dropdown(
        options=[str(v) for v in sorted(delib["similarity_threshold"].unique())],
        value=str(delib["similarity_threshold"].min()),
        label="similarity threshold",
    )
    mo.hstack([severity, similarity])
    return delib, severity, similarity


@app.cell
def _(delib, mo, pl, plots, severity, similarity):
    view = delib.filter(
        (pl.col("severity") == float(severity.value))
        & (pl.col("similarity_threshold") == float(similarity.value))
    )
    mo.vstack(
        [
            mo.md(
                f"**{view.height} runs** at severity {severity.value}, similarity {similarity.value}"
            ),
            plots.line_by(
                view, "stubbornness", "total_rounds", title="Rounds to halt against stubbornness"
            ),
            plots.line_by(
                view,
                "stubbornness",
                "mean_feasibility",
                title="Mean feasibility against stubbornness",
            ),
        ]
    )
    return (view,)


@app.cell
def _(compare, runs):
    compare(runs)
    return


if __name__ == "__main__":
    app.run()
