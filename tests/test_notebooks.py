"""Every notebook runs top to bottom without a browser: each Jupyter notebook under
``pytest --nbval-lax`` and ``jupyter nbconvert --execute`` (on the offline model and the
embedded store, with smaller sweeps; in JupyterLab itself: tests/test_notebooks_browser.py),
and the marimo explorer through its app, whose decision editor starts from the picked problem's
decision as read, runs nothing until Run is pressed, and then runs exactly what it holds."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest

from hivemind_lab.experiments import load_spec
from hivemind_lab.workbench import decision_as_read, decision_rows, problems
from tests.support import REPO, child_env

# Both explorer tests run the explorer, which runs the default sweep into the repository's
# experiments/runs folder, one sweep at a time: on one pytest-xdist worker they take turns
# instead of one being refused "in use by another sweep" (seen when a new prompt version made
# every point stale and the two sweeps ran long enough to overlap). The notebooks run in a
# folder of their own, on either worker.
EXPLORER = pytest.mark.xdist_group("explorer")


NOTEBOOKS = sorted(p.name for p in (REPO / "notebooks").glob("*.ipynb"))
BIN = Path(sys.executable).parent
SMALLER = {
    "02_calibration_sweeps.ipynb": (
        "seeds = [0, 1]\n"
        'grid = {"stubbornness": [0.1, 0.8], "similarity_threshold": [0.1, 0.7], "severity": [0.5]}\n'
        "curve_values = (0.0, 1.0)\n"
        "curve_seeds = (0,)\n"
        "densities = (12000, 8000)"
    ),
    "04_graph_analytics.ipynb": "on_neo4j = False",
}
"""Values put after a notebook's cell tagged "parameters" (papermill's convention): the same
cells on a smaller sweep, and the embedded store only even when the project's Neo4j runs."""


@pytest.fixture(scope="module")
def headless(tmp_path_factory) -> Path:
    """The notebooks beside the project's data (they find it above their folder), each with
    its smaller values, and a pytest configuration of their own for nbval."""
    root = tmp_path_factory.mktemp("headless")
    (root / "notebooks").mkdir()
    for name in NOTEBOOKS:
        nb = nbformat.read(REPO / "notebooks" / name, as_version=4)
        if name in SMALLER:
            at = next(
                i for i, c in enumerate(nb.cells) if "parameters" in c.metadata.get("tags", ())
            )
            injected = nbformat.v4.new_code_cell(SMALLER[name])
            injected.metadata["tags"] = ["injected-parameters"]
            injected.id = "injected-parameters"
            nb.cells.insert(at + 1, injected)
        nbformat.write(nb, root / "notebooks" / name)
    (root / "data").symlink_to(REPO / "data")
    (root / "pytest.ini").write_text("[pytest]\n")
    return root


def _run(command: list[str], root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command,
        cwd=root / "notebooks",
        env=child_env(root / "home", JUPYTER_PLATFORM_DIRS="1"),
        capture_output=True,
        text=True,
        timeout=900,
    )


@pytest.mark.slow  # a kernel per notebook: about 2 min in all on 2 workers
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_runs_under_nbval(headless, name):
    done = _run(
        [
            str(BIN / "pytest"),
            "--nbval-lax",
            "--nbval-current-env",
            "--nbval-cell-timeout=600",
            "-p",
            "no:cacheprovider",
            "-c",
            str(headless / "pytest.ini"),
            "--rootdir",
            str(headless),
            "-q",
            name,
        ],
        headless,
    )
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    assert " passed" in done.stdout and "failed" not in done.stdout, done.stdout[-2000:]


@pytest.mark.slow
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_runs_under_nbconvert(headless, name, tmp_path):
    done = _run(
        [
            str(BIN / "jupyter"),
            "nbconvert",
            "--to",
            "notebook",
            "--execute",
            "--ExecutePreprocessor.timeout=600",
            f"--output-dir={tmp_path}",
            name,
        ],
        headless,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    ran = nbformat.read(tmp_path / name, as_version=4)
    code = [c for c in ran.cells if c.cell_type == "code"]
    assert all(c.execution_count for c in code), "a code cell did not run"
    errors = [o for c in code for o in c.outputs if o.output_type == "error"]
    assert errors == []
    if name.startswith("01"):  # the first run's results, written under the notebook's project
        assert "report.html" in str(code[-1].outputs[0]["data"]["text/plain"])


def _explorer():
    spec = importlib.util.spec_from_file_location("explorer", REPO / "notebooks" / "explorer.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.app


@EXPLORER
def test_marimo_explorer_runs_over_the_cached_sweep():
    _, defs = _explorer().run()
    assert defs["runs"].height >= 27
    assert defs["view"].height >= 1
    # The explorer reads the default sweep (experiments/grocer-calibration.toml): every
    # stubbornness value of its grid is in the view.
    sweep = load_spec(REPO / "experiments" / "grocer-calibration.toml")
    assert set(defs["view"]["stubbornness"].to_list()) == set(sweep.space.stubbornness)
    grocer = defs["decision_problems"]["regional-grocer-discounter-price-war"]
    assert defs["read_rows"].options == grocer.options
    assert defs["option_box"].value.splitlines() == list(grocer.options)
    assert "decision_run" not in defs  # Run was not pressed
    # The strategies table: named, formatted columns (it was compare()'s 20 raw columns).
    strategies = defs["strategies"]
    assert strategies.columns[:3] == [
        "Strategy",
        "Runs",
        "Feasibility score (mean of the final set, 0–100)",
    ]
    assert all("(" in cell for cell in strategies[strategies.columns[2]].to_list())


@EXPLORER
def test_the_explorer_runs_exactly_the_edited_decision():
    """Run pressed with one option added and a constraint forbidding it (the editor's widgets
    given as values): the run records what the boxes held, as edited in the notebook."""
    grocer = problems(REPO)["regional-grocer-discounter-price-war"]
    read = decision_as_read(grocer)
    rows = decision_rows(read)
    held = SimpleNamespace
    _, defs = _explorer().run(
        defs={
            "option_box": held(value=rows.options_text + "\nSell the stores"),
            "constraint_box": held(value="A franchise contract bars selling | forbids 4"),
            "exclusive_box": held(value="one_of"),
            "decision_read": read,
            "read_rows": rows,
            "run_decision": held(value=True),
        }
    )
    run_dir = defs["decision_run"]
    try:
        decision = json.loads((run_dir / "manifest.json").read_text())["decision"]
    finally:
        shutil.rmtree(run_dir)
    assert [o["label"] for o in decision["options"]] == [*grocer.options, "Sell the stores"]
    assert decision["options_source"] == "notebook" and decision["exclusive"] is True
    assert [c["forbids"] for c in decision["constraints"]] == [[3]]
