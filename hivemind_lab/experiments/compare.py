"""Strategy comparison with Student-t confidence intervals across runs (deliberation vs.
baselines).

Sweeps have few replicates (often three seeds), where the normal approximation's 1.96 is far too
narrow (t(0.975, 2) = 4.30). Every interval is reported with its n; one run gives no interval.
"""

from __future__ import annotations

import polars as pl
from scipy import stats

from hivemind_lab.experiments.spec import CALIBRATIONS

METRICS = (
    "initial_conclusions",
    "distinct_conclusions",
    "initial_diversity",
    "final_diversity",
    "mean_feasibility",
    "vetoes",
    "run_calls",
    "run_tokens",
)


def t_half_width(sd: float | None, n: int, *, level: float = 0.95) -> float | None:
    """Half-width of the Student-t interval of a mean (None when n < 2)."""
    if n < 2 or sd is None:
        return None
    return float(stats.t.ppf(0.5 + level / 2, n - 1) * sd / n**0.5)


def format_interval(mean: float | None, half: float | None, n: int, *, digits: int = 1) -> str:
    """``mean ± half (n=…)``; ``mean (n=1)`` when there is no interval (thousands separated:
    token counts run to six figures)."""
    if mean is None:
        return f"– (n={n})"
    if half is None:
        return f"{mean:,.{digits}f} (n={n})"
    return f"{mean:,.{digits}f} ± {half:,.{digits}f} (n={n})"


PAIR_KEYS = ("problem", "seed", *CALIBRATIONS)
"""What a baseline and its deliberation sibling share: the problem, the seed, the calibrations
(and, in a sweep over rosters, the roster: `pair_keys`)."""


def pair_keys(runs: pl.DataFrame) -> list[str]:
    """`PAIR_KEYS`, and the roster when the runs were swept over rosters."""
    return [*PAIR_KEYS, *(["roster"] if "roster" in runs.columns else [])]


def like_for_like(runs: pl.DataFrame) -> pl.DataFrame:
    """The runs at the settings where a baseline ran (same problem, seed and calibrations):
    baselines run at one calibration point, so comparing them with every deliberation of a
    grid would average the deliberation over settings the baselines never saw."""
    keys = [k for k in pair_keys(runs) if k in runs.columns]
    if runs.is_empty() or "strategy" not in runs.columns:
        return runs
    base = runs.filter(pl.col("strategy") != "deliberation").select(keys).unique()
    if base.is_empty():
        return runs
    return runs.join(base, on=keys, how="semi")


def compare(runs: pl.DataFrame, *, by: str | list[str] = "strategy") -> pl.DataFrame:
    """Mean, 95 % Student-t half-width and n per group and metric.

    ``runs`` is `load(path)` output (one row per run); replicates are the rows of a group.
    Columns: ``<metric>_mean``, ``<metric>_ci95`` (null when n < 2) and ``<metric>_n``.
    Grouped by strategy (or by roster and strategy), only `like_for_like` runs are compared.
    """
    keys = [by] if isinstance(by, str) else list(by)
    if keys in (["strategy"], ["roster", "strategy"]):
        runs = like_for_like(runs)
    present = [m for m in METRICS if m in runs.columns]
    aggregations = []
    for metric in present:
        col = pl.col(metric).cast(pl.Float64)
        aggregations += [
            col.mean().alias(f"{metric}_mean"),
            col.std(ddof=1).alias(f"{metric}_sd"),
            col.count().alias(f"{metric}_n"),
        ]
    table = runs.group_by(keys).agg([pl.len().alias("runs"), *aggregations]).sort(keys)
    for metric in present:
        halves = [
            None if h is None else round(h, 3)
            for h in (
                t_half_width(sd, n)
                for sd, n in zip(table[f"{metric}_sd"], table[f"{metric}_n"], strict=True)
            )
        ]
        table = table.with_columns(
            pl.col(f"{metric}_mean").round(3),
            pl.Series(f"{metric}_ci95", halves, dtype=pl.Float64),
        ).drop(f"{metric}_sd")
    return table


MISMATCH = 0.10
"""Relative difference in calls or tokens from which a baseline is flagged as not at equal
compute."""


def compute_table(runs: pl.DataFrame, *, tolerance: float = MISMATCH) -> pl.DataFrame:
    """Each baseline run beside its deliberation sibling (same problem, seed and calibrations):
    calls and tokens side by side, with ``mismatch`` set when either differs by more than
    ``tolerance`` of the deliberation's."""
    keys = pair_keys(runs)
    needed = {*keys, "strategy", "run_calls", "run_tokens"}
    if runs.is_empty() or not needed <= set(runs.columns):
        return pl.DataFrame()
    delib = (
        runs.filter(pl.col("strategy") == "deliberation")
        .unique(subset=keys, keep="first")
        .select(
            *keys,
            pl.col("run_calls").alias("deliberation_calls"),
            pl.col("run_tokens").alias("deliberation_tokens"),
        )
    )
    base = runs.filter(pl.col("strategy") != "deliberation").select(
        *keys, "strategy", "run_calls", "run_tokens", *(["tie"] if "tie" in runs.columns else [])
    )
    table = base.join(delib, on=keys, how="left")
    calls_gap = (pl.col("run_calls") - pl.col("deliberation_calls")) / pl.col("deliberation_calls")
    tokens_gap = (pl.col("run_tokens") - pl.col("deliberation_tokens")) / pl.col(
        "deliberation_tokens"
    )
    return table.with_columns(
        calls_gap.round(3).alias("calls_gap"),
        tokens_gap.round(3).alias("tokens_gap"),
        ((calls_gap.abs() > tolerance) | (tokens_gap.abs() > tolerance)).alias("mismatch"),
    ).sort(["problem", "seed", "strategy"])
