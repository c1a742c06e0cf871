"""Rebuild a run from its manifest: the one place that does it, for every strategy.

Starting a sweep point, resuming a killed run (CLI ``--resume``) and replaying a finished one all
come here with a manifest, a run directory and a model.
"""

from __future__ import annotations

from pathlib import Path

from hivemind_lab import deliberation
from hivemind_lab.deliberation.state import Knowledge, ProgressCallback
from hivemind_lab.experiments import baselines
from hivemind_lab.llm.base import ChatModel
from hivemind_lab.runs.manifest import RunManifest
from hivemind_lab.runs.results import DeliberationResult


async def execute(
    manifest: RunManifest,
    run_dir: str | Path,
    *,
    model: ChatModel,
    resume: bool = False,
    on_progress: ProgressCallback | None = None,
    knowledge: Knowledge | None = None,
) -> DeliberationResult:
    """Run (or continue) the run ``manifest`` describes in ``run_dir`` with ``model``."""
    if manifest.strategy == "deliberation":
        return await deliberation.run_manifest(
            manifest,
            run_dir,
            model=model,
            resume=resume,
            on_progress=on_progress,
            knowledge=knowledge,
        )
    return await baselines.run_manifest(
        manifest, run_dir, model=model, resume=resume, knowledge=knowledge
    )
