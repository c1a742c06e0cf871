"""Experiments: calibration sweeps as reproducible run artifacts, with exact replay.

`run(spec)` runs a sweep (locally in processes, or on Ray), `load(path)` reads its results as a
polars DataFrame, `replay(run_dir)` re-runs a run from its cache and checks the result.

Names are imported on first use, so that checking an experiment file (`load_spec`) answers
without loading the runner, the deliberation engine or polars.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hivemind_lab.lazy import lazy_exports

if TYPE_CHECKING:
    from hivemind_lab.experiments.points import RunPoint, expand
    from hivemind_lab.experiments.replay import ReplayReport, replay
    from hivemind_lab.experiments.runner import RunSummary, run_point
    from hivemind_lab.experiments.spec import ExperimentSpec, load_spec
    from hivemind_lab.experiments.sweep import SweepReport, load, run

_HOMES: dict[str, str] = {
    "ExperimentSpec": "hivemind_lab.experiments.spec",
    "load_spec": "hivemind_lab.experiments.spec",
    "RunPoint": "hivemind_lab.experiments.points",
    "expand": "hivemind_lab.experiments.points",
    "RunSummary": "hivemind_lab.experiments.runner",
    "run_point": "hivemind_lab.experiments.runner",
    "SweepReport": "hivemind_lab.experiments.sweep",
    "load": "hivemind_lab.experiments.sweep",
    "run": "hivemind_lab.experiments.sweep",
    "ReplayReport": "hivemind_lab.experiments.replay",
    "replay": "hivemind_lab.experiments.replay",
}


__getattr__ = lazy_exports(__name__, _HOMES)


__all__ = [
    "ExperimentSpec",
    "ReplayReport",
    "RunPoint",
    "RunSummary",
    "SweepReport",
    "expand",
    "load",
    "load_spec",
    "replay",
    "run",
    "run_point",
]
