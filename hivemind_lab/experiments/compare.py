"""Strategy comparison with confidence intervals across seeds (deliberation vs. baselines)."""

from __future__ import annotations

import polars as pl

METRICS = (
    "initial_conclusions",
    "distinct_conclusions",
    "mean_feasibility",
    "vetoes",
    "run_calls",
    "run_tokens",
)


def compare(runs: pl.DataFrame) -> pl.DataFrame:
    """Mean and 95 % confidence half-width (normal approximation) per strategy and metric.

    ``runs`` is `load(path)` output (one row per run); replicates are the rows of a strategy.
    """
    present = [m for m in METRICS if m in runs.columns]
    aggregations = []
    for metric in present:
        col = pl.col(metric).cast(pl.Float64)
        aggregations += [
            col.mean().round(3).alias(f"{metric}_mean"),
            (1.96 * col.std(ddof=1).fill_null(0.0) / pl.len().sqrt())
            .round(3)
            .alias(f"{metric}_ci95"),
        ]
    return runs.group_by("strategy").agg([pl.len().alias("runs"), *aggregations]).sort("strategy")
