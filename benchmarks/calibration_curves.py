"""Calibration curves: every calibration over its range on problems kept apart from the ones
the stand-in was developed on, with Student-t intervals clipped to what each metric allows;
checks the documented direction and reports dead zones, labelled by the model that made them.
Writes (or adds a model's section to) reports/calibration-curves.md.

Usage: python benchmarks/calibration_curves.py [--backend offline|local] [--workers 2]
       [--values 0,0.1,...] [--problems N] [--problem-files A,B,...] [--seeds 0,1] [--density 6000]
       [--embedder tfidf|wordllama] [--root FOLDER] [--append]
       (finished runs there are reused: a changed model needs a new folder)
"""

from __future__ import annotations

import argparse
import dataclasses
import subprocess
import time
from datetime import UTC, datetime
from pathlib import Path

import polars as pl

from hivemind_lab.deliberation.embedders import DEFAULT_EMBEDDER
from hivemind_lab.experiments import load, run
from hivemind_lab.experiments.curves import (
    DESIGNS,
    at_limit,
    curve,
    curve_spec,
    dead_zones,
    direction_holds,
    per_problem,
    widest_flat,
)

ROOT = Path(__file__).resolve().parents[1]
PROBLEMS = (
    "data/problems/dental-imaging-low-end-entrant.toml",
    "data/problems/regional-bank-digital-challenger.toml",
    "data/problems/pet-food-vet-clinic-diversification.toml",
    "data/problems/industrial-distributor-platform-launch.toml",
)
"""Curve problems: none of the sample problems the stand-in's tests, its default sweep and its
removed problem-specific stems were developed on (grocer, e-bike, engineer, physician, paper
mill, insurer, utility)."""
SEEDS = (0, 1)
MODELS = {
    "offline": "the offline stand-in (agents/policy)",
    "local": "the bundled local model (SmolLM2-135M through llama-server)",
}


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
    parser.add_argument("--backend", choices=sorted(MODELS), default="offline")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--embedder", default=DEFAULT_EMBEDDER)
    parser.add_argument("--values", default=",".join(f"{0.1 * i:.1f}" for i in range(11)))
    parser.add_argument("--problems", type=int, default=None, help="the first N problems only")
    parser.add_argument(
        "--problem-files",
        default="",
        help="comma-separated problem files instead of the curve problems (tuning on others)",
    )
    parser.add_argument("--seeds", default=",".join(map(str, SEEDS)))
    parser.add_argument("--density", type=int, default=6000)
    parser.add_argument("--only", default="", help="comma-separated calibrations (default all)")
    parser.add_argument("--concurrency", type=int, default=16, help="model calls in flight per run")
    parser.add_argument(
        "--max-rounds",
        type=int,
        default=None,
        help="cap each design's rounds (a slow model's small grid; the section says so)",
    )
    parser.add_argument(
        "--max-regenerations", type=int, default=None, help="cap each design's regenerations"
    )
    parser.add_argument("--out", type=Path, default=ROOT / "reports" / "calibration-curves.md")
    parser.add_argument("--append", action="store_true", help="add a section to --out")
    parser.add_argument(
        "--root",
        type=Path,
        default=ROOT / "experiments" / "runs",
        help="where the sweeps' runs go; finished runs there are reused, so measure a changed "
        "model into a new folder",
    )
    args = parser.parse_args()
    values = tuple(float(v) for v in args.values.split(","))
    chosen = tuple(args.problem_files.split(",")) if args.problem_files else PROBLEMS
    problems = chosen[: args.problems]
    seeds = tuple(int(x) for x in args.seeds.split(","))
    wanted = [c for c in DESIGNS if not args.only or c in args.only.split(",")]
    lines = [
        "",
        f"## Curves of {MODELS[args.backend]}",
        "",
        f"Model: **{args.backend}** — {MODELS[args.backend]}. Measured "
        f"{datetime.now(UTC):%Y-%m-%d} at commit {_commit()}, embedder {args.embedder}, density "
        f"{args.density}, {len(problems)} problem(s) × {len(seeds)} seed(s) per value (n = runs "
        "per value); mean, 95 % Student-t interval clipped to what the metric allows [low, "
        "high]. A dead zone is a pair of adjacent values between which no run's figure "
        "changes; where every run is already at the metric's limit the pair is listed as at "
        "the limit instead. Problems: " + ", ".join(Path(p).stem for p in problems) + ".",
    ]
    for calibration in wanted:
        designs = DESIGNS[calibration]
        spec = curve_spec(
            calibration,
            problems=problems,
            seeds=seeds,
            values=values,
            density=args.density,
            embedder=args.embedder,
            backend=args.backend,
        )
        caps: dict[str, int] = {"concurrency": args.concurrency}
        if args.max_rounds is not None:
            caps["max_rounds"] = min(args.max_rounds, spec.limits.max_rounds)
            caps["min_rounds"] = min(spec.limits.min_rounds, caps["max_rounds"])
        if args.max_regenerations is not None:
            caps["max_regenerations"] = min(args.max_regenerations, spec.limits.max_regenerations)
        limits = spec.limits.model_copy(update=caps)
        spec = spec.model_copy(update={"limits": limits})
        started = time.perf_counter()
        report = run(spec, project=ROOT, root=args.root / spec.name, workers=args.workers)
        runs = load(report.root)
        print(
            f"{calibration}: {len(report.runs)} runs ({report.reuse_line()}) "
            f"in {time.perf_counter() - started:.0f} s"
        )
        first = designs[0]
        held = (
            f", similarity threshold held at {first.similarity_threshold}"
            if first.similarity_threshold is not None
            else ""
        )
        lines += [
            "",
            f"### {calibration} — {args.backend}",
            "",
            f"Inputs: sufficiency {first.sufficiency}, feasibility {first.feasibility}, "
            f"min_rounds {limits.min_rounds}, max_rounds {limits.max_rounds}, max_regenerations "
            f"{limits.max_regenerations}{held}; other calibrations at their defaults.",
            "",
        ]
        for uncapped in designs:
            design = dataclasses.replace(
                uncapped,
                max_rounds=limits.max_rounds,
                min_rounds=limits.min_rounds,
                max_regenerations=limits.max_regenerations,
            )
            points = curve(runs, calibration, design.metric, bounds=design.bounds)
            zones = dead_zones(runs, calibration, design.metric, limit=design.limit)
            capped = at_limit(runs, calibration, design.metric, design.limit)
            holds = direction_holds(points, design.direction)
            lines += [
                f"**{design.metric}** (documented: {design.direction} as {calibration} rises) — "
                f"direction {'holds' if holds else 'DOES NOT HOLD'}; widest flat stretch "
                f"{widest_flat(zones):.1f}; dead zones: "
                + (", ".join(f"{a}–{b}" for a, b in zones) if zones else "none")
                + (
                    f"; at the limit {design.limit:g} (every run): "
                    + ", ".join(f"{a}–{b}" for a, b in capped)
                    if capped
                    else ""
                ),
                "",
                f"| {calibration} | mean | 95 % interval | n |",
                "| --- | --- | --- | --- |",
                *(
                    f"| {row[calibration]} | {row['mean']:.3f} | "
                    + (
                        f"[{row['low']:.3f}, {row['high']:.3f}]"
                        if row["low"] is not None
                        else "(one run)"
                    )
                    + f" | {row['n']} |"
                    for row in points.iter_rows(named=True)
                ),
                "",
            ]
            table = per_problem(runs, calibration, design.metric)
            columns = [c for c in table.columns if c != "problem"]
            lines += [
                "Per problem (mean over seeds; flat stretch: the widest run of values over "
                "which that problem's runs do not change):",
                "",
                "| problem | " + " | ".join(columns) + " | flat |",
                "| --- | " + " | ".join("---" for _ in columns) + " | --- |",
                *(
                    f"| {row['problem']} | "
                    + " | ".join(f"{row[c]:.3g}" for c in columns)
                    + " | "
                    + f"{widest_flat(dead_zones(runs.filter(pl.col('problem') == row['problem']), calibration, design.metric, limit=design.limit)):.1f} |"
                    for row in table.iter_rows(named=True)
                ),
                "",
            ]
            print(f"  {design.metric}: direction {holds}, dead zones {zones}")
            print(
                "   ",
                " ".join(f"{r[calibration]}:{r['mean']:.2f}" for r in points.iter_rows(named=True)),
            )
    if args.append and args.out.exists():
        text = args.out.read_text("utf-8").rstrip("\n") + "\n" + "\n".join(lines) + "\n"
    else:
        text = "# Calibration curves\n" + "\n".join(lines) + "\n"
    args.out.write_text(text, "utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
