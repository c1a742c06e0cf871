"""The marimo explorer runs top to bottom (the Jupyter notebooks run in JupyterLab: see
tests/test_notebooks_browser.py); its decision editor starts from the picked problem's decision
as read, runs nothing until Run is pressed, and then runs exactly what it holds."""

from __future__ import annotations

import importlib.util
import json
import shutil
from types import SimpleNamespace

import pytest

from hivemind_lab.experiments import load_spec
from hivemind_lab.workbench import decision_as_read, decision_rows, problems
from tests.support import REPO

# Both tests run the explorer, which runs the default sweep into the repository's
# experiments/runs folder, one sweep at a time: on one pytest-xdist worker they take turns
# instead of one being refused "in use by another sweep" (seen when a new prompt version made
# every point stale and the two sweeps ran long enough to overlap).
pytestmark = pytest.mark.xdist_group("explorer")


def _explorer():
    spec = importlib.util.spec_from_file_location("explorer", REPO / "notebooks" / "explorer.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.app


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
