"""Calibration explorer: reactive sliders over a cached sweep (`marimo run notebooks/explorer.py`).

Move the severity and similarity-threshold sliders (they step through the values the sweep ran);
the charts show rounds to halt, revision magnitude, distinct conclusions and mean feasibility
against stubbornness at that point, labelled with the model that made them.
Below them, a decision editor: pick a problem, edit its options, exclusivity and binding
constraints as read, and Run deliberates once on exactly that, at the chosen severity and
similarity threshold.
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
        from hivemind_lab.reports.sweep import strategy_table
        from hivemind_lab.workbench import cached_sweep, project_root
    return cached_sweep, compare, load_spec, pl, plots, project_root, strategy_table


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
def _(compare, mo, runs, strategy_table):
    # Baselines ran at the sweep's first calibration: compare() pairs like with like. One named
    # column per measure, each "mean (95 % interval within the measure's range, n)".
    strategies = strategy_table(compare(runs))
    mo.vstack([mo.md("## The deliberation against its baselines"), strategies])
    return (strategies,)


@app.cell
def _(mo, project_root):
    # The decision editor: the picked problem's decision as read, to edit before one run.
    from hivemind_lab.workbench import EXCLUSIVITY_CHOICES
    from hivemind_lab.workbench import problems as _problems

    decision_problems = _problems(project_root())
    _titles = {p.title: p.id for p in sorted(decision_problems.values(), key=lambda p: p.title)}
    picked = mo.ui.dropdown(
        options=_titles,
        value=next(t for t, i in _titles.items() if i == "regional-grocer-discounter-price-war"),
        label="problem",
        full_width=True,
    )
    mo.vstack(
        [
            mo.md(
                "## Deliberate on a decision\n"
                "The problem's options (one per line), whether the client takes exactly one, "
                "and its binding constraints (`text | forbids 1, 3 | limits 2`, options "
                "numbered from 1; a forbidden option is vetoed whatever the agents score), as "
                "read. Edit them and **Run** deliberates once on exactly what the boxes hold, "
                "offline, at the severity and similarity threshold chosen above."
            ),
            picked,
        ]
    )
    return EXCLUSIVITY_CHOICES, decision_problems, picked


@app.cell
def _(EXCLUSIVITY_CHOICES, decision_problems, mo, picked):
    from hivemind_lab.workbench import decision_as_read as _as_read
    from hivemind_lab.workbench import decision_rows as _rows
    from hivemind_lab.workbench import notes_html as _notes

    decision_read = _as_read(decision_problems[picked.value])
    read_rows = _rows(decision_read)
    option_box = mo.ui.text_area(
        value=read_rows.options_text, label="options (one per line)", rows=5, full_width=True
    )
    exclusive_box = mo.ui.dropdown(
        options=EXCLUSIVITY_CHOICES, value=read_rows.exclusive_label, label="exclusivity"
    )
    constraint_box = mo.ui.text_area(
        value=read_rows.constraints_text,
        label="binding constraints (one per line: text | forbids 1, 3 | limits 2)",
        rows=3,
        full_width=True,
    )
    run_decision = mo.ui.run_button(label="Run")
    mo.vstack(
        [
            mo.Html(_notes(decision_read)),
            option_box,
            exclusive_box,
            constraint_box,
            run_decision,
        ]
    )
    return constraint_box, decision_read, exclusive_box, option_box, read_rows, run_decision


@app.cell
def _(
    constraint_box,
    decision_problems,
    decision_read,
    exclusive_box,
    mo,
    option_box,
    picked,
    project_root,
    run_decision,
    severity,
    similarity,
):
    import datetime as _dt

    from hivemind_lab import Calibrations as _Calibrations
    from hivemind_lab import Limits as _Limits
    from hivemind_lab.errors import InputError as _InputError
    from hivemind_lab.reports import gather as _gather
    from hivemind_lab.reports import write_report as _write_report
    from hivemind_lab.reports.summary import summarise as _summarise
    from hivemind_lab.workbench import DecisionRows as _Rows
    from hivemind_lab.workbench import conclusions_frame as _conclusions
    from hivemind_lab.workbench import edited_decision as _edited
    from hivemind_lab.workbench import run_deliberation as _run
    from hivemind_lab.workbench import table_html as _table

    mo.stop(not run_decision.value, mo.md("*Edit the decision above, then press **Run**.*"))
    _problem = decision_problems[picked.value]
    _rows = _Rows.from_text(option_box.value, constraint_box.value, exclusive_box.value)
    try:  # exactly what the editor holds; a bad row, or no options (a refusal), runs nothing
        _decision = _edited(_rows, read=decision_read, problem=_problem)
    except _InputError as _exc:
        mo.stop(True, mo.callout(mo.plain_text(f"Not run: {_exc}"), kind="danger"))
    _stamp = _dt.datetime.now(_dt.UTC).strftime("%Y%m%dT%H%M%S%fZ")
    decision_run, decision_result = _run(
        _problem,
        decision=_decision,
        sufficiency=_problem.suggested.sufficiency,
        feasibility=_problem.suggested.feasibility,
        density=_problem.suggested.density,
        calibrations=_Calibrations(
            severity=float(severity.value), similarity_threshold=float(similarity.value)
        ),
        limits=_Limits(max_rounds=6, max_regenerations=2),
        root=project_root(),
        run_dir=project_root() / "runs" / f"explorer-{_problem.id}-{_stamp}",
    )
    _report = _write_report(decision_run, force=True)
    _said = _summarise(_gather(decision_run))
    _lines = [f"**{_said.status_label}** ({decision_result.status}): {_said.happened}"]
    if _said.recommendation is not None:
        _lines.append(f"Recommendation: **{_said.recommendation.title}** — {_said.support}")
    _lines += [*_said.change, f"Report: `{_report}`"]
    mo.vstack(
        [
            mo.md("\n\n".join(_lines)),
            mo.Html(_table(_conclusions(decision_result))),
        ]
    )
    return decision_result, decision_run


if __name__ == "__main__":
    app.run()
