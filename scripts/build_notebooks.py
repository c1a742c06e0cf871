"""Write the Jupyter notebooks of notebooks/ from the cell sources below (outputs stripped).

Run after editing: .venv/bin/python scripts/build_notebooks.py
"""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

HERE = Path(__file__).resolve().parents[1] / "notebooks"

SETUP = """from pathlib import Path
import polars as pl
pl.Config.set_fmt_str_lengths(100)  # titles and settings in full: cut at 30 they collide
pl.Config.set_tbl_width_chars(200)
import plotly.io as pio
pio.renderers.default = "plotly_mimetype+notebook"
from hivemind_lab.workbench import project_root
ROOT = project_root()"""

NOTEBOOKS: dict[str, list[tuple[str, str]]] = {
    "01_deliberate.ipynb": [
        (
            "md",
            "# Deliberate\nThe spec's sliding scales: pick a problem, set sufficiency, feasibility and density "
            "and the three calibrations, and press **Run**. The tables and the charts below the controls show "
            "the latest run, in the report's words for every outcome (a vetoed or abstained run says "
            "what came closest and what would pass), and its run folder under `runs/` with the "
            "`report.html` written there.\n\n"
            "**The decision** is shown as read when you pick a problem: its options (one per line), "
            "whether the client takes exactly one, and its binding constraints "
            "(`text | forbids 1, 3 | limits 2`, options numbered from 1; a forbidden option is vetoed "
            "whatever the agents score), with where each came from, or why the rule reader refused. "
            "Edit them and **Run** deliberates on exactly what the boxes hold; the run records the "
            "decision as edited in the notebook.\n\n"
            "**Illustrative only:** this notebook uses the offline stand-in, a deterministic model that "
            "weighs the options by word cues in its evidence and the client's facts. It is not an LLM.",
        ),
        (
            "code",
            SETUP
            + """
from datetime import UTC, datetime
from html import escape
import ipywidgets as w
import plotly.graph_objects as go
from IPython import get_ipython
from IPython.display import HTML, display
from hivemind_lab import Calibrations, Limits, plots
from hivemind_lab.reports import gather, write_report
from hivemind_lab.reports.summary import summarise
from hivemind_lab.errors import InputError
from hivemind_lab.workbench import (EXCLUSIVITY_CHOICES, DecisionRows, conclusions_frame, decision_as_read,
                                    decision_rows, edited_decision, justifications_frame, notes_html, problems,
                                    run_deliberation, table_html)
PROBLEMS = problems(ROOT)""",
        ),
        (
            "code",
            """problem = w.Dropdown(options=sorted((p.title, p.id) for p in PROBLEMS.values()),
                      value="regional-grocer-discounter-price-war", description="problem",
                      layout=w.Layout(width="720px"))
wide = {"layout": w.Layout(width="720px"), "style": {"description_width": "90px"}}
read_from = w.HTML()  # where each option came from, or why the reader refused
options = w.Textarea(description="options", placeholder="one option per line", rows=5, **wide)
exclusive = w.Dropdown(options=list(EXCLUSIVITY_CHOICES.items()), description="exclusivity", **wide)
constraints = w.Textarea(description="constraints", rows=3, **wide,
                         placeholder="one binding constraint per line: text | forbids 1, 3 | limits 2")
as_read = {}  # the picked problem's decision as read: the editor starts from it


def on_problem(_=None):
    as_read["decision"] = decision = decision_as_read(PROBLEMS[problem.value])
    rows = decision_rows(decision)
    options.value, exclusive.value, constraints.value = rows.options_text, rows.exclusive, rows.constraints_text
    read_from.value = notes_html(decision)


problem.observe(on_problem, names="value")
on_problem()
sufficiency = w.IntSlider(2, 1, 6, description="sufficiency")
feasibility = w.IntSlider(55, 1, 100, description="feasibility")
density = w.IntSlider(8000, 2000, 20000, step=500, description="density")
balanced = Calibrations()  # the sliders start at the defaults the command line uses
stubbornness = w.FloatSlider(balanced.stubbornness, min=0, max=1, step=0.05, description="stubbornness")
similarity = w.FloatSlider(balanced.similarity_threshold, min=0, max=1, step=0.05, description="similarity")
severity = w.FloatSlider(balanced.severity, min=0, max=1, step=0.05, description="severity")
button = w.Button(description="Run", button_style="primary")
summary = w.HTML("idle")
tables = w.Output()
charts = w.Output()
display(w.VBox([problem, read_from, options, exclusive, constraints, sufficiency, feasibility, density,
                stubbornness, similarity, severity, button, summary, tables, charts]))""",
        ),
        (
            "code",
            """latest = {}  # the last run: the cells below read it, and Run replaces it


def on_run(_):
    rows = DecisionRows.from_text(options.value, constraints.value, exclusive.value)
    try:  # exactly what the editor holds; a bad row, or no options (a refusal), runs nothing
        decision = edited_decision(rows, read=as_read["decision"], problem=PROBLEMS[problem.value])
    except InputError as exc:
        summary.value = f"<b>Not run</b>: {escape(str(exc))}"
        return
    summary.value = "running…"
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    run_dir, result = run_deliberation(
        PROBLEMS[problem.value], decision=decision, sufficiency=sufficiency.value,
        feasibility=feasibility.value, density=density.value,
        calibrations=Calibrations(stubbornness=stubbornness.value, similarity_threshold=similarity.value,
                                  severity=severity.value),
        limits=Limits(max_rounds=6, max_regenerations=2), root=ROOT,
        run_dir=ROOT / "runs" / f"notebook-{problem.value}-{stamp}")  # kept under the project
    report = write_report(run_dir, force=True)
    said = summarise(gather(run_dir))  # the report's words, for every status
    lines = [f"<b>{escape(said.status_label)}</b>: {escape(said.happened)}"]

    def titled(plan):  # the report's words; the agents' own title only quoted
        return f"“{escape(plan.title)}”" if plan.quoted else escape(plan.title)

    if said.recommendation is not None:
        lines.append(f"Recommendation: <b>{titled(said.recommendation)}</b> — {escape(said.support)}")
    elif said.closest is not None:
        c = said.closest
        lines.append(f"Closest to passing: {titled(c.plan)} (attempt {c.attempt}, mean {c.set_mean})")
    lines += [escape(line) for line in said.change]
    lines.append(f"{result.usage.calls} calls (offline stand-in, not an LLM). Report: <code>{report}</code>")
    latest.update(run_dir=run_dir, result=result, report=report)
    summary.value = "<br>".join(lines)
    if result.conclusions:
        show(tables, HTML(table_html(conclusions_frame(result))),
             HTML(table_html(justifications_frame(result, run_dir))))
    else:
        show(tables, HTML("<p>No conclusions passed: the summary above says what came closest and "
                          "what would pass; the vetoed plans are in the report.</p>"))
    show(charts, plots.feasibility_by_constraint(result), plots.veto_history(result),
         plots.convergence(result))


# An output area's outputs are set, not captured from display() inside `with area:`: headless
# (nbconvert, nbval) nbclient's stand-in front end answers a capture on the channel it is
# waiting on and the cell never ended (jupyter/nbclient#312). A figure goes in as its MIME
# bundle: display() would show it through its own _ipython_display_, outside the area.
def show(area, *shown):
    outputs = []
    for item in shown:
        data, metadata = ((item._repr_mimebundle_(), {}) if isinstance(item, go.Figure)
                          else get_ipython().display_formatter.format(item))
        outputs.append({"output_type": "display_data", "data": data, "metadata": metadata})
    area.outputs = tuple(outputs)


button.on_click(on_run)  # in JupyterLab: Run deliberates on what the controls hold
on_run(None)  # the first run, the same with or without a front end: results when run top to bottom
latest["result"].status""",
        ),
        (
            "code",
            "# The executive report of the latest run, written beside its audit; open it in a browser.\n"
            'latest["report"]',
        ),
    ],
    "02_calibration_sweeps.ipynb": [
        (
            "md",
            "# Calibration sweeps\nA small grid over stubbornness × severity × similarity threshold, with a "
            "voting baseline at equal compute; results read back with polars and plotted with plotly. "
            "Sufficiency 1 and a demanding feasibility (80) make rounds and vetoes vary across the grid; "
            "each heatmap cell pools the runs its subtitle names, with their n.",
        ),
        (
            "code",
            SETUP
            + """
import tempfile
from hivemind_lab import plots
from hivemind_lab.experiments import ExperimentSpec, load, run
from hivemind_lab.experiments.compare import compare""",
        ),
        (
            "parameters",
            """# The sizes of the runs below (tests/test_notebooks.py runs the notebook with smaller ones).
seeds = [0, 1, 2]  # three replicates: a mean of one run has no interval
grid = {"stubbornness": [0.1, 0.5, 0.8], "similarity_threshold": [0.1, 0.7], "severity": [0.3, 0.7]}
curve_values = (0.0, 0.25, 0.5, 0.75, 1.0)
curve_seeds = (0, 1)
densities = (12000, 8000, 5000)  # the cost chart: one run each""",
        ),
        (
            "code",
            """spec = ExperimentSpec.model_validate({
    "name": "notebook-sweep",
    "problems": ["data/problems/regional-grocer-discounter-price-war.toml"],
    "inputs": {"sufficiency": 1, "feasibility": 80, "density": 8000},
    "limits": {"max_rounds": 4, "max_regenerations": 1},
    "space": {"kind": "grid", **grid},
    "seeds": seeds,
    "baselines": ["vote"],
})
root = Path(tempfile.mkdtemp()) / "runs"
report = run(spec, project=ROOT, root=root)
runs = load(root)
runs.select("strategy", "stubbornness", "similarity_threshold", "severity", "status", "total_rounds", "vetoes",
            "mean_feasibility").with_columns(pl.selectors.float().round(2))""",
        ),
        (
            "code",
            """# The calibrations first, as the CLI and the sweep report give them: the best setting for the
# sweep's objective, then per calibration each outcome at each value — mean (95 % Student-t interval,
# clipped to what the outcome can take; n runs), pooled over the other calibrations and the seeds.
from IPython.display import display
from hivemind_lab.reports import calibrations
delib = runs.filter(pl.col("strategy") == "deliberation")
print(calibrations.best_setting(delib, spec.space.objective).text())
for effect in calibrations.effects(delib):
    print(f"\\n{effect.measure.title}")
    for outcome in ("total_rounds", "vetoes"):
        print(" ", effect.change(outcome))
    display(effect.frame())""",
        ),
        (
            "code",
            """limit = spec.limits.max_rounds * (spec.limits.max_regenerations + 1)
plots.heatmap(delib, "total_rounds", title=f"Rounds to halt, all generations (at most {limit})").show()
plots.heatmap(delib.with_columns(pl.col("vetoes").gt(0).cast(pl.Float64).alias("veto_rate")), "veto_rate",
              title="Share of runs vetoed at least once", zrange=(0, 1)).show()
plots.line_by(delib, "similarity_threshold", "initial_conclusions", ylabel="distinct conclusions (round 0)",
              title="Distinct conclusions of the first proposals against the similarity threshold").show()""",
        ),
        (
            "md",
            "## Calibration curves\nEach calibration over its whole range, the others at their defaults (the "
            "stubbornness curve holds a threshold at which plans stay apart), at least one critique and revise "
            "round before the monitor may halt, labelled with the model that made them, with "
            "95 % Student-t intervals (n = 4 runs per point: two problems × two seeds; with n = 2 a t-interval "
            "is 12.7 standard errors wide and says little). A dashed line marks a limit the metric cannot pass. "
            "The full curves (four problems, steps of 0.1, dead-zone check, the stand-in and the local model) are in "
            "`reports/calibration-curves.md` (`python benchmarks/calibration_curves.py`).",
        ),
        (
            "code",
            """from hivemind_lab.experiments.curves import DESIGNS, curve, curve_spec
# Curve problems kept apart from those the stand-in was developed on (see
# benchmarks/calibration_curves.py); the model is named with every figure.
curve_problems = ("data/problems/dental-imaging-low-end-entrant.toml",
                  "data/problems/regional-bank-digital-challenger.toml")
backend = "offline"  # the stand-in; "local" runs the bundled model (slow: a small grid)
for calibration, designs in DESIGNS.items():
    cspec = curve_spec(calibration, problems=curve_problems, seeds=curve_seeds,
                       values=curve_values, backend=backend)
    cruns = load(run(cspec, project=ROOT, root=root.parent / cspec.name).root)
    for design in designs:
        points = curve(cruns, calibration, design.metric, bounds=design.bounds)
        figure = plots.curve_figure(points, calibration, design.metric, cap=design.limit)
        figure.update_layout(title=figure.layout.title.text.replace("<br>", f" — model: {backend}<br>", 1))
        figure.show()""",
        ),
        (
            "code",
            """from hivemind_lab import Calibrations
from hivemind_lab.workbench import problems, run_deliberation
grocer = problems(ROOT)["regional-grocer-discounter-price-war"]
cost = []
for density in densities:
    _, res = run_deliberation(grocer, sufficiency=1, feasibility=1, density=density,
                              calibrations=Calibrations(stubbornness=0.5), root=ROOT)
    cost.append({"agents": res.n_agents, "calls": res.usage.calls, "tokens": res.usage.tokens})
cost = pl.DataFrame(cost)
plots.line_by(cost, "agents", "calls", ylabel="agent calls per run",
              title="Cost against number of agents (grocer problem, one run per density)").show()""",
        ),
        (
            "md",
            "## Deliberation against the baseline\nThe voting baseline ran at the grid's first calibration, so it "
            "is compared with the deliberations at that same problem, seed and calibration only (averaging every "
            "deliberation of the grid against it would mix settings the baseline never saw).",
        ),
        (
            "code",
            """table = compare(runs)
plots.strategy_bars(table, "mean_feasibility").show()
table""",
        ),
    ],
    "03_knowledge_slices.ipynb": [
        (
            "md",
            "# Knowledge slices\nFor academics building slices: corpus statistics, slice sizes against density, "
            "per-slice topics, topical overlap between slices, and what changes when density changes.",
        ),
        (
            "code",
            SETUP
            + """
import plotly.express as px
import plotly.graph_objects as go
from hivemind_lab import load_documents, plan_slices
docs = load_documents(ROOT / "data" / "knowledge")
corpus = pl.DataFrame([{"id": d.id, "school": d.school, "tokens": d.tokens, "year": d.year, "peer_reviewed": d.peer_reviewed} for d in docs])
corpus.group_by("school").agg(pl.len().alias("documents"), pl.col("tokens").sum()).sort("tokens", descending=True)""",
        ),
        (
            "code",
            """px.histogram(corpus, x="tokens", nbins=20, title=f"Document sizes ({corpus.height} documents)",
             labels={"tokens": "tokens per document"}).update_layout(yaxis_title="documents").show()""",
        ),
        (
            "code",
            """import warnings
rows = []
for density in (2000, 3000, 4500, 6000, 8000, 12000, 20000):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = plan_slices(docs, density)
    rows.append({"density": density, "agents": result.n_agents, "objective": result.objective,
                 "first_fit": result.first_fit_objective, "coherence": round(result.coherence, 3), "method": result.method})
by_density = pl.DataFrame(rows)
px.line(by_density, x="density", y="agents", markers=True, title="Number of theory agents against density",
        labels={"density": "density (tokens per slice)", "agents": "theory agents (slices)"}).show()
by_density""",
        ),
        (
            "code",
            """result = plan_slices(docs, 6000)
slices = pl.DataFrame([{"slice": s.index, "tokens": s.tokens, "deviation": s.deviation, "documents": len(s.document_ids),
                        "topics": ", ".join(s.topics)} for s in result.slices])
px.bar(slices, x="slice", y="tokens", title=f"Slice sizes at density 6000 ({slices.height} slices)",
       labels={"tokens": "tokens per slice"}).add_hline(
    y=6000, line_dash="dash", annotation_text="density 6000", annotation_position="top left").update_xaxes(
    type="category").show()
slices""",
        ),
        (
            "code",
            """by_id = {d.id: d for d in docs}
share = pl.DataFrame([{"slice": s.index, "school": by_id[i].school, "tokens": by_id[i].tokens}
                      for s in result.slices for i in s.document_ids])
matrix = share.group_by("slice", "school").agg(pl.col("tokens").sum())
schools = sorted(matrix["school"].unique())
tokens = {(r["slice"], r["school"]): r["tokens"] for r in matrix.iter_rows(named=True)}
order = sorted(matrix["slice"].unique())
# One row per slice (a density heatmap would bin slices in pairs); a school absent is blank, not 0.
go.Figure(go.Heatmap(x=schools, y=[f"slice {i}" for i in order], z=[[tokens.get((i, k)) for k in schools] for i in order],
                     zmin=0, colorscale="Blues", colorbar={"title": "tokens"},
                     hovertemplate="%{y}, %{x}: %{z} tokens<extra></extra>")).update_layout(
    title="Topical overlap: tokens of each school in each slice (blank = absent)",
    xaxis={"title": "school", "type": "category", "tickangle": -35},
    yaxis={"title": "slice", "type": "category", "autorange": "reversed"}, height=420).show()""",
        ),
        (
            "code",
            """shared = ROOT.parent / "shared" / "corpora" / "strategy_corpus" / "documents.jsonl"
if shared.exists():
    from hivemind_lab.knowledge.documents import load_jsonl_documents
    classics = load_jsonl_documents(shared)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        big = plan_slices(classics, 32000)
    print(f"{len(classics)} chapters, {sum(d.tokens for d in classics):,} tokens -> {big.n_agents} slices at 32k; "
          f"objective {big.objective:,} vs first-fit {big.first_fit_objective:,}")
else:
    print("the shared strategy corpus is not present on this machine")""",
        ),
    ],
    "04_graph_analytics.ipynb": [
        (
            "md",
            "# Graph analytics\nA small calibration sweep (three stubbornness settings) and the knowledge base, "
            "exported as entities and relations a researcher can reason over: the problem and its options, the "
            "theory agents (each one a model), the documents they cite and their schools, the constraints and the "
            "verdicts. Relations: `recommends`, `defers`, `rejects`, `judged`, `cites`, `supports`, `contradicts`, "
            "`scored_by`, `vetoed_by`, `concludes`, `in_school`, `draws_on`, `dissents_from` "
            "(see `hivemind_lab.experiments.graph_export`). The same export and read-outs run on the embedded store "
            "and, when the project's Neo4j server is up (`scripts/neo4j start`, as in CI), on Neo4j.",
        ),
        (
            "code",
            SETUP
            + """
import tempfile
import plotly.graph_objects as go
from hivemind_lab import plots
from hivemind_lab.experiments import ExperimentSpec, run
from IPython.display import display
from hivemind_lab.experiments import graph_views as views
from hivemind_lab.experiments.graph_export import DOMAIN, analysis_graph, export_runs
from hivemind_lab.graph import GraphConfig, open_store
from hivemind_lab.graph.analytics import entity_graph, motif_census""",
        ),
        (
            "parameters",
            """# tests/test_notebooks.py sets it False: the embedded store alone, whatever runs here.
on_neo4j = True  # also on the project's Neo4j server when it runs""",
        ),
        (
            "code",
            """tmp = Path(tempfile.mkdtemp())
spec = ExperimentSpec.model_validate({
    "name": "graph-notebook", "problems": ["data/problems/regional-grocer-discounter-price-war.toml"],
    "inputs": {"sufficiency": 2, "feasibility": 40, "density": 6000}, "limits": {"max_rounds": 2, "max_regenerations": 0},
    "space": {"stubbornness": [0.1, 0.5, 0.9], "similarity_threshold": [0.35], "severity": [0.5]}})
run(spec, project=ROOT, root=tmp / "runs")
configs = {"embedded": GraphConfig(db_path=tmp / "graph.lbdb")}
if on_neo4j and (neo4j := views.project_neo4j(ROOT)) is not None:
    configs["neo4j"] = neo4j
graphs, summaries = {}, {}
for name, config in configs.items():
    store = open_store(config)
    store.wipe()
    graphs[name] = analysis_graph(store, config)
    summaries[name] = export_runs(graphs[name], tmp / "runs", knowledge=ROOT / "data" / "knowledge")
graph, summary = graphs["embedded"], summaries["embedded"]
snap = graph.snapshot()
print({name: s.assertions for name, s in summaries.items()}, "assertions written")
pl.DataFrame({"run": list(summary.settings), "settings": list(summary.settings.values())})""",
        ),
        (
            "md",
            "## Which evidence drives the conclusions\nPageRank flows from options to the documents agents cite for "
            "them, and on to their schools: the most-cited, most-connected evidence ranks first.",
        ),
        (
            "code",
            """def ranked(kind, top=8):
    return pl.DataFrame(views.ranking(snap, summary.kinds, kind, top=top), schema=[kind, "pagerank"],
                        orient="row").with_columns(pl.col("pagerank").round(3))
print("PageRank spread: min", round(min(snap.pagerank.values()), 3), "max", round(max(snap.pagerank.values()), 3))
display(ranked("document"), ranked("school", 5), ranked("option", 3))
for name, other in graphs.items():
    same = [d for d, _ in views.ranking(other.snapshot(), summaries[name].kinds, "document", top=5)]
    print(name, "top evidence:", same)""",
        ),
        (
            "md",
            "## Motifs: how agents agree and clash\nThe directed 3-node motifs of the whole graph, and the "
            "agreement/disagreement triads among each run's agents (from their final critiques: `+` a pair that "
            "supports each other, `-` a pair where one contradicts the other).",
        ),
        (
            "code",
            """live = views.live(snap)
display(pl.DataFrame(sorted(motif_census(entity_graph(live)).items(), key=lambda kv: -kv[1]), schema=["motif", "count"], orient="row"))
triads = views.agent_triads(snap)  # every shape listed, a zero too: balance needs all four
pl.DataFrame([(shape, text, triads.get(shape, 0)) for shape, text in views.TRIADS.items()], schema=["signs", "triad", "count"], orient="row")""",
        ),
        (
            "md",
            "## Islands: ideas held by one agent only\nEvidence that exactly one agent gives for an option; as a "
            "graph of agent → document, each component is an island nobody else corroborates.",
        ),
        (
            "code",
            """islands = views.idea_islands(snap, summary.kinds)
print(len(islands), "islands:", [len(i) for i in islands])
pl.DataFrame(views.solitary_ideas(snap, summary.kinds))""",
        ),
        (
            "code",
            """agents = sorted(m for m, kind in summary.kinds.items() if kind == "agent")
plots.divergence_heatmap(
    agents,
    views.stance_divergence(snap, agents),
    runs=summary.settings,
    name="How far agents' decisions diverge (0 = same stance on every option, 1 = none shared)",
    note="share of the options on which two agents' final stances (pursue, later, avoid) differ",
).show()
# The MCP tool's divergence (hivemind_divergence) between the two agents furthest apart:
pairs = [(a, b) for i, a in enumerate(agents) for b in agents[i + 1:]]
far = max(pairs, key=lambda p: views.stance_divergence(snap, p)[0][1]) if pairs else None
if far:
    report = graph.divergence(*far, DOMAIN)
    print(far, "score", round(report.divergence_score, 2), "·", len(report.direct_conflicts), "direct conflicts ·",
          len(report.agreements), "agreements")""",
        ),
        (
            "code",
            """g = entity_graph(live)
layout = g.layout("fr")
xs, ys = zip(*layout.coords)
names = g.vs["name"]
labels = views.labels(snap)
kinds = [summary.kinds.get(labels.get(n, n), "action") for n in names]
edges_x, edges_y = [], []
for e in g.es:
    edges_x += [xs[e.source], xs[e.target], None]
    edges_y += [ys[e.source], ys[e.target], None]
traces = [go.Scatter(x=edges_x, y=edges_y, mode="lines", line={"width": 0.4, "color": "#bbb"}, hoverinfo="none", showlegend=False)]
for kind in sorted(set(kinds)):
    idx = [i for i, k in enumerate(kinds) if k == kind]
    traces.append(go.Scatter(x=[xs[i] for i in idx], y=[ys[i] for i in idx], mode="markers", name=kind,
                             text=[labels.get(names[i], names[i]) for i in idx], hoverinfo="text",
                             marker={"size": [5 + 600 * snap.pagerank.get(names[i], 0) for i in idx]}))
# Layout coordinates mean nothing: no axes.
go.Figure(traces).update_layout(
    title=f"Entity graph: {g.vcount()} entities, {g.ecount()} live assertions (size = PageRank, colour = kind)",
    height=650, xaxis={"visible": False}, yaxis={"visible": False}, plot_bgcolor="white").show()
for other in graphs.values():
    other.store.close()""",
        ),
    ],
}


def _cell(kind: str, src: str) -> nbformat.NotebookNode:
    """A cell; "parameters" is a code cell tagged as papermill tags the cell whose values a run
    may replace (a cell tagged "injected-parameters" after it)."""
    if kind == "md":
        return new_markdown_cell(src)
    cell = new_code_cell(src)
    if kind == "parameters":
        cell.metadata["tags"] = ["parameters"]
    return cell


def main() -> None:
    HERE.mkdir(exist_ok=True)
    for name, cells in NOTEBOOKS.items():
        nb = new_notebook(cells=[_cell(kind, src) for kind, src in cells])
        for index, cell in enumerate(nb.cells):
            cell.id = f"{name.split('_')[0]}-cell-{index}"  # stable ids: rebuilding changes nothing

        nb.metadata["kernelspec"] = {
            "name": "python3",
            "display_name": "Python 3",
            "language": "python",
        }
        nbformat.write(nb, HERE / name)
        print("wrote", HERE / name)


if __name__ == "__main__":
    main()
