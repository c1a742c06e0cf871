"""Experiments: calibration sweeps as reproducible run artifacts, with exact replay.

`run(spec)` runs a sweep (locally in processes, or on Ray), `load(path)` reads its results as a
polars DataFrame, `replay(run_dir)` re-runs a run from its cache and checks the result.

Names are imported on first use, so that checking an experiment file (`load_spec`) answers
without loading the runner, the deliberation engine or polars.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hivemind_lab.lazy import homes, lazy_exports

if TYPE_CHECKING:  # the package's public names, each with its home (read by `homes`)
    from hivemind_lab.experiments.points import RunPoint as RunPoint
    from hivemind_lab.experiments.points import expand as expand
    from hivemind_lab.experiments.replays import ReplayReport as ReplayReport
    from hivemind_lab.experiments.replays import replay as replay
    from hivemind_lab.experiments.runner import RunSummary as RunSummary
    from hivemind_lab.experiments.runner import run_point as run_point
    from hivemind_lab.experiments.spec import ExperimentSpec as ExperimentSpec
    from hivemind_lab.experiments.spec import load_spec as load_spec
    from hivemind_lab.experiments.sweep import SweepReport as SweepReport
    from hivemind_lab.experiments.sweep import load as load
    from hivemind_lab.experiments.sweep import run as run


_HOMES = homes(__name__)
"""Each public name and the module that defines it, read from the ``TYPE_CHECKING`` block
above (the one place the names are written): ``__all__`` and ``__getattr__`` come from it."""

__all__ = sorted(_HOMES)
__getattr__ = lazy_exports(__name__, _HOMES)
