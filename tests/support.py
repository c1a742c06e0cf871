"""Test support: paths to the sample data and a helper to run deliberations."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hivemind_lab import Calibrations, DeliberationRequest, Limits, OfflineAgentModel
from hivemind_lab.deliberation import deliberate
from hivemind_lab.problems import Problem
from hivemind_lab.results import DeliberationResult

REPO = Path(__file__).resolve().parents[1]
KNOWLEDGE = REPO / "data" / "knowledge"
PRACTICALITY = REPO / "data" / "practicality"
PROBLEMS = REPO / "data" / "problems"
SHARED = REPO.parent / "shared"


def make_request(problem: Problem, **overrides: Any) -> DeliberationRequest:
    values: dict[str, Any] = {
        "problem": problem.question,
        "sufficiency": 2,
        "feasibility": 1,
        "density": 8000,
        "client_data": problem.client_data,
        "market_data": problem.market_data,
        "problem_id": problem.id,
    }
    values.update(overrides)
    return DeliberationRequest(**values)


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
