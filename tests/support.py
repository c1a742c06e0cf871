"""Test support: paths to the sample data and a helper to run deliberations."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from hivemind_lab import Calibrations, DeliberationRequest, Limits, OfflineAgentModel
from hivemind_lab.agents.schemas import OptionStance
from hivemind_lab.agents.testing import TestModel
from hivemind_lab.deliberation import deliberate
from hivemind_lab.inputs import request_for
from hivemind_lab.problems import Problem
from hivemind_lab.runs.results import DeliberationResult, Solution

REPO = Path(__file__).resolve().parents[1]
KNOWLEDGE = REPO / "data" / "knowledge"
PRACTICALITY = REPO / "data" / "practicality"
PROBLEMS = REPO / "data" / "problems"
SHARED = REPO.parent / "shared"


def child_env(home: Path, **values: str) -> dict[str, str]:
    """The whole environment of a child process: this interpreter's folder on PATH, ``home``
    as HOME, and ``values``. Nothing is inherited, so a variable the caller happens to export
    (NEO4J_PASSWORD, HIVEMIND_MODEL, OPENAI_BASE_URL, ...) cannot change what a test sees."""
    return {
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.defpath]),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        **values,
    }


def python_output(script: str, home: Path) -> list[str]:
    """The words a fresh interpreter prints running ``script`` in the project (for what an
    import does on its own: modules loaded, loggers configured), with `child_env`."""
    import subprocess

    done = subprocess.run(
        [sys.executable, "-c", script],
        env=child_env(home),
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def make_request(problem: Problem, **overrides: Any) -> DeliberationRequest:
    """The problem's request through the one loader, with test defaults for the sliders."""
    values: dict[str, Any] = {"sufficiency": 2, "feasibility": 1, "density": 8000}
    return request_for(problem, **{**values, **overrides})


def run(
    run_dir: Path,
    problem: Problem,
    *,
    calibrations: Calibrations | None = None,
    limits: Limits | None = None,
    model: Any = None,
    seed: int = 0,
    **request: Any,
) -> DeliberationResult:
    return deliberate(
        make_request(problem, **request),
        calibrations or Calibrations(),
        limits or Limits(),
        model=model or OfflineAgentModel(),
        run_dir=run_dir,
        seed=seed,
        knowledge_base=KNOWLEDGE,
        practicality_kb=PRACTICALITY,
    )


def run_free(run_dir: Path, problem: Problem, **options: Any) -> DeliberationResult:
    """`run` with the content-free `TestModel`: for tests of the engine, storage and reports,
    which must not rest on the offline stand-in's judgement."""
    return run(run_dir, problem, model=TestModel(), **options)


def staged(agent: str, *stances: tuple[int, str], round: int = 0) -> Solution:
    """A hand-built solution of ``agent`` at ``round`` taking ``stances`` ((option, stance)
    pairs), with placeholder words: for tests of the engine's stance rules."""
    return Solution(
        id=f"g0.r{round}.{agent}",
        agent_id=agent,
        regeneration=0,
        round=round,
        title=agent,
        recommendations=(f"r{round}",),
        rationale="",
        stances=tuple(
            OptionStance.model_validate({"option": o, "stance": st}) for o, st in stances
        ),
    )
