"""Calibration explorer: reactive sliders over a cached sweep (`marimo run notebooks/explorer.py`).

Move the severity and similarity-threshold sliders (they step through the values the sweep ran);
the charts show rounds to halt, revision magnitude, distinct conclusions and mean feasibility
against stubbornness at that point, labelled with the model that made them.
Everything is served from this machine: the sweep runs offline and charts embed no remote assets.
"""

import marimo

__generated_with = "0.25.2"
app = marimo.App(width="medium", app_title="Calibration explorer")


@app.cell
def _():
    import marimo as mo

    return (mo,)


@app.cell
def _(mo):
    # The first load imports polars, plotly and the sweep machinery (~10 s on a small machine):
    # say so instead of an hourglass.
    with mo.status.spinner(
        title="Loading the calibration explorer…",
        subtitle="importing the analysis libraries and reading the cached sweep (about 10 s the "
        "first time)",
    ):
        import polars as pl

        from hivemind_lab import plots
        from hivemind_lab.experiments.compare import compare
        from hivemind_lab.experiments.spec import load_spec
        from hivemind_lab.workbench import cached_sweep, project_root
    return cached_sweep, compare, load_spec, pl, plots, project_root


@app.cell
def _(load_spec, mo, project_root):
    spec = load_spec(project_root() / "experiments" / "grocer-calibration.toml")
    made_by = {
        "offline": "the offline stand-in (not an LLM): illustrative figures",
        "local": f"the local model {spec.model_file or '(bundled SmolLM2-135M)'}",
        "openai": f"the model {spec.model or 'of the endpoint'}",
    }[spec.backend]
    mo.md(
        "# Calibration explorer\n"
        "Rounds to halt, revision magnitude, distinct conclusions and mean feasibility against "
        "stubbornness, for the severity and similarity threshold chosen below, over the "
        f"`grocer-calibration` sweep (at least {spec.limits.min_rounds} critique and revise "
        f"round(s) before the monitor may halt). *Model: {made_by}.*"
    )
    return (spec,)


@app.cell
def _(cached_sweep, pl, project_root, spec):
    # Finished points are read from experiments/runs/; missing ones run offline first (~20 s).
    # The folder may also hold runs of an earlier grid: only the spec's own points are shown.
    every = cached_sweep(project_root())
    on_grid = [
        pl.col(name).is_in(list(getattr(spec.space, name))) | (pl.col("strategy") != "deliberation")
        for name in ("stubbornness", "similarity_threshold", "severity")
    ]
    runs = every.filter(*on_grid)
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
            "mean_revision_magnitude",
            title="Revision magnitude against stubbornness",
            ylabel="mean decision movement per revision (0-1)",
        ),
        plots.line_by(
            view,
            "stubbornness",
            "distinct_conclusions",
            title="Distinct conclusions at the end against stubbornness",
            ylabel="distinct conclusions",
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
            mo.iframe(figures(charts, first=True), height="1400px"),
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
