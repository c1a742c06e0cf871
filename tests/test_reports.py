"""Executive reports: content checks on real runs, audit refusal, and rendering in real Chromium."""

from __future__ import annotations

import json
import re
import shutil
from html import escape, unescape
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hivemind_lab import Limits, load_result
from hivemind_lab.cli import app
from hivemind_lab.errors import AuditIntegrityError, InputError
from hivemind_lab.reports import gather, print_pdf, render_html, render_markdown, write_report
from tests.support import REPO, run

ARTIFACTS = REPO / "reports" / "test-artifacts"


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory, grocer) -> Path:
    """A converged run on the offline model."""
    path = tmp_path_factory.mktemp("report") / "run"
    run(path, grocer, feasibility=60, density=6000)
    return path


@pytest.fixture(scope="module")
def vetoed_dir(tmp_path_factory, grocer) -> Path:
    path = tmp_path_factory.mktemp("vetoed") / "run"
    result = run(path, grocer, feasibility=95, density=6000, limits=Limits(max_regenerations=1))
    assert result.status == "vetoed_out"
    return path


def _text(html: str) -> str:
    """The visible text of a page (scripts and tags removed, entities left)."""
    body = re.sub(r"<script.*?</script>", " ", html, flags=re.DOTALL)
    return " ".join(re.sub(r"<[^>]+>", " ", body).split())


def _copy(run_dir: Path, tmp_path: Path) -> Path:
    target = tmp_path / "copy"
    shutil.copytree(run_dir, target)
    for name in ("report.html", "report.md"):
        (target / name).unlink(missing_ok=True)
    return target


def test_header_has_the_problem_title_and_the_full_question(run_dir, grocer):
    html = write_report(run_dir).read_text()
    assert re.search(r"<h1>[^<]+</h1>", html)
    assert f"Question: {' '.join(grocer.question.split())}" in unescape(html)
    assert "How should Northfield respond to the discounter over the next three years?" in html
    manifest = json.loads((run_dir / "manifest.json").read_text())
    title = manifest["request"].get("problem_title") or manifest["request"]["problem_id"]
    assert f"<h1>{title}</h1>" in html


def test_recommendation_comes_first_with_share_and_flagged_constraints(run_dir, tmp_path):
    result = load_result(run_dir)
    top = result.conclusions[0]
    # The client's feasibility just above the weakest constraint: the mean still passes.
    threshold = int(min(top.scores.values())) + 1
    assert threshold < top.mean_score
    copy = _copy(run_dir, tmp_path)
    manifest = json.loads((copy / "manifest.json").read_text())
    manifest["request"]["feasibility"] = threshold
    (copy / "manifest.json").write_text(json.dumps(manifest))
    html = write_report(copy).read_text()
    sections = re.findall(r"<h2>([^<]+)</h2>", html)
    assert sections[0] == "Recommendation"
    first = html.split("<h2>Dissent</h2>")[0]
    assert f"Supported by {len(top.agents)} of {result.n_agents} theory agents" in first
    for line in top.recommendations:
        assert escape(line) in first
    below = [c for c, s in top.scores.items() if s <= threshold]
    assert below
    for constraint in below:
        assert re.search(
            rf'<tr class="below"><td>{constraint}</td>.*?at or below the client', first
        ), constraint
    assert "although the mean" in first


def test_dissent_names_minorities_or_contradictions(run_dir):
    evidence = gather(run_dir)
    html = write_report(run_dir).read_text()
    dissent = html.split("<h2>Dissent</h2>")[1].split("<h2>")[0]
    assert "Strongest contradicting critiques" in dissent
    for x in evidence.contradictions(evidence.result.conclusions[0]):
        assert x.critic in dissent
    for c in evidence.result.conclusions[1:]:
        assert f"{c.rank}." in dissent


