"""What a sweep says about its calibrations, decided once for the CLI, the sweep report and
the notebooks: per calibration, the effect of each of its values on each outcome (mean, 95 %
Student-t interval clipped to what the outcome can take, n), and the best setting for the
sweep's stated objective.

Each mean pools the runs at that value over the other calibrations' values, problems and seeds
(a grid's marginal); the best setting is judged per full point (all three calibrations).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import polars as pl

from hivemind_lab import calibrations
from hivemind_lab.calibrations import CALIBRATIONS


@dataclass(frozen=True)
class Measure:
    """A column of a sweep's runs as a reader reads it: a name, a unit, what it can take."""

    label: str
    unit: str
    low: float | None = 0.0
    high: float | None = None
    digits: int = 1

    @property
    def title(self) -> str:
        """An axis title: "Rounds to halt (rounds, every attempt)"."""
        return f"{self.label} ({self.unit})" if self.unit else self.label

    def clip(self, value: float) -> float:
        """A bound of an interval kept within what the measure can take (a count is never
        below 0, a score never above 100)."""
        if self.low is not None:
            value = max(self.low, value)
        if self.high is not None:
            value = min(self.high, value)
        return value

    def number(self, value: float) -> str:
        return f"{value:,.{self.digits}f}"  # token counts run to six figures


def _calibration_measure(name: str) -> Measure:
    """A calibration's measure: its label from the field's name, its range and scale from the
    field in `Calibrations`."""
    low, high = calibrations.bounds(name)
    return Measure(name.replace("_", " ").capitalize(), calibrations.scale(name), low, high, 2)


MEASURES: dict[str, Measure] = {
    **{name: _calibration_measure(name) for name in CALIBRATIONS},
    "total_rounds": Measure("Rounds to halt", "rounds, every attempt", 0),
    "rounds": Measure("Rounds in the final attempt", "rounds", 0),
    "vetoes": Measure("Vetoes", "per run", 0, None, 2),
    "mean_feasibility": Measure("Feasibility score", "mean of the final set, 0–100", 0, 100),
    "first_feasibility": Measure("First feasibility score", "first verdict's mean, 0–100", 0, 100),
    "distinct_conclusions": Measure("Distinct conclusions", "at the end", 0),
    "initial_conclusions": Measure("Distinct conclusions at round 0", "first proposals", 0),
    "mean_revision_magnitude": Measure(
        "Revision movement", "per round, 0 none – 1 every option reversed", 0, 1, 2
    ),
    "initial_diversity": Measure("Diversity of the proposals", "1 − mean similarity, 0–1", 0, 1, 2),
    "final_diversity": Measure("Diversity at the end", "1 − mean similarity, 0–1", 0, 1, 2),
    "run_calls": Measure("Model calls", "per run", 0, None, 0),
    "run_tokens": Measure("Tokens", "per run", 0, None, 0),
    "objective": Measure("Objective score", "lower is better", 0),
}
"""Every column a sweep chart or table shows, with its unit and range."""

OUTCOMES = ("total_rounds", "vetoes", "mean_feasibility", "distinct_conclusions")
"""The outcomes each calibration's effect is shown on, in this order."""


def measure(column: str) -> Measure:
    """The measure of a column (a plain label for one not listed)."""
    return MEASURES.get(column) or Measure(column.replace("_", " ").capitalize(), "", None)


@dataclass(frozen=True)
class Estimate:
    """A mean with its 95 % Student-t interval, clipped to the measure's range, and its n."""

    mean: float
    low: float | None
    high: float | None
    n: int
    measure: Measure

    def text(self) -> str:
        """ "4.2 (3.1–5.3, n 4)"; "4.2 (n 1)" without an interval; "0.00 (all 4 runs)" when
        every run gave the same value (an interval of "0.00–0.00" says nothing more)."""
        m = self.measure
        if self.low is None or self.high is None:
            return f"{m.number(self.mean)} (n {self.n})"
        if m.number(self.low) == m.number(self.high) == m.number(self.mean):
            return f"{m.number(self.mean)} (all {self.n} runs)"
        return f"{m.number(self.mean)} ({m.number(self.low)}–{m.number(self.high)}, n {self.n})"


