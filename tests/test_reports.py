"""Executive reports, rendered in real headless Chromium."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from hivemind_lab.reports import print_pdf, render_markdown, write_report
from tests.support import REPO, run

ARTIFACTS = REPO / "reports" / "test-artifacts"


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory, grocer) -> Path:
    path = tmp_path_factory.mktemp("report") / "run"
    run(path, grocer, feasibility=30)
    return path


def test_report_states_question_inputs_conclusions_scores_and_audit(run_dir):
    html = write_report(run_dir).read_text()
    for text in (
        "Question: Northfield Markets",
        "sufficiency 2",
        "feasibility 30",
        "stubbornness 0.3",
        "Recommended conclusions",
        "feasibility (severity 0.5)",
        "Dissent and veto history",
        'Audit trail <span class="ok">intact</span>',
        "model calls",
    ):
        assert text in html, text
    assert "<script" in html
    assert not re.search(r"<script[^>]+src=", html)  # plotly is embedded: the page works offline
    markdown = render_markdown(run_dir)
    assert "## Recommended conclusions" in markdown
    assert (run_dir / "report.md").exists()


def _browser():
    import playwright.sync_api as playwright

    chromium = shutil.which("chromium")
    assert chromium, "Debian's chromium is installed by `make browser` (part of `make test`)"
    return playwright, chromium


@pytest.mark.parametrize("kind", ["run", "sweep"])
def test_report_renders_in_chromium_without_console_errors(run_dir, tmp_path, kind):
    playwright, chromium = _browser()
    if kind == "run":
        page_path = write_report(run_dir, tmp_path / "run.html")
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
        page.goto(page_path.resolve().as_uri())
        page.wait_for_selector(".js-plotly-plot .main-svg", timeout=30_000)
        rendered = page.locator(".js-plotly-plot").count()
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        shot = ARTIFACTS / f"report-{kind}.png"
        page.screenshot(path=str(shot), full_page=True)
        browser.close()
    assert errors == []
    assert rendered == charts
    assert shot.stat().st_size > 20_000


def test_pdf_export(run_dir, tmp_path):
    _browser()
    html = write_report(run_dir, tmp_path / "r.html")
    pdf = print_pdf(html, tmp_path / "r.pdf")
    assert pdf.read_bytes()[:4] == b"%PDF"


def test_report_refuses_what_is_not_a_run(tmp_path):
    from hivemind_lab.errors import InputError

    with pytest.raises(InputError, match="holds no finished runs"):
        write_report(tmp_path)
