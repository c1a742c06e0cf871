"""Run points: one run of one strategy on one problem with one calibration and seed."""

from __future__ import annotations

import hashlib

from hivemind_lab.canonical import canonical_json
from hivemind_lab.experiments.spec import ExperimentSpec, Strategy
from hivemind_lab.inputs import Calibrations
from hivemind_lab.models import Frozen


class RunPoint(Frozen):
    """Everything that distinguishes one run of a sweep."""

    problem: str
    calibrations: Calibrations
    seed: int
    strategy: Strategy = "deliberation"
    roster: str | None = None
    """The spec's roster this point runs under (None: every agent on the spec's backend)."""

    def run_id(self, spec: ExperimentSpec) -> str:
        """Stable id from what determines the run's outcome, so a resumed sweep finds it."""
        body = {
            # The roster only when set (and by its entries, not only its name), so the ids of
            # sweeps without rosters stay as they were.
            "point": self.model_dump(
                mode="json", exclude={"roster"} if self.roster is None else None
            ),
            **(
                {"roster": spec.rosters[self.roster].model_dump(mode="json")}
                if self.roster is not None
                else {}
            ),
            "inputs": spec.inputs.identity(),
            "limits": spec.limits.model_dump(mode="json"),
            "backend": spec.backend,
            "model": spec.model,
            "knowledge_base": spec.knowledge_base,
            "embedder": spec.embedder,
            # Only when set, so the ids of runs on other backends stay as they were.
            **({"model_file": spec.model_file} if spec.model_file else {}),
        }
        digest = hashlib.sha256(canonical_json(body).encode()).hexdigest()[:12]
        return f"{self.strategy}-{digest}"


def expand(spec: ExperimentSpec, calibrations: list[Calibrations] | None = None) -> list[RunPoint]:
    """Deliberation points for every problem × calibration × seed, then the baselines (one per
    problem × seed: baselines do not depend on stubbornness; they use the first point's
    similarity threshold and severity)."""
    calibrations = calibrations if calibrations is not None else spec.calibration_points()
    rosters: list[str | None] = [*spec.rosters] or [None]
    points = [
        RunPoint(problem=p, calibrations=c, seed=s, roster=r)
        for r in rosters
        for p in spec.problems
        for c in calibrations
        for s in spec.seeds
    ]
    if calibrations:
        for strategy in spec.baselines:
            points += [
                RunPoint(
                    problem=p, calibrations=calibrations[0], seed=s, strategy=strategy, roster=r
                )
                for r in rosters
                for p in spec.problems
                for s in spec.seeds
            ]
    return points
