"""The executive HTML report of one run, from `hivemind_lab.reports.summary` through the
``run_report.html.j2`` template: the decision, a summary that stands on its own page, other
views, sources, vetoed attempts (only when there were any), figures, and an appendix."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

from hivemind_lab import plots
from hivemind_lab.reports.evidence import RunEvidence
from hivemind_lab.reports.models import said_of
from hivemind_lab.reports.page import figure_list, render
from hivemind_lab.reports.summary import BODY_CONCERNS, RunReport, summarise
from hivemind_lab.runs.results import DeliberationResult

if TYPE_CHECKING:
    import plotly.graph_objects as go


def report_figures(result: DeliberationResult) -> list[go.Figure]:
    """Only the charts that have something to show: scores once a set was judged, the verdict
    history once a set was vetoed, the rounds once there was more than one."""
    figs = []
    if result.vetoes:
        figs.append(plots.feasibility_by_constraint(result))
    if any(v.vetoed for v in result.vetoes) and len(result.vetoes) > 1:
        figs.append(plots.veto_history(result))
    if len(result.metrics) > 1:
        figs.append(plots.convergence(result))
    return figs


def render_run_html(
    evidence: RunEvidence, *, expand: bool = False, report: RunReport | None = None
) -> str:
    """The executive report of one run (``expand``: the printed variant, sections open and
    charts sized to the page)."""
    report = report or summarise(evidence)
    return render(
        "run_report.html.j2",
        title=evidence.title,
        banners=report.banners,
        r=report,
        figures=figure_list(report_figures(evidence.result), print_width=expand),
        expand=expand,
        body_concerns=BODY_CONCERNS,
        models=[(m.model, said_of(m)) for m in report.models],
        checked_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )
