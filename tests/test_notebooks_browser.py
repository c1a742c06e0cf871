"""The notebooks as researchers open them: real JupyterLab and the marimo app in headless Chromium.

Each Jupyter notebook is opened in JupyterLab and run with "Run All Cells"; notebook 01's Run
button is clicked after moving a slider and editing one option, and its charts must change and
its run record the option as edited. The marimo explorer is
served by `marimo run` and must not request anything from another machine.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlparse
from urllib.request import urlopen

import pytest

from tests.support import REPO

ARTIFACTS = REPO / "reports" / "test-artifacts"
NOTEBOOKS = sorted(p.name for p in (REPO / "notebooks").glob("*.ipynb"))
BIN = Path(sys.executable).parent
LOCAL = {"127.0.0.1", "localhost", "[::1]", "::1"}
EDITED = "Open a discount format under a new brand"
"""The option notebook 01's last option line is replaced with before Run."""

pytestmark = [pytest.mark.slow, pytest.mark.browser]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_http(url: str, process: subprocess.Popen, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited with {process.returncode}")
        try:
            with urlopen(url, timeout=5):
                return
        except OSError:
            time.sleep(0.5)
    raise TimeoutError(url)


def _env(home: Path) -> dict[str, str]:
    """A clean environment for the servers (tests never depend on the caller's variables)."""
    return {
        "PATH": f"{BIN}:{os.environ.get('PATH', '/usr/bin:/bin')}",
        "HOME": str(home),
        "JUPYTER_CONFIG_DIR": str(home / ".jupyter"),
        "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
        "JUPYTER_DATA_DIR": str(BIN.parent / "share" / "jupyter"),
        "JUPYTERLAB_SETTINGS_DIR": str(home / ".jupyter" / "lab" / "user-settings"),
        "MARIMO_SKIP_UPDATE_CHECK": "1",
    }


def _stop(process: subprocess.Popen) -> None:
    process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=20)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    """A copy of the notebooks beside the project's data (JupyterLab saves into its copy)."""
    root = tmp_path_factory.mktemp("lab")
    shutil.copytree(REPO / "notebooks", root / "notebooks")
    (root / "data").symlink_to(REPO / "data")
    (root / "experiments").symlink_to(REPO / "experiments")
    return root


@pytest.fixture(scope="module")
def lab(workspace) -> Iterator[tuple[str, str]]:
    """A real JupyterLab server on a free local port; yields its base URL and token."""
    port, token = _free_port(), secrets.token_hex(16)
    # Every cell in the page: JupyterLab 4 otherwise renders only the cells near the viewport,
    # and a cell never drawn keeps its "[ ]:" prompt, so "has every cell run" could not be read.
    tracker = workspace / ".jupyter/lab/user-settings/@jupyterlab/notebook-extension"
    tracker.mkdir(parents=True, exist_ok=True)
    (tracker / "tracker.jupyterlab-settings").write_text('{"windowingMode": "none"}')
    log = (workspace / "lab.log").open("w")
    process = subprocess.Popen(
        [
            str(BIN / "jupyter"),
            "lab",
            "--no-browser",
            f"--ServerApp.port={port}",
            "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.token={token}",
            f"--ServerApp.root_dir={workspace}",
            "--LabApp.news_url=",
            "--LabApp.extension_manager=readonly",  # no PyPI look-ups from the test
            *(["--allow-root"] if os.geteuid() == 0 else []),  # CI containers run as root
        ],
        cwd=workspace,
        env=_env(workspace),
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        _wait_http(f"http://127.0.0.1:{port}/api?token={token}", process)
        yield f"http://127.0.0.1:{port}", token
    finally:
        _stop(process)
        log.close()


def _chromium():
    import playwright.sync_api as playwright

    chromium = shutil.which("chromium")
    assert chromium, "Debian's chromium is installed by `make browser` (part of `make test`)"
    return playwright, chromium


def _launch(p, chromium: str):
    return p.chromium.launch(
        executable_path=chromium,
        args=[
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
        ],
    )


def _run_all(page, timeout_s: float) -> None:
    """Run All Cells from JupyterLab's Run menu and wait until every code cell has run."""
    page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
    page.locator(".lm-Menu-itemLabel", has_text="Run All Cells").first.click()
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        prompts = page.locator(".jp-CodeCell .jp-InputArea-prompt").all_inner_texts()
        if prompts and all(p.strip() not in ("[*]:", "[ ]:", "") for p in prompts):
            return
        time.sleep(1)
    raise TimeoutError(f"cells still running after {timeout_s} s")


def _legend(page) -> list[str]:
    return page.evaluate(  # SVG text has no innerText
        """() => [...document.querySelectorAll('.jp-Notebook .js-plotly-plot .legendtext')]
                .map(e => e.textContent)"""
    )


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_runs_in_jupyterlab(lab, workspace, name):
    playwright, chromium = _chromium()
    base, token = lab
    errors: list[str] = []
    with playwright.sync_playwright() as p:
        browser = _launch(p, chromium)
        page = browser.new_page(viewport={"width": 1400, "height": 2000})
        page.on("pageerror", lambda e: errors.append(str(e)))
        # A workspace of its own, reset: JupyterLab would otherwise reopen earlier notebooks.
        workspace_name = name.split("_")[0]
        page.goto(
            f"{base}/lab/workspaces/nb{workspace_name}/tree/notebooks/{name}?token={token}&reset"
        )
        page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=120_000)
        page.wait_for_function(  # the kernel has started (the status bar names it, idle)
            "() => document.body.innerText.includes('Python 3 (ipykernel) | Idle')",
            timeout=120_000,
        )
        _run_all(page, timeout_s=900)
        failures = page.locator("[data-mime-type='application/vnd.jupyter.error']").count()
        failure_text = page.locator(".jp-OutputArea-output").all_inner_texts() if failures else []
        assert failures == 0, "\n".join(failure_text)[-3000:]
        if name.startswith("01"):
            _click_run_and_see_charts_change(page)
        browser.close()
    assert errors == []


def _click_run_and_see_charts_change(page) -> None:
    page.wait_for_selector(".jp-Notebook .js-plotly-plot .main-svg", timeout=60_000)
    before = _legend(page)
    assert "feasibility 55" in before, before
    slider = page.locator(
        ".widget-slider", has=page.locator(".widget-label", has_text="feasibility")
    )
    readout = slider.locator(".widget-readout").first
    readout.click()
    page.keyboard.press("Control+A")
    page.keyboard.type("20")
    page.keyboard.press("Enter")
    options = page.locator(
        ".widget-textarea", has=page.locator(".widget-label", has_text="options")
    ).locator("textarea")
    lines = options.input_value().splitlines()
    options.fill("\n".join([*lines[:-1], EDITED]))
    page.locator(".jupyter-button", has_text="Run").first.click()
    page.wait_for_function(
        """() => [...document.querySelectorAll('.jp-Notebook .js-plotly-plot .legendtext')]
                .some(e => e.textContent === 'feasibility 20')""",
        timeout=300_000,
    )
    after = _legend(page)
    assert "feasibility 20" in after
    assert "feasibility 55" not in after
    summary = page.locator(".widget-html-content", has_text="Report:").first.inner_text()
    written = re.search(r"Report: (/\S+/runs/notebook-[\w.-]+/report\.html)", summary)
    assert written and Path(written.group(1)).exists(), summary  # under the project, written
    decision = json.loads((Path(written.group(1)).parent / "manifest.json").read_text())["decision"]
    assert [o["label"] for o in decision["options"]] == [*lines[:-1], EDITED]
    assert decision["options_source"] == "notebook" and decision["options"][-1]["source"] == (
        "notebook"
    )
    from hivemind_lab.runs.status import WORDS

    assert any(summary.startswith(f"{said.label}: ") for said in WORDS.values()), summary
    assert "…" not in page.locator(".jp-Notebook table").first.inner_text()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.locator(".jp-Notebook .js-plotly-plot").first.scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / "notebook-01-after-run.png"))


def test_marimo_explorer_has_a_title_and_sliders_and_stays_on_this_machine(workspace):
    playwright, chromium = _chromium()
    port = _free_port()
    log = (workspace / "marimo.log").open("w")
    process = subprocess.Popen(
        [
            str(BIN / "marimo"),
            "run",
            str(workspace / "notebooks" / "explorer.py"),
            "--headless",
            "--no-token",
            "--port",
            str(port),
        ],
        cwd=workspace / "notebooks",
        env=_env(workspace),
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    remote: list[str] = []
    try:
        _wait_http(f"http://127.0.0.1:{port}/", process)
        with playwright.sync_playwright() as p:
            browser = _launch(p, chromium)
            page = browser.new_page(viewport={"width": 1400, "height": 1800})
            page.on(
                "request",
                lambda r: (
                    remote.append(r.url)
                    if urlparse(r.url).scheme in ("http", "https", "ws", "wss")
                    and urlparse(r.url).hostname not in LOCAL
                    else None
                ),
            )
            page.goto(f"http://127.0.0.1:{port}/")
            page.wait_for_selector("h1:has-text('Calibration explorer')", timeout=300_000)
            page.wait_for_selector("[role='slider']", timeout=300_000)
            sliders = page.locator("[role='slider']").count()
            charts = page.frame_locator("iframe").first.locator(".js-plotly-plot .main-svg")
            charts.first.wait_for(timeout=300_000)
            assert page.title() == "Calibration explorer"
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "marimo-explorer.png"), full_page=True)
            browser.close()
    finally:
        _stop(process)
        log.close()
    assert sliders == 2
    assert remote == []