def test_citations_are_titles_authors_years_and_nothing_is_cut(run_dir):
    from hivemind_lab.knowledge.documents import load_documents

    text = _text(write_report(run_dir).read_text())
    assert "…" not in text
    assert not re.search(r"kb-\d{3}-[a-z-]+#\d+", text)
    docs = {d.id: d for d in load_documents(REPO / "data" / "knowledge")}
    cited = {
        c.split("#")[0] for c in load_result(run_dir).conclusions[0].justifications[0].citations
    }
    for doc_id in cited:
        assert escape(docs[doc_id].citation()) in text


def test_justifications_refer_to_the_bullets_shown(run_dir):
    evidence = gather(run_dir)
    top = evidence.result.conclusions[0]
    html = write_report(run_dir).read_text()
    why = html.split("<h2>Why: justifications side by side</h2>")[1].split("<h2>")[0]
    assert "supports recommendation" not in why
    mapped = 0
    for j in top.justifications:
        for bullet in evidence.bullet_map(top, j.solution_id).values():
            assert 1 <= bullet <= len(top.recommendations)
            mapped += 1
    assert mapped > 0
    assert "holds bullet(s) 1" in why


def test_offline_stand_in_is_labelled_and_has_no_dollar_cost(run_dir):
    html = write_report(run_dir).read_text()
    banner = html.split("<header>")[0]
    assert "not an LLM" in banner
    assert "Illustrative" in banner
    assert "$0.0000" not in html
    assert "no cost (offline stand-in)" in html
    assert "$0.0000" not in render_markdown(run_dir)


def test_a_model_backend_is_labelled_by_its_model(run_dir, tmp_path):
    copy = _copy(run_dir, tmp_path)
    manifest = json.loads((copy / "manifest.json").read_text())
    manifest.update(backend="openai", model="SmolLM2-135M-Instruct")
    (copy / "manifest.json").write_text(json.dumps(manifest))
    html = write_report(copy).read_text()
    assert "Model: SmolLM2-135M-Instruct (openai backend)" in html
    assert "not an LLM" not in html
    assert "cost not metered" in html


def test_a_vetoed_run_explains_itself(vetoed_dir):
    evidence = gather(vetoed_dir)
    html = write_report(vetoed_dir).read_text()
    text = _text(html)
    assert "No recommendation" in text
    assert "Closest to passing" in text
    gens = evidence.generations()
    assert len(gens) == 2
    for gen in gens:
        assert f"Generation {gen.verdict.regeneration}: vetoed" in text
        for solution in gen.solutions:
            assert escape(solution.title) in text
            for flags in solution.flags.values():
                for flag in flags:
                    assert flag in text
    assert "…" not in text
    markdown = (vetoed_dir / "report.md").read_text()
    assert "### Generation 1: vetoed" in markdown


def _tamper(run_dir: Path, tmp_path: Path) -> tuple[Path, int, int]:
    copy = _copy(run_dir, tmp_path)
    log = copy / "audit.jsonl"
    lines = log.read_text().splitlines(keepends=True)
    bad = len(lines) // 3
    record = json.loads(lines[bad])
    record["actor"] = "someone-else"
    lines[bad] = json.dumps(record) + "\n"
    log.write_text("".join(lines))
    return copy, bad, len(lines)


def test_a_failing_audit_is_refused_naming_the_first_bad_record(run_dir, tmp_path):
    copy, bad, total = _tamper(run_dir, tmp_path)
    with pytest.raises(AuditIntegrityError) as info:
        write_report(copy)
    assert info.value.index == bad
    assert not (copy / "report.html").exists()
    result = CliRunner().invoke(app, ["report", str(copy)])
    assert result.exit_code == 1
    assert f"record {bad}" in result.stderr
    assert not (copy / "report.html").exists()
    forced = CliRunner().invoke(app, ["report", str(copy), "--force"])
    assert forced.exit_code == 0, forced.stderr
    html = (copy / "report.html").read_text()
    body = html.split("<body>")[1]
    assert body.lstrip().startswith('<div class="banner danger"')
    assert f"FAILED at record {bad} of {total}" in body.split("<header>")[0]
    assert f"FAILED at record {bad} of {total}" in html.split("<h2>Audit</h2>")[1]
    assert "AUDIT VERIFICATION FAILED" in (copy / "report.md").read_text()


