"""Executive reports: a self-contained HTML page per run (plotly embedded, works offline), a
Markdown twin, and a sweep report comparing calibrations and strategies."""

from __future__ import annotations

import html
import shutil
import subprocess
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import jinja2
import plotly.graph_objects as go

from hivemind_lab import plots
from hivemind_lab.audit.log import verify_log
from hivemind_lab.deliberation import load_result, read_manifest
from hivemind_lab.errors import InputError
from hivemind_lab.results import DeliberationResult

_ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("hivemind_lab", "templates"),
    autoescape=jinja2.select_autoescape(["html", "j2"]),
)


@dataclass(frozen=True)
class Block:
    heading: str
    html: str


def _figures(figs: list[go.Figure], first: bool) -> str:
    parts = []
    for i, fig in enumerate(figs):
        parts.append(
            fig.to_html(
                full_html=False,
                include_plotlyjs="inline" if first and i == 0 else False,
                config={"displaylogo": False, "responsive": True},
            )
        )
    return "\n".join(parts)


def _one_line(text: str, limit: int = 400) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _audit_stamp(run_dir: Path) -> str:
    check = verify_log(run_dir / "audit.jsonl")
    state = (
        '<span class="ok">intact</span>'
        if check.ok
        else (
            f'<span class="bad">FAILED at record {check.first_bad}: {html.escape(check.reason or "")}</span>'
        )
    )
    stamp = datetime.now(UTC).isoformat(timespec="seconds")
    return (
        f"<p>Audit trail {state}: {check.records} records, verified at {stamp}.</p>"
        f'<p class="stamp">head {check.head}</p>'
    )


def _conclusions(result: DeliberationResult, severity: float) -> str:
    if not result.conclusions:
        return "<p>No conclusion cleared the practicality network.</p>"
    out = []
    for c in result.conclusions:
        recs = "".join(f"<li>{html.escape(r)}</li>" for r in c.recommendations)
        scores = "".join(f"<td>{html.escape(k)}</td><td>{v:.0f}</td>" for k, v in c.scores.items())
        justs = "".join(
            f'<div class="just"><b>{html.escape(j.agent_id)}</b>: {html.escape(_one_line(j.rationale, 600))}</div>'
            for j in c.justifications
        )
        out.append(
            f'<div class="conclusion"><h3>{c.rank}. {html.escape(c.title)}</h3><ul>{recs}</ul>'
            f'<p class="meta">{html.escape(c.combined_rationale)}</p>'
            f'<table><tr><th colspan="{2 * len(c.scores)}">feasibility (severity {severity})</th></tr>'
            f'<tr>{scores}</tr></table><p class="meta">mean {c.mean_score:.1f}</p>'
            f"<details><summary>Justifications side by side ({len(c.justifications)})</summary>"
            f'<div class="grid">{justs}</div></details></div>'
        )
    return "\n".join(out)


def _dissent(result: DeliberationResult) -> str:
    rows = "".join(
        f"<tr><td>{v.regeneration}</td><td>{v.mean_score:.1f}</td><td>{v.feasibility}</td>"
        f"<td>{'vetoed' if v.vetoed else 'passed'}</td><td>{len({s.solution_id for s in v.scores})}</td></tr>"
        for v in result.vetoes
    )
    last = result.monitor[-1] if result.monitor else None
    minority = ""
    if last is not None and len(last.clusters) > 1:
        minority = (
            f"<p>{len(last.clusters)} clusters remained at the end; "
            + ", ".join(f"{len(c.agent_ids)} agent(s) in cluster {c.index}" for c in last.clusters)
            + ".</p>"
        )
    return (
        f"<table><tr><th>generation</th><th>mean score</th><th>threshold</th><th>verdict</th>"
        f"<th>solutions scored</th></tr>{rows}</table>{minority}"
    )


def render_html(run_dir: str | Path) -> str:
    """The executive HTML report of one run."""
    run_dir = Path(run_dir)
    result, manifest = load_result(run_dir), read_manifest(run_dir)
    req, cal = manifest["request"], manifest["calibrations"]
    header = [
        f"Question: {_one_line(req['problem'], 300)}",
        f"Inputs: sufficiency {req['sufficiency']} · feasibility {req['feasibility']} · density "
        f"{req['density']} tokens · profile {req['profile']}",
        f"Calibrations: stubbornness {cal['stubbornness']} · similarity threshold "
        f"{cal['similarity_threshold']} · severity {cal['severity']}",
    ]
    outcome = (
        f'<p><span class="status {result.status}">{result.status}</span> · {result.n_agents} theory agents · '
        f"{result.rounds} round(s) in the final generation ({result.total_rounds} in all) · "
        f'{result.regenerations} regeneration(s)</p><p class="meta">{result.usage.calls} model calls · '
        f"{result.usage.tokens:,} tokens · ${result.usage.cost_usd:.4f} · backend "
        f"{html.escape(manifest['backend'])}/{html.escape(manifest['model'])} · {result.wall_time_s:.1f} s</p>"
    )
    blocks = [
        Block("Outcome", outcome),
        Block("Recommended conclusions", _conclusions(result, cal["severity"])),
        Block(
            "Feasibility and vetoes",
            _figures(
                [plots.feasibility_by_constraint(result), plots.veto_history(result)], first=True
            ),
        ),
        Block("Dissent and veto history", _dissent(result)),
        Block("Rounds", _figures([plots.convergence(result)], first=False)),
        Block("Audit", _audit_stamp(run_dir)),
    ]
    return _ENV.get_template("report.html.j2").render(
        title=f"Deliberation report: {req['problem_id']}", header_lines=header, blocks=blocks
    )


