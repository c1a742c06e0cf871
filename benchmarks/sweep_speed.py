"""Sweep speed: resuming a finished sweep, and worker processes on a slow backend.

1. A 27-point grid (3 stubbornness × 3 similarity thresholds × 3 severities) on the offline
   model is run once; resuming it (every point finished) is then timed: finished points are
   recognised before anything is dispatched, so no worker starts and no model is built.
2. A sweep of independent points (one seed each) on a backend with 200 ms latency per call
   (`latency_s`), with one worker and with two, side by side in one run (fresh folders).

Usage: python benchmarks/sweep_speed.py [--points 8]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from hivemind_lab.experiments import ExperimentSpec, run

ROOT = Path(__file__).resolve().parents[1]
GROCER = "data/problems/regional-grocer-discounter-price-war.toml"


def spec(name: str, **overrides: object) -> ExperimentSpec:
    values: dict[str, object] = {
        "name": name,
        "problems": [GROCER],
        "inputs": {"sufficiency": 2, "feasibility": 55, "density": 8000},
        "limits": {"max_rounds": 3, "max_regenerations": 1},
        "seeds": [0],
    }
    values.update(overrides)
    return ExperimentSpec.model_validate(values)


def resume_finished(tmp: Path) -> None:
    grid = spec(
        "resume",
        space={
            "kind": "grid",
            "stubbornness": [0.1, 0.5, 0.8],
            "similarity_threshold": [0.2, 0.35, 0.5],
            "severity": [0.3, 0.5, 0.7],
        },
    )
    started = time.perf_counter()
    first = run(grid, project=ROOT, root=tmp / "resume", workers=2)
    first_s = time.perf_counter() - started
    started = time.perf_counter()
    again = run(grid, project=ROOT, root=tmp / "resume", workers=2)
    again_s = time.perf_counter() - started
    assert all(r.skipped for r in again.runs) and len(again.runs) == 27
    print(
        f"27-point sweep, first run with 2 workers: {first_s:.1f} s ({first.model_calls} model calls)"
    )
    print(
        f"resuming it when finished (workers=2): {again_s:.2f} s, {again.model_calls} model calls"
    )


def slow_backend(tmp: Path, points: int) -> None:
    # One seed per point: no two points share a model call, so each one waits on the backend.
    # Sufficiency 1 and stubborn agents: every point goes its four rounds, as a real model's do.
    slow = spec(
        "latency",
        latency_s=0.2,
        seeds=list(range(points)),
        inputs={"sufficiency": 1, "feasibility": 55, "density": 8000},
        limits={"max_rounds": 4, "max_regenerations": 0},
        space={"kind": "grid", "stubbornness": [0.9]},
    )
    times = {}
    for workers in (1, 2):
        started = time.perf_counter()
        report = run(slow, project=ROOT, root=tmp / f"latency-{workers}", workers=workers)
        times[workers] = time.perf_counter() - started
        calls = sum(r.calls for r in report.runs)
        print(
            f"{points} points at 200 ms a call, {workers} worker(s): {times[workers]:.1f} s ({calls} calls)"
        )
    print(f"speed-up with 2 workers: {times[1] / times[2]:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=8)
    parser.add_argument("--skip-resume", action="store_true")
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory() as tmp:
        if not args.skip_resume:
            resume_finished(Path(tmp))
        slow_backend(Path(tmp), args.points)


if __name__ == "__main__":
    main()
