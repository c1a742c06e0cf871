"""Deliberation: the three networks, the engine that runs them and the strategies it runs.

theory (agents propose, critique, revise) → monitor (clusters, counts, halts) → practicality
(constraint agents score, veto); `engine` is the one wiring of a run directory (cache, audit,
caller, scoring, checkpoints) and runs a strategy (`strategies`: the deliberation, the vote and
single-agent baselines, the compliance rescore); `runner` resolves knowledge, builds the manifest
and is the one place that wires them (`run_manifest`, and `deliberate` at the sync edge).

The run API is imported on first use, so that reading one stage (``deliberation.monitor``,
say) does not load the engine, the model cache and every network with it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hivemind_lab.lazy import homes, lazy_exports

if TYPE_CHECKING:  # the package's public names, each with its home (read by `homes`)
    from hivemind_lab.deliberation.engine import check_run_dir as check_run_dir
    from hivemind_lab.deliberation.runner import build_manifest as build_manifest
    from hivemind_lab.deliberation.runner import deliberate as deliberate
    from hivemind_lab.deliberation.runner import knowledge_for as knowledge_for
    from hivemind_lab.deliberation.runner import new_run as new_run
    from hivemind_lab.deliberation.runner import prepare_knowledge as prepare_knowledge
    from hivemind_lab.deliberation.runner import run_manifest as run_manifest
    from hivemind_lab.deliberation.state import Knowledge as Knowledge
    from hivemind_lab.deliberation.state import Progress as Progress
    from hivemind_lab.deliberation.state import ProgressCallback as ProgressCallback
    from hivemind_lab.runs.rundir import load_result as load_result


_HOMES = homes(__name__)
"""Each public name and the module that defines it, read from the ``TYPE_CHECKING`` block
above (the one place the names are written): ``__all__`` and ``__getattr__`` come from it."""

__all__ = sorted(_HOMES)
__getattr__ = lazy_exports(__name__, _HOMES)