def render_sweep_html(root: str | Path) -> str:
    """A report comparing the calibrations and strategies of a sweep."""
    from hivemind_lab.experiments import load
    from hivemind_lab.experiments.compare import compare, format_interval

    runs = load(root)
    if runs.is_empty():
        raise InputError("run_dir", f"{str(root)!r} holds no finished runs")
    delib = runs.filter(runs["strategy"] == "deliberation")
    figs = [
        plots.heatmap(delib, "total_rounds", title="Rounds to halt (stubbornness × severity)"),
        plots.heatmap(delib, "vetoes", title="Vetoes (stubbornness × severity)"),
        plots.line_by(
            delib,
            "similarity_threshold",
            "initial_conclusions",
            title="Distinct conclusions against the similarity threshold (round 0)",
        ),
    ]
    table = compare(runs)
    rows = "".join(
        f"<tr><td>{r['strategy']}</td><td>{r['runs']}</td>"
        + "".join(
            f"<td>{format_interval(r[f'{m}_mean'], r[f'{m}_ci95'], r[f'{m}_n'], digits=d)}</td>"
            for m, d in (("mean_feasibility", 1), ("vetoes", 2), ("run_calls", 0))
        )
        + "</tr>"
        for r in table.iter_rows(named=True)
    )
    blocks = [
        Block("Calibrations", _figures(figs, first=True)),
        Block(
            "Deliberation against baselines at equal compute",
            "<table><tr><th>strategy</th><th>runs</th><th>feasibility</th><th>vetoes</th><th>calls</th></tr>"
            f"{rows}</table>"
            + _figures([plots.strategy_bars(table, "mean_feasibility")], first=False),
        ),
    ]
    name = Path(root).name
    return _ENV.get_template("report.html.j2").render(
        title=f"Sweep report: {name}", header_lines=[f"{runs.height} runs"], blocks=blocks
    )


def render_markdown(run_dir: str | Path) -> str:
    """The report as Markdown (for terminals and version control)."""
    run_dir = Path(run_dir)
    result, manifest = load_result(run_dir), read_manifest(run_dir)
    req, cal = manifest["request"], manifest["calibrations"]
    check = verify_log(run_dir / "audit.jsonl")
    lines = [
        f"# Deliberation report: {req['problem_id']}",
        "",
        f"**Question.** {_one_line(req['problem'], 2000)}",
        "",
        f"**Inputs.** sufficiency {req['sufficiency']} · feasibility {req['feasibility']} · "
        f"density {req['density']} tokens · profile {req['profile']}",
        "",
        f"**Calibrations.** stubbornness {cal['stubbornness']} · similarity threshold "
        f"{cal['similarity_threshold']} · severity {cal['severity']}",
        "",
        f"**Outcome.** {result.status} · {result.n_agents} theory agents · {result.rounds} round(s) "
        f"in the final generation ({result.total_rounds} in all) · {result.regenerations} regeneration(s) · "
        f"{result.usage.calls} model calls · {result.usage.tokens:,} tokens · ${result.usage.cost_usd:.4f}",
        "",
        "## Recommended conclusions",
        "",
    ]
    if not result.conclusions:
        lines += ["No conclusion cleared the practicality network.", ""]
    for c in result.conclusions:
        lines += [
            f"### {c.rank}. {c.title}",
            "",
            *[f"- {r}" for r in c.recommendations],
            "",
            f"*Rationale.* {c.combined_rationale}",
            "",
        ]
        if c.scores:
            lines += [
                f"*Feasibility* (severity {cal['severity']}): "
                + " · ".join(f"{k} {v:.0f}" for k, v in c.scores.items())
                + f" — mean {c.mean_score:.1f}",
                "",
            ]
    lines += ["## Vetoes and dissent", ""]
    lines += [
        f"- generation {v.regeneration}: mean feasibility {v.mean_score:.1f} vs threshold "
        f"{v.feasibility} → {'VETOED' if v.vetoed else 'passed'}"
        for v in result.vetoes
    ]
    state = "intact" if check.ok else f"FAILED at record {check.first_bad}: {check.reason}"
    lines += [
        "",
        "## Audit",
        "",
        f"Audit trail {state}: {check.records} records, head `{check.head}`, "
        f"verified at {datetime.now(UTC).isoformat(timespec='seconds')}.",
        "",
    ]
    return "\n".join(lines)


def write_report(target: str | Path, out: str | Path | None = None, *, pdf: bool = False) -> Path:
    """Write the HTML report of a run (or a sweep folder); optionally print it to PDF too."""
    target = Path(target)
    if (target / "result.json").exists():
        text = render_html(target)
        default = target / "report.html"
        (target / "report.md").write_text(render_markdown(target), encoding="utf-8")
    elif target.is_dir():
        text = render_sweep_html(target)
        default = target / "report.html"
    else:
        raise InputError("run_dir", f"{str(target)!r} is neither a run nor a sweep folder")
    path = Path(out) if out else default
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    if pdf:
        print_pdf(path, path.with_suffix(".pdf"))
    return path


def chromium() -> str:
    """The headless browser used for PDF export and page tests."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    raise InputError("pdf", "no Chromium found", allowed="install Debian's chromium (make browser)")


def print_pdf(html_path: Path, pdf_path: Path) -> Path:
    """Print a report to PDF with headless Chromium."""
    subprocess.run(
        [
            chromium(),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--no-first-run",
            f"--print-to-pdf={pdf_path}",
            "--no-pdf-header-footer",
            html_path.resolve().as_uri(),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    return pdf_path