def test_charts_use_integer_axes_and_no_label_over_the_data(vetoed_dir):
    from hivemind_lab import plots

    result = load_result(vetoed_dir)
    for fig in (plots.veto_history(result), plots.convergence(result)):
        assert fig.layout.xaxis.dtick == 1
        assert fig.layout.xaxis.tickmode == "linear"
    for fig in (
        plots.feasibility_by_constraint(result),
        plots.veto_history(result),
        plots.convergence(result),
    ):
        assert not fig.layout.annotations  # thresholds are named in the legend instead


def _browser():
    import playwright.sync_api as playwright

    chromium = shutil.which("chromium")
    assert chromium, "Debian's chromium is installed by `make browser` (part of `make test`)"
    return playwright, chromium


def _open(playwright, chromium, page_path: Path, shot: str, *, media: str = "screen") -> dict:
    errors: list[str] = []
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=chromium,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
            ],
        )
        page = browser.new_page(viewport={"width": 1280, "height": 1800})
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("request", lambda r: errors.append(r.url) if r.url.startswith("http") else None)
        page.goto(page_path.resolve().as_uri())
        page.wait_for_selector(".js-plotly-plot .main-svg", timeout=30_000)
        charts = page.locator(".js-plotly-plot").count()
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / shot), full_page=True)
        page.emulate_media(media="print")
        printed = page.evaluate(
            """() => ({
                modebar: [...document.querySelectorAll('.modebar-container')]
                    .map(e => getComputedStyle(e).display),
                banner: document.body.firstElementChild.className,
            })"""
        )
        browser.close()
    return {"errors": errors, "charts": charts, **printed}


@pytest.mark.parametrize("kind", ["run", "vetoed", "sweep"])
def test_report_renders_in_chromium_without_errors_or_requests(run_dir, vetoed_dir, tmp_path, kind):
    playwright, chromium = _browser()
    if kind in ("run", "vetoed"):
        page_path = write_report(run_dir if kind == "run" else vetoed_dir, tmp_path / "r.html")
        charts = 3
    else:
        from hivemind_lab.experiments import ExperimentSpec
        from hivemind_lab.experiments import run as run_sweep

        spec = ExperimentSpec.model_validate(
            {
                "name": "r",
                "problems": ["data/problems/regional-grocer-discounter-price-war.toml"],
                "inputs": {"sufficiency": 2, "feasibility": 55, "density": 8000},
                "baselines": ["vote"],
                "limits": {"max_rounds": 2, "max_regenerations": 0},
                "space": {
                    "stubbornness": [0.1, 0.8],
                    "similarity_threshold": [0.35],
                    "severity": [0.3, 0.7],
                },
            }
        )
        run_sweep(spec, project=REPO, root=tmp_path / "sweep")
        page_path = write_report(tmp_path / "sweep", tmp_path / "sweep.html")
        charts = 4
    seen = _open(playwright, chromium, page_path, f"report-{kind}.png")
    assert seen["errors"] == []
    assert seen["charts"] == charts
    assert (ARTIFACTS / f"report-{kind}.png").stat().st_size > 20_000
    assert set(seen["modebar"]) <= {"none"}  # print styles hide plotly's toolbar
    if kind != "sweep":
        assert seen["banner"] == "banner notice"


def test_pdf_export_expands_the_justifications(run_dir, tmp_path):
    _browser()
    path = write_report(run_dir, tmp_path / "r.html", pdf=True)
    pdf = path.with_suffix(".pdf")
    assert pdf.read_bytes()[:4] == b"%PDF"
    assert "<details open>" not in path.read_text()  # the screen page stays folded
    assert "<details open>" in render_html(run_dir, expand=True)  # the printed one opens them
    again = print_pdf(path, tmp_path / "again.pdf")
    assert again.stat().st_size > 20_000


