"""Calibration curves: every calibration over its whole range (0.0-1.0 in steps of 0.1) on four
problems × three seeds, with Student-t intervals; checks the documented direction and reports
dead zones. Writes reports/calibration-curves.md.

Usage: python benchmarks/calibration_curves.py [--workers 2] [--embedder tfidf|wordllama]
       [--root FOLDER]  (finished runs there are reused: a changed model needs a new folder)
"""

from __future__ import annotations

import argparse
import subprocess
import time
from datetime import UTC, datetime
from pathlib import Path

from hivemind_lab.deliberation.embedders import DEFAULT_EMBEDDER
from hivemind_lab.experiments import load, run
from hivemind_lab.experiments.curves import (
    DESIGNS,
    at_limit,
    curve,
    curve_spec,
    dead_zones,
    direction_holds,
)

ROOT = Path(__file__).resolve().parents[1]
PROBLEMS = (
    "data/problems/regional-grocer-discounter-price-war.toml",
    "data/problems/insurer-analytics-acquisition.toml",
    "data/problems/ebike-battery-make-or-buy.toml",
    "data/problems/engineer-startup-decision.toml",
)
SEEDS = (0, 1, 2)


def _commit() -> str:
    """The code measured: the commit, and whether the work tree differed from it."""

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=ROOT, capture_output=True, text=True, check=False
        ).stdout.strip()

    commit = git("rev-parse", "--short", "HEAD") or "unknown"
    dirty = git("status", "--porcelain", "--untracked-files=no", "--", "hivemind_lab")
    return commit + (" with uncommitted changes to hivemind_lab/" if dirty else "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--embedder", default=DEFAULT_EMBEDDER)
    parser.add_argument(
        "--also-threshold-with",
        default="wordllama",
        help="a second embedder whose similarity-threshold curve is measured too",
    )
    parser.add_argument("--out", type=Path, default=ROOT / "reports" / "calibration-curves.md")
    parser.add_argument(
        "--root",
        type=Path,
        default=ROOT / "experiments" / "runs",
        help="where the sweeps' runs go; finished runs there are reused, so measure a changed "
        "model into a new folder",
    )
    args = parser.parse_args()
    lines = [
        "# Calibration curves",
        "",
        f"Measured {datetime.now(UTC):%Y-%m-%d} at commit {_commit()} on the offline model, "
        f"embedder {args.embedder}, "
        f"{len(PROBLEMS)} problems × {len(SEEDS)} seeds per value (n = runs per value), other "
        "calibrations at their defaults; mean ± 95 % Student-t interval. A dead zone is a pair "
        "of adjacent values between which no run's figure changes; where every run is already at "
        "the metric's limit (rounds at max_rounds) the pair is listed as at the limit instead. "
        "Intervals are not clipped to the metric's range (a count's lower bound may fall below "
        "0); ± 0.000 means every run gave the same figure. "
        "Regenerate: `python benchmarks/calibration_curves.py`.",
    ]
    jobs = [(calibration, args.embedder) for calibration in DESIGNS]
    if args.also_threshold_with and args.also_threshold_with != args.embedder:
        jobs.append(("similarity_threshold", args.also_threshold_with))
    for calibration, embedder in jobs:
        designs = DESIGNS[calibration]
        spec = curve_spec(calibration, problems=PROBLEMS, seeds=SEEDS, embedder=embedder)
        started = time.perf_counter()
        report = run(spec, project=ROOT, root=args.root / spec.name, workers=args.workers)
        runs = load(report.root)
        print(
            f"{calibration}: {len(report.runs)} runs ({report.reuse_line()}) "
            f"in {time.perf_counter() - started:.0f} s"
        )
        first = designs[0]
        lines += [
            "",
            f"## {calibration} ({embedder})",
            "",
            f"Inputs: sufficiency {first.sufficiency}, feasibility {first.feasibility}, "
            f"max_rounds {first.max_rounds}, max_regenerations {first.max_regenerations}.",
            "",
        ]
        for design in designs:
            points = curve(runs, calibration, design.metric)
            zones = dead_zones(runs, calibration, design.metric, limit=design.limit)
            capped = at_limit(runs, calibration, design.metric, design.limit)
            holds = direction_holds(points, design.direction)
            lines += [
                f"**{design.metric}** (documented: {design.direction} as {calibration} rises) — "
                f"direction {'holds' if holds else 'DOES NOT HOLD'}; dead zones: "
                + (", ".join(f"{a}–{b}" for a, b in zones) if zones else "none")
                + (
                    f"; at the limit {design.limit:g} (every run): "
                    + ", ".join(f"{a}–{b}" for a, b in capped)
                    if capped
                    else ""
                ),
                "",
                f"| {calibration} | mean ± 95 % CI | n |",
                "| --- | --- | --- |",
                *(
                    f"| {row[calibration]} | {row['mean']:.3f}"
                    + (f" ± {row['ci95']:.3f}" if row["ci95"] is not None else "")
                    + f" | {row['n']} |"
                    for row in points.iter_rows(named=True)
                ),
                "",
            ]
            print(f"  {design.metric}: direction {holds}, dead zones {zones}")
            print(
                "   ",
                " ".join(f"{r[calibration]}:{r['mean']:.2f}" for r in points.iter_rows(named=True)),
            )
    args.out.write_text("\n".join(lines) + "\n", "utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
