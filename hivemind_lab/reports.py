"""Executive reports of a finished run (Markdown; rendered from result, manifest and audit)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from hivemind_lab.audit.log import verify_log
from hivemind_lab.deliberation import load_result, read_manifest


def render_markdown(run_dir: str | Path) -> str:
    """The report text for a run directory."""
    run_dir = Path(run_dir)
    result = load_result(run_dir)
    manifest = read_manifest(run_dir)
    req, cal = manifest["request"], manifest["calibrations"]
    check = verify_log(run_dir / "audit.jsonl")
    lines = [
        f"# Deliberation report: {req['problem_id']}",
        "",
        f"**Question.** {' '.join(req['problem'].split())}",
        "",
        f"**Inputs.** sufficiency {req['sufficiency']} · feasibility {req['feasibility']} · "
        f"density {req['density']} tokens · profile {req['profile']}",
        "",
        f"**Calibrations.** stubbornness {cal['stubbornness']} · similarity threshold "
        f"{cal['similarity_threshold']} · severity {cal['severity']}",
        "",
        f"**Outcome.** {result.status} · {result.n_agents} theory agents · {result.rounds} round(s) "
        f"in the final generation ({result.total_rounds} in all) · {result.regenerations} "
        f"regeneration(s) · {result.usage.calls} model calls · {result.usage.tokens:,} tokens · "
        f"${result.usage.cost_usd:.4f} · backend {manifest['backend']}/{manifest['model']}",
        "",
        "## Recommended conclusions",
        "",
    ]
    if not result.conclusions:
        lines += ["No conclusion cleared the practicality network.", ""]
    for c in result.conclusions:
        lines += [f"### {c.rank}. {c.title}", ""]
        lines += [f"- {r}" for r in c.recommendations]
        lines += ["", f"*Rationale.* {c.combined_rationale}", ""]
        if c.scores:
            scored = " · ".join(f"{k} {v:.0f}" for k, v in c.scores.items())
            lines += [
                f"*Feasibility* (severity {cal['severity']}): {scored} — mean {c.mean_score:.1f}",
                "",
            ]
    lines += ["## Vetoes and dissent", ""]
    for v in result.vetoes:
        verdict = "VETOED" if v.vetoed else "passed"
        lines.append(
            f"- generation {v.regeneration}: mean feasibility {v.mean_score:.1f} vs threshold "
            f"{v.feasibility} → {verdict}"
        )
    lines += ["", "## Audit", ""]
    stamp = datetime.now(UTC).isoformat(timespec="seconds")
    state = "intact" if check.ok else f"FAILED at record {check.first_bad}: {check.reason}"
    lines += [
        f"Audit trail {state}: {check.records} records, head `{check.head}`, verified at {stamp}.",
        "",
    ]
    return "\n".join(lines)


def write_markdown_report(run_dir: str | Path, out: str | Path | None = None) -> Path:
    """Write ``report.md`` into the run directory (or ``out``) and return its path."""
    target = Path(out) if out else Path(run_dir) / "report.md"
    target.write_text(render_markdown(run_dir), encoding="utf-8")
    return target
