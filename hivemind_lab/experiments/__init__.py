"""Experiments: calibration sweeps as reproducible run artifacts, with exact replay.

`run(spec)` runs a sweep (locally in processes, or on Ray), `load(path)` reads its results as a
polars DataFrame, `replay(run_dir)` re-runs a run from its cache and checks the result.
"""

from hivemind_lab.experiments.points import RunPoint, expand
from hivemind_lab.experiments.replay import ReplayReport, replay
from hivemind_lab.experiments.runner import RunSummary, SweepReport, load, run, run_point
from hivemind_lab.experiments.spec import ExperimentSpec, load_spec

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
