"""The calibrations and the call bill, measured on recorded capable-model runs (zero calls).

Each run under ``tests/fixtures/recorded/<prompt version>/`` was deliberated through the ``openai`` backend with
a capable model answering every request by hand. What acts after the model is measured again
here from the recorded replies, with no new call:

- **severity** (0, 0.25, 0.5, 0.75, 1): every judged set re-scored by the engine's own
  practicality path (`hivemind_lab.compliance.rescore` on the run's cache in replay mode):
  the set means and how many sets are vetoed;
- **similarity threshold** (0.5, 0.65, 0.8, 0.9): the monitor's distinct conclusions after each
  recorded round of the final generation, with the run's own embedder, and the round it would
  halt at (``>R``: not within the recorded rounds, so it would need new calls);
- **stubbornness** (0, 0.3, 0.6, 0.9): the engine's side only — how many recorded critique
  points each reviser must answer or may weigh (`weigh_points`) and whether the recorded
  revision would be taken whole (`hold_unanswered`). The model's own revision at another
  stubbornness would need new revise calls (it is shown other lists), so this is a lower
  bound on how the calibration acts, not a curve of outcomes;
- **calls and tokens** per deliberation, by task.

Runs sit under ``tests/fixtures/recorded/<prompt version>/``; severity is measured on the runs
of today's prompt version (a re-score renders today's requests), the rest on every run.

Usage: python benchmarks/recorded_runs.py [--out reports/recorded-runs.md]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from hivemind_lab.agents.prompts import PROMPT_VERSION  # noqa: E402
from hivemind_lab.agents.schemas import CritiqueTask, ReviseTask  # noqa: E402
from hivemind_lab.compliance import recorded_solutions  # noqa: E402
from hivemind_lab.deliberation import monitor  # noqa: E402
from hivemind_lab.deliberation.embedders import make_embedder  # noqa: E402
from hivemind_lab.deliberation.theory import hold_unanswered, licence, weigh_points  # noqa: E402
from hivemind_lab.runs.rescore import RescoreReport  # noqa: E402
from hivemind_lab.runs.rundir import RunDir  # noqa: E402
from tests.recorded import (  # noqa: E402
    RECORDED,
    calls,
    manifest,
    recorded_runs,
    rescored,
    run_name,
    version,
)

SEVERITIES = (0.0, 0.25, 0.5, 0.75, 1.0)
SCORE_TOLERANCE = 10
"""Points two scores of one solution may differ and still count as the same judgement."""
CURRENT_ONLY = "the engine runs again on runs recorded with today's prompts"


def _label(run: Path) -> str:
    """A run as the tables name it: its name and the prompt version it was recorded with."""
    return f"{run_name(run)} ({version(run)})"


def _current(runs: list[Path]) -> list[Path]:
    return [r for r in runs if manifest(r).prompt_version == PROMPT_VERSION]


THRESHOLDS = (0.5, 0.65, 0.8, 0.9)
STUBBORNNESS = (0.0, 0.3, 0.6, 0.9)


def _severity_rows(run: Path) -> list[str]:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        by: dict[float, list[tuple[float, bool]]] = {}
        for severity in SEVERITIES:
            report = rescored(run, Path(tmp) / str(severity), severity)
            by[severity] = [(s.after.mean_score, s.after.vetoed) for s in report.sets]
    feasibility = manifest(run).request.feasibility
    for index in range(len(by[SEVERITIES[0]])):
        cells = []
        for severity in SEVERITIES:
            mean, vetoed = by[severity][index]
            cells.append(f"{mean:.1f}{' **veto**' if vetoed else ''}")
        rows.append(f"| {_label(run)} | {index + 1} | {feasibility} | " + " | ".join(cells) + " |")
    return rows


def _similarity_row(run: Path) -> str:
    recorded = manifest(run)
    embedder = make_embedder(recorded.embedder.name)
    solutions = recorded_solutions(RunDir(run).audit_path).values()
    last = max(s.regeneration for s in solutions)
    rounds: dict[int, list] = {}
    for solution in solutions:
        if solution.regeneration == last:
            rounds.setdefault(solution.round, []).append(solution)
    sufficiency = recorded.request.sufficiency
    cells = []
    for threshold in THRESHOLDS:
        counts = [
            len(monitor.cluster_solutions(rounds[r], threshold, embedder)) for r in sorted(rounds)
        ]
        halt = next(
            (r for r, n in zip(sorted(rounds), counts, strict=True) if n <= sufficiency), None
        )
        said = "/".join(map(str, counts))
        cells.append(f"{said} (halt {halt if halt is not None else f'>{max(rounds)}'})")
    return f"| {_label(run)} | {sufficiency} | " + " | ".join(cells) + " |"


def _stubbornness_row(run: Path) -> str | None:
    shown: dict[str, frozenset[str]] = {}
    revisions = []
    for call in calls(run):
        task = call.task
        if isinstance(task, CritiqueTask) or task.task == "critique_batch":
            ids = {e.id for e in task.evidence} | {f.id for f in task.facts}
            shown[task.critic_id] = shown.get(task.critic_id, frozenset()) | frozenset(ids)
        if isinstance(task, ReviseTask) and task.not_taken is None:
            revisions.append(task)
    if not revisions:
        return None
    solutions = recorded_solutions(RunDir(run).audit_path)
    cells = []
    for stubbornness in STUBBORNNESS:
        must = may = taken = 0
        for task in revisions:
            weighing = weigh_points(task.critiques, shown, stubbornness)
            must += len(weighing.must_answer)
            may += len(weighing.may_weigh)
            before = next(
                (
                    s
                    for s in solutions.values()
                    if s.agent_id == task.agent_id and s.title == task.current.title
                ),
                None,
            )
            after = [
                s
                for s in solutions.values()
                if s.agent_id == task.agent_id
                and before is not None
                and s.round == before.round + 1
            ]
            if before is None or not after:
                continue
            peers = {s.agent_id: s for s in solutions.values() if s.round == before.round}
            hold = hold_unanswered(
                before,
                after[0],
                licence(before, after[0], weighing, peers, task.critiques),
                exclusive=task.exclusive,
            )
            taken += not hold.held
        cells.append(f"{must}/{may}/{taken}")
    return f"| {_label(run)} | {len(revisions)} | " + " | ".join(cells) + " |"


def _calls_row(run: Path) -> str:
    result = RunDir(run).read_result()
    kinds = Counter(c.kind.removeprefix("llm.") for c in calls(run))
    usage = result.usage
    if manifest(run).decision.intake is not None:
        kinds["intake"] = 1
    shown = ", ".join(f"{k} {v}" for k, v in sorted(kinds.items()))
    return (
        f"| {_label(run)} | {result.status} | {result.n_agents} | {sum(kinds.values())} "
        f"| {shown} | {usage.prompt_tokens:,} | {usage.completion_tokens:,} |"
    )


def _scoring_rows(rescore: Path) -> list[str]:
    """A batched run's judged sets against the same sets scored one solution per call
    (``rescore --score-mode per_solution`` through the same endpoint, recorded): per
    constraint and solution the two scores, and per set the means and verdicts."""
    report = RescoreReport.model_validate_json(RunDir(rescore).rescore_path.read_text("utf-8"))
    name = rescore.name.removesuffix("-per-solution")
    rows = []
    for index, judged in enumerate(report.sets):
        batched = {(x.constraint, x.solution_id): x.score for x in judged.before.scores}
        single = {(x.constraint, x.solution_id): x.score for x in judged.after.scores}
        gaps = [abs(batched[k] - single[k]) for k in batched if k in single]
        within = sum(g <= SCORE_TOLERANCE for g in gaps)
        rows.append(
            f"| {name} | {index + 1} | {len(gaps)} | {sum(gaps) / max(len(gaps), 1):.1f} | "
            f"{max(gaps, default=0)} | {within}/{len(gaps)} | "
            f"{judged.before.mean_score:.1f} / {judged.after.mean_score:.1f} | "
            f"{'vetoed' if judged.before.vetoed else 'passes'} / "
            f"{'vetoed' if judged.after.vetoed else 'passes'} |"
        )
    return rows


def _strategy_rows(sweep: Path) -> list[str]:
    """The deliberation and its baselines at equal compute on one problem: what each spent and
    what it concluded."""
    rows = []
    for run in sorted(sweep.iterdir()):
        if not (run / "result.json").is_file():
            continue
        result = RunDir(run).read_result()
        last = result.vetoes[-1] if result.vetoes else None
        head = result.conclusions[0].title if result.conclusions else "-"
        rows.append(
            f"| {run_name(run)} | {result.status} | {result.usage.calls} | "
            f"{result.usage.tokens:,} | {len(result.conclusions)} | "
            f"{f'{last.mean_score:.1f}' if last else '-'} | {head[:90]} |"
        )
    return rows


def _stubborn_rows(runs: list[Path]) -> list[str]:
    """Runs recorded again at another stubbornness from the same endpoint queue (the model's
    own revisions at that stubbornness: ``<run>-stubborn``), beside the run at the default."""
    by_name = {(version(r), run_name(r)): r for r in runs}
    rows = []
    for (v, name), run in sorted(by_name.items()):
        base = by_name.get((v, name.removesuffix("-stubborn")))
        if not name.endswith("-stubborn") or base is None:
            continue
        for r in (base, run):
            result, m = RunDir(r).read_result(), manifest(r)
            moved = [x.revision_magnitude for x in result.metrics if x.round >= 1]
            adopted = sum(x.adopted_points for x in result.metrics)
            head = result.conclusions[0].title if result.conclusions else "-"
            rows.append(
                f"| {_label(r)} | {m.calibrations.stubbornness} | "
                f"{sum(moved) / max(len(moved), 1):.2f} | {adopted} | {result.total_rounds} | "
                f"{len(result.conclusions)} | {head[:80]} |"
            )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    runs = recorded_runs()
    load = os.getloadavg()[0]
    lines = [
        "# Calibrations and calls on recorded capable-model runs",
        "",
        f"*{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} cores, load {load:.2f}; `python benchmarks/recorded_runs.py`; "
        f"{len(runs)} runs in tests/fixtures/recorded (zero model calls).*",
        "",
        "## Severity: set means (and vetoes) re-scored by the engine",
        "",
        f"Runs recorded with the prompts of {PROMPT_VERSION} only ({CURRENT_ONLY}: a re-score "
        "sends today's score requests, which older runs never answered).",
        "",
        "| run | set | feasibility | " + " | ".join(f"severity {s}" for s in SEVERITIES) + " |",
        "|---|---|---|" + "---|" * len(SEVERITIES),
    ]
    for run in _current(runs):
        lines += _severity_rows(run)
    lines += [
        "",
        "## Similarity threshold: distinct conclusions per recorded round (final generation)",
        "",
        "Rounds counted from 0 (the first proposals). The monitor halts at the first round at or "
        "after `min_rounds` (1 here) whose count is at most the sufficiency; 'halt 0' means the "
        "first proposals were already few enough, so the run stops after its one required round.",
        "",
        "| run | sufficiency | " + " | ".join(f"threshold {t}" for t in THRESHOLDS) + " |",
        "|---|---|" + "---|" * len(THRESHOLDS),
    ]
    lines += [_similarity_row(run) for run in runs]
    lines += [
        "",
        "## Stubbornness, the engine's side: points to answer / to weigh / revisions taken whole",
        "",
        "| run | revisions | " + " | ".join(f"stubbornness {s}" for s in STUBBORNNESS) + " |",
        "|---|---|" + "---|" * len(STUBBORNNESS),
    ]
    lines += [row for run in runs if (row := _stubbornness_row(run))]
    lines += [
        "",
        "## Stubbornness, the model's side: the same run recorded again at another value",
        "",
        "The same problem, seed and endpoint queue: every request identical to the first run's "
        "was answered from the queue, the revise calls (shown other lists) and what follows "
        "them are new replies.",
        "",
        "| run | stubbornness | revision magnitude (mean) | points adopted | rounds | "
        "conclusions | first conclusion |",
        "|---|---|---|---|---|---|---|",
    ]
    lines += _stubborn_rows(runs)
    lines += [
        "",
        "## Calls and tokens per deliberation (the model intake counted when it ran; tokens "
        "as the run's usage recorded them, intake excluded)",
        "",
        "| run | status | agents | calls | by task | prompt tokens | completion tokens |",
        "|---|---|---|---|---|---|---|",
    ]
    lines += [_calls_row(run) for run in runs]
    sweeps = sorted(RECORDED.glob("*/sweeps/*"))
    lines += [
        "",
        "## The deliberation against the vote and the single agent, at equal compute",
        "",
        "Each recorded sweep: one problem, the default calibrations, the deliberation and both "
        "baselines within its calls and tokens (docs/design/baselines-equal-compute.md).",
        "",
        "| run | status | calls | tokens | conclusions | final set mean | first conclusion |",
        "|---|---|---|---|---|---|---|",
    ]
    lines += [row for sweep in sweeps for row in _strategy_rows(sweep)]
    rescores = sorted(RECORDED.glob("*/rescores/*-per-solution"))
    lines += [
        "",
        "## Batched scoring against one solution per call",
        "",
        "A batched run's judged sets scored again one solution per call by the same model "
        "(`rescore --score-mode per_solution`, recorded); scores after the engine's "
        f"arithmetic at the run's severity; 'within' counts gaps of at most {SCORE_TOLERANCE} "
        "points (one step of the rubric is 25).",
        "",
        "| run | set | scores | mean gap | largest gap | within | set mean batched / single "
        "| verdict batched / single |",
        "|---|---|---|---|---|---|---|---|",
    ]
    lines += [row for rescore in rescores for row in _scoring_rows(rescore)]
    if not rescores:
        lines.append("| (no per-solution rescore recorded) | | | | | | | |")
    text = "\n".join(lines) + "\n"
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
