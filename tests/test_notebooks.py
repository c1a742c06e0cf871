"""The marimo explorer runs top to bottom (the Jupyter notebooks run in JupyterLab: see
tests/test_notebooks_browser.py)."""

from __future__ import annotations

import importlib.util

from tests.support import REPO


def test_marimo_explorer_runs_over_the_cached_sweep():
    spec = importlib.util.spec_from_file_location("explorer", REPO / "notebooks" / "explorer.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    _, defs = module.app.run()
    assert defs["runs"].height >= 27
    assert defs["view"].height >= 1
    assert set(defs["view"]["stubbornness"].to_list()) == {0.1, 0.5, 0.9}
    grocer = defs["decision_problems"]["regional-grocer-discounter-price-war"]
    assert defs["read_rows"].options == grocer.options
    assert defs["option_box"].value.splitlines() == list(grocer.options)
    assert "decision_run" not in defs  # Run was not pressed