def estimate(values: list[float], column: str) -> Estimate:
    """Mean, clipped 95 % Student-t interval and n of one column's values."""
    from hivemind_lab.experiments.compare import t_half_width  # scipy: loaded when needed

    m = measure(column)
    n = len(values)
    mean = sum(values) / n if n else float("nan")
    sd = pl.Series(values, dtype=pl.Float64).std(ddof=1) if n > 1 else None
    half = t_half_width(float(sd) if sd is not None else None, n)  # type: ignore[arg-type]
    if half is None:
        return Estimate(mean, None, None, n, m)
    return Estimate(mean, m.clip(mean - half), m.clip(mean + half), n, m)


def interval(column: str, mean: float, half: float | None, n: int) -> Estimate:
    """A mean and the half-width of its interval (`experiments.compare` gives them) as an
    estimate whose bounds stay within what the column can take."""
    m = measure(column)
    if half is None:
        return Estimate(mean, None, None, n, m)
    return Estimate(mean, m.clip(mean - half), m.clip(mean + half), n, m)


def heatmap_axes(runs: pl.DataFrame) -> tuple[str, str]:
    """The two calibrations a heatmap of a sweep spans: those the sweep varied (stubbornness
    and severity when all three were: the similarity threshold has its own chart), else the
    one it varied and the first it held, else stubbornness × severity."""
    moved = swept(runs)
    if len(moved) == 2:
        return moved[0], moved[1]
    if len(moved) == 1:
        held = next(c for c in CALIBRATIONS if c != moved[0])
        return moved[0], held
    return "stubbornness", "severity"


@dataclass(frozen=True)
class ValueRow:
    """One value of a calibration and each outcome's estimate there."""

    value: float
    """The value (a bin's lower edge for a random search's scattered values)."""
    outcomes: dict[str, Estimate]
    label: str = ""
    """The value as shown: "0.50", or a bin "0.26–0.45"."""


@dataclass(frozen=True)
class CalibrationEffect:
    """One calibration's values (low to high) and each outcome at each."""

    calibration: str
    rows: tuple[ValueRow, ...]

    @property
    def measure(self) -> Measure:
        return measure(self.calibration)

    def frame(self) -> pl.DataFrame:
        """The table as text cells: one row per value, one column per outcome (notebooks)."""
        outcomes = list(self.rows[0].outcomes) if self.rows else []
        return pl.DataFrame(
            {
                self.measure.label.lower(): [
                    r.label or self.measure.number(r.value) for r in self.rows
                ],
                **{measure(o).title: [r.outcomes[o].text() for r in self.rows] for o in outcomes},
            }
        )

    def change(self, column: str) -> str:
        """In words, how an outcome moves from the lowest value to the highest."""
        first, last = self.rows[0], self.rows[-1]
        a, b = first.outcomes[column], last.outcomes[column]
        cal = self.measure
        span = f"{cal.label.lower()} {first.label or cal.number(first.value)}"
        if round(a.mean, a.measure.digits) == round(b.mean, b.measure.digits):
            return (
                f"{measure(column).label} stays at {a.measure.number(a.mean)} from {span} to "
                f"{last.label or cal.number(last.value)}"
            )
        word = "rises" if b.mean > a.mean else "falls"
        overlap = (
            a.low is not None
            and a.high is not None
            and b.low is not None
            and b.high is not None
            and max(a.low, b.low) <= min(a.high, b.high)
        )
        return (
            f"{measure(column).label} {word} from {a.text()} at {span} to {b.text()} at "
            f"{last.label or cal.number(last.value)}"
            + ("; the intervals overlap" if overlap else "")
        )


OBJECTIVES: dict[str, str] = {
    "rounds_no_veto": "fewest rounds to halt, counting 5 per veto and 10 for a run that did not "
    "converge (lower is better)",
    "fewest_conclusions": "fewest distinct conclusions at the end (lower is better)",
    "highest_feasibility": "highest mean feasibility score (higher is better)",
}
"""Each objective a sweep can state (`experiments.spec.Objective`, its [space] objective), in
words."""


