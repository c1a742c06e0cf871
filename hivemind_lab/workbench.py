"""Helpers the notebooks share (so notebooks stay thin and never define primitives)."""

from __future__ import annotations

import html
import tempfile
from pathlib import Path

import polars as pl

from hivemind_lab.agents.policy import OfflineAgentModel
from hivemind_lab.deliberation import deliberate
from hivemind_lab.inputs import Calibrations, Limits, request_for
from hivemind_lab.problems import Problem, load_problems
from hivemind_lab.runs.results import DeliberationResult
from hivemind_lab.samples import PROJECT


def project_root(start: Path | None = None) -> Path:
    """The folder holding ``data/`` (notebooks run from notebooks/, scripts from the root): the
    first above ``start`` (the current folder), else the project's own copy, as the CLI does."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents, PROJECT):
        if (folder / "data" / "knowledge").is_dir():
            return folder
    raise FileNotFoundError(
        f"no data/knowledge folder above {str(here)!r} nor in the project ({str(PROJECT)!r})"
    )


def problems(root: Path | None = None) -> dict[str, Problem]:
    """The sample problems by id."""
    return {p.id: p for p in load_problems((root or project_root()) / "data" / "problems")}


def run_deliberation(
    problem: Problem,
    *,
    sufficiency: int,
    feasibility: int,
    density: int,
    calibrations: Calibrations,
    limits: Limits | None = None,
    seed: int = 0,
    run_dir: Path | None = None,
    root: Path | None = None,
) -> tuple[Path, DeliberationResult]:
    """One offline deliberation into ``run_dir`` (a fresh temporary folder by default)."""
    root = root or project_root()
    run_dir = run_dir or Path(tempfile.mkdtemp(prefix="hivemind-")) / "run"
    request = request_for(
        problem, sufficiency=sufficiency, feasibility=feasibility, density=density
    )
    result = deliberate(
        request,
        calibrations,
        limits or Limits(),
        model=OfflineAgentModel(),
        run_dir=run_dir,
        seed=seed,
        knowledge_base=root / "data" / "knowledge",
        practicality_kb=root / "data" / "practicality",
    )
    return run_dir, result


def conclusions_frame(result: DeliberationResult) -> pl.DataFrame:
    """Conclusions as a table: rank, title, the model's combined rationale, agents, mean
    feasibility and one column per constraint (the justifications: `justifications_frame`)."""
    rows = [
        {
            "rank": c.rank,
            "conclusion": c.title,
            "why": c.combined_rationale,
            "agents": len(c.agents),
            "mean_feasibility": c.mean_score,
            **c.scores,
        }
        for c in result.conclusions
    ]
    return pl.DataFrame(rows) if rows else pl.DataFrame({"rank": [], "conclusion": []})


def justifications_frame(result: DeliberationResult, run_dir: Path | None = None) -> pl.DataFrame:
    """Each conclusion's justifications side by side (one row per member agent); with the run
    folder, citations read as document titles, authors and years, as in the report."""
    from hivemind_lab.reports.evidence import gather

    evidence = gather(run_dir) if run_dir is not None else None
    rows = []
    for c in result.conclusions:
        for j in c.justifications:
            sources = dict.fromkeys(evidence.source(x) for x in j.citations) if evidence else {}
            rows.append(
                {
                    "rank": c.rank,
                    "agent": j.agent_id,
                    "rationale": (
                        evidence.justification_text(c, j.solution_id, j.rationale)
                        if evidence
                        else j.rationale
                    ),
                    "citations": "; ".join(sources) if evidence else ", ".join(j.citations),
                }
            )
    return pl.DataFrame(
        rows or [{"rank": None, "agent": None, "rationale": None, "citations": None}]
    )


def table_html(frame: pl.DataFrame) -> str:
    """A frame as an HTML table with every text in full (notebook tables cut at 30 characters)."""
    head = "".join(f"<th>{html.escape(c)}</th>" for c in frame.columns)
    rows = "".join(
        "<tr>"
        + "".join(
            f'<td style="text-align:left;vertical-align:top">{html.escape(_cell(v))}</td>'
            for v in row
        )
        + "</tr>"
        for row in frame.iter_rows()
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"


def _cell(value: object) -> str:
    if value is None:
        return ""
    return f"{value:.1f}" if isinstance(value, float) else str(value)


def cached_sweep(root: Path | None = None, name: str = "grocer-calibration") -> pl.DataFrame:
    """The results of ``experiments/<name>.toml``, running whatever points are not finished yet
    or whose runs are stale (made by other prompts, model code, problem text or knowledge)."""
    from hivemind_lab.experiments import load, load_spec, run

    root = root or project_root()
    spec = load_spec(root / "experiments" / f"{name}.toml")
    report = run(spec, project=root)
    return load(report.root)