def test_report_refuses_what_is_not_a_run(tmp_path):
    with pytest.raises(InputError, match="holds no finished runs"):
        write_report(tmp_path)


def test_sweep_heatmaps_use_categorical_axes_with_the_grid_values():
    import polars as pl

    from hivemind_lab import plots

    runs = pl.DataFrame(
        {
            "stubbornness": [0.1, 0.1, 0.5, 0.5, 0.8, 0.8],
            "severity": [0.3, 0.7, 0.3, 0.7, 0.3, 0.7],
            "total_rounds": [1, 2, 3, 4, 5, 6],
        }
    )
    fig = plots.heatmap(runs, "total_rounds")
    assert fig.layout.xaxis.type == "category"
    assert fig.layout.yaxis.type == "category"
    assert list(fig.data[0].x) == ["0.1", "0.5", "0.8"]
    assert list(fig.data[0].y) == ["0.3", "0.7"]
    assert [list(row) for row in fig.data[0].z] == [[1.0, 3.0, 5.0], [2.0, 4.0, 6.0]]


def test_report_names_the_options_and_shows_the_combined_rationale_first(run_dir):
    html = write_report(run_dir).read_text()
    text = _text(html)
    assert "Options (given by the problem): Match the discounter on price" in text
    result = load_result(run_dir)
    rationale = " ".join(result.conclusions[0].combined_rationale.split())
    recommendation = text.split("Recommendation")[1]
    assert rationale[:80] in recommendation
    assert recommendation.index(rationale[:80]) < recommendation.index(
        " ".join(result.conclusions[0].recommendations[0].split())[:60]
    )


def test_justifications_cite_short_and_the_sources_in_full(run_dir):
    from hivemind_lab.knowledge.documents import load_documents

    evidence = gather(run_dir)
    top = evidence.result.conclusions[0]
    docs = {d.id: d for d in load_documents(REPO / "data" / "knowledge")}
    for j in top.justifications:
        text = evidence.justification_text(top, j.solution_id, j.rationale)
        for citation in j.citations:
            doc = docs[citation.split("#")[0]]
            assert doc.citation() not in text  # the full reference is under Sources
    sources = " ".join(evidence.cited(top))
    assert all(docs[c.split("#")[0]].citation() in sources for c in top.justifications[0].citations)


def test_a_report_written_from_elsewhere_still_finds_a_relative_knowledge_base(
    run_dir, tmp_path, monkeypatch
):
    import json

    copy = _copy(run_dir, tmp_path)
    manifest = json.loads((copy / "manifest.json").read_text())
    manifest["knowledge_base"] = "data/knowledge"  # as the CLI records its default
    (copy / "manifest.json").write_text(json.dumps(manifest))
    monkeypatch.chdir(tmp_path)
    evidence = gather(copy)
    assert evidence.sources and all(
        "#" not in s for s in evidence.cited(evidence.result.conclusions[0])
    )


def test_markdown_report_shows_client_markup_as_typed(tmp_path):
    """Client text lands in report.md escaped: '<b>', '*', '_', '#' and '[x](y)' in a question
    or an option are read as typed, not as HTML, emphasis, a heading or a link."""
    from markdown_it import MarkdownIt

    from hivemind_lab.inputs import request_for
    from hivemind_lab.problems import resolve_problem

    question = "Should Acme_Corp raise *prices* or open a <b>second</b> [shop](http://x.org) at #3?"
    problem = resolve_problem(question)
    options = request_for(problem).options
    assert len(options) == 2 and "<b>" in options[1]
    path = tmp_path / "run"
    run(path, problem, feasibility=1, density=6000)
    html = MarkdownIt("commonmark").render(render_markdown(path))
    assert "<b>" not in html and "<a " not in html
    text = unescape(re.sub(r"<[^>]+>", "", html))
    assert question in text
    assert all(option in text for option in options)