@dataclass(frozen=True)
class Best:
    """The calibration point that did best for the objective, and the runner-up."""

    objective: str
    setting: dict[str, float]
    score: Estimate
    runner_up: tuple[dict[str, float], Estimate] | None

    def text(self) -> str:
        def point(setting: dict[str, float]) -> str:
            return ", ".join(
                f"{measure(c).label.lower()} {measure(c).number(v)}" for c, v in setting.items()
            )

        said = f"Best for {OBJECTIVES[self.objective]}: {point(self.setting)}, scoring "
        said += self.score.text()
        if self.runner_up is not None:
            said += f"; next {point(self.runner_up[0])}, {self.runner_up[1].text()}"
        return said + "."


def deliberations(runs: pl.DataFrame) -> pl.DataFrame:
    """The deliberation runs of a sweep (baselines have no calibration effect to show)."""
    if "strategy" in runs.columns:
        return runs.filter(pl.col("strategy") == "deliberation")
    return runs


def swept(runs: pl.DataFrame) -> list[str]:
    """The calibrations that took more than one value in the sweep."""
    runs = deliberations(runs)
    return [c for c in CALIBRATIONS if c in runs.columns and runs[c].n_unique() > 1]


def effects(runs: pl.DataFrame, *, outcomes: tuple[str, ...] = OUTCOMES) -> list[CalibrationEffect]:
    """Per swept calibration, each outcome's estimate at each of its values."""
    runs = deliberations(runs)
    shown = [o for o in outcomes if o in runs.columns]
    out = []
    for cal in swept(runs):
        m = measure(cal)
        values = sorted(float(v) for v in runs[cal].unique().to_list())
        if 2 * len(values) <= runs.height:  # a grid: one row per value
            spans = [(v, v, m.number(v)) for v in values]
        else:  # a random search: each value once, so equal-width bins instead
            low, high = values[0], values[-1]
            edges = [low + (high - low) * i / BINS for i in range(BINS + 1)]
            spans = [(a, b, f"{m.number(a)}–{m.number(b)}") for a, b in itertools.pairwise(edges)]
        rows = []
        for i, (a, b, label) in enumerate(spans):
            column = pl.col(cal)
            if a == b:
                at = runs.filter(column == a)
            else:  # the last bin holds its upper edge
                upper = (column <= b) if i == len(spans) - 1 else (column < b)
                at = runs.filter((column >= a) & upper)
            if at.is_empty():
                continue
            rows.append(
                ValueRow(
                    a,
                    {o: estimate([float(v) for v in at[o].drop_nulls()], o) for o in shown},
                    label,
                )
            )
        out.append(CalibrationEffect(cal, tuple(rows)))
    return out


BINS = 3
"""A calibration whose values are scattered (a random search: more values than half the runs)
is shown in this many equal-width bins."""


def objective_score(runs: pl.DataFrame, objective: str) -> pl.Series:
    """Each run's score for the objective, lower better (as the sweep's Optuna search
    minimises it: `experiments.sweep.objective`)."""
    if objective == "fewest_conclusions":
        return runs["distinct_conclusions"].cast(pl.Float64)
    if objective == "highest_feasibility":
        return runs["mean_feasibility"].cast(pl.Float64)
    return (
        runs["total_rounds"].cast(pl.Float64)
        + 5 * runs["vetoes"].cast(pl.Float64)
        + 10 * (runs["status"] != "converged").cast(pl.Float64)
    )


def best_setting(runs: pl.DataFrame, objective: str = "rounds_no_veto") -> Best | None:
    """The calibration point with the best mean score for ``objective`` (ties: more runs)."""
    runs = deliberations(runs)
    cals = [c for c in CALIBRATIONS if c in runs.columns]
    if runs.is_empty() or not cals or objective not in OBJECTIVES:
        return None
    scored = runs.with_columns(objective_score(runs, objective).alias("_score"))
    points = []
    for key, group in scored.group_by(cals, maintain_order=True):
        values = [float(v) for v in group["_score"].drop_nulls()]
        if values:
            est = estimate(
                values, "mean_feasibility" if objective == "highest_feasibility" else "objective"
            )
            points.append((dict(zip(cals, (float(k) for k in key), strict=True)), est))
    if not points:
        return None
    sign = -1 if objective == "highest_feasibility" else 1
    points.sort(key=lambda p: (sign * p[1].mean, -p[1].n))
    return Best(objective, points[0][0], points[0][1], points[1] if len(points) > 1 else None)
