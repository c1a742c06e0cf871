"""The run report as Markdown (terminals and version control): the HTML report's content, from
the same `RunReport`, as plain Markdown without HTML."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from hivemind_lab.reports.evidence import RunEvidence
from hivemind_lab.reports.summary import Plan, RunReport, plural, summarise

_MARKUP = re.compile(r"([\\`*_\[\]<>|#~])")


def md(text: object) -> str:
    """Client and model text as literal Markdown: one line, every markup character escaped, so
    a question holding "<b>", "*" or "[x](y)" reads as typed instead of changing the report."""
    return _MARKUP.sub(r"\\\1", " ".join(str(text).split()))


def _scores(plan: Plan, feasibility: int, *, concerns: bool = False) -> list[str]:
    """A plan's scores with their reasons; with ``concerns``, each score's concerns too (the
    summary points to them, as the HTML does)."""
    # The review lists only the concerns: the reasons stand in the summary's table already.
    lines = [f"| constraint | score | {'concerns' if concerns else 'reason'} |", "|---|---:|---|"]
    for s in plan.scores:
        flag = f" ⚠ at or below {feasibility}" if s.below else ""
        vetoes = "".join(f"**{md(v)}.** " for v in s.vetoes)
        if concerns:
            said = md("; ".join(s.concerns)) if s.concerns else "none"
        else:
            pointer = " (concerns under Feasibility review)" if s.concerns else ""
            said = md(s.reason or "no reason given") + pointer
        lines.append(f"| {md(s.constraint)}{flag} | {s.score} | {vetoes}{said} |")
    return [*lines, ""]


def _bullets(items: list[str]) -> list[str]:
    return [*(f"- {md(x)}" for x in items), ""]


def report_markdown(r: RunReport) -> str:
    """A `RunReport` as Markdown."""
    lines = [f"# {md(r.title)}", ""]
    for banner in r.banners:
        lines += [f"> **{md(banner.text)}**", ""]
    lines += [f"**Question.** {md(r.question)}", "", "## The decision", ""]
    lines += [f"{k}. {md(o.text)} ({md(o.source)})" for k, o in enumerate(r.decision.options, 1)]
    lines += ["", md(r.decision.kind), ""]
    if r.decision.warning:
        lines += [f"**Warning.** {md(r.decision.warning)}", ""]
    if r.decision.constraints:
        names = ", ".join(md(n) + (f" ({md(f)})" if f else "") for n, f in r.decision.constraints)
        lines += [
            f"Each plan is judged against these constraints: {names}. A set of plans whose mean "
            f"score is at or below the client's feasibility ({r.feasibility}) is vetoed.",
            "",
        ]
    lines += ["## Summary", "", f"**{md(r.status_label)}.** {md(r.happened)}", ""]
    rec = r.recommendation
    if rec is not None:
        lines += [
            f"**{md(rec.title)}**",
            "",
            f"{md(r.support)} Mean feasibility score {rec.mean} against the client's "
            f"{r.feasibility}.",
            "",
            *(f"{k}. {md(step)}" for k, step in enumerate(rec.recommendations, 1)),
            "",
        ]
        if r.why:
            lines += ["### Why", "", *_bullets(r.why)]
        lines += ["### Risks: each constraint's score and reason", "", *_scores(rec, r.feasibility)]
    else:
        lines += ["**No recommendation.**", ""]
        c = r.closest
        if c is not None:
            by = f", proposed by {c.plan.agents} agents" if c.plan.agents > 1 else ""
            lines += [
                f"Closest to passing: the plans of attempt {c.attempt} averaged {c.set_mean} "
                f"against the client's feasibility {r.feasibility}. Their best plan{by}: "
                f"**{md(c.plan.title)}** (mean {c.plan.mean}).",
                "",
                *_scores(c.plan, r.feasibility),
            ]
        else:
            lines += ["No set of plans reached the practicality review.", ""]
    if r.change:
        lines += ["### What would change the answer", "", *_bullets(r.change)]
    if r.minority or r.objections:
        lines += ["## Other views", ""]
        lines += [
            f"- {md(m.title)} ({md(m.support)}; mean feasibility score {m.mean})"
            for m in r.minority
        ]
        lines += [
            f"- A critic objected: {md(x.claim)} (evidence: {md(x.source)})" for x in r.objections
        ]
        lines += [""]
    if r.sources:
        lines += ["## Sources the recommendation cites", "", *_bullets(r.sources)]
    reviewed = rec if rec is not None else (r.closest.plan if r.closest else None)
    if reviewed is not None and any(s.concerns for s in reviewed.scores):
        lines += [
            "## Feasibility review: the concerns behind each score",
            "",
            *_scores(reviewed, r.feasibility, concerns=True),
        ]
    if r.any_veto:
        lines += ["## Vetoed attempts", ""]
        for a in r.attempts:
            if not a.vetoed:
                continue
            lines += [
                f"### Attempt {a.number}: vetoed, mean {a.set_mean} (feasibility {r.feasibility})",
                "",
            ]
            for p in a.plans:
                low = sorted(p.scores, key=lambda s: s.score)[:2]
                lowest = ", ".join(
                    f"{md(s.constraint)} {s.score}"
                    + (f" ({md('; '.join(s.vetoes))})" if s.vetoes else "")
                    for s in low
                )
                lines += [
                    f"- {md(p.title)} — {plural(p.agents, 'agent')}, mean {p.mean}; lowest: {lowest}"
                ]
            lines += [""]
    lines += ["## Appendix: research settings and audit", ""]
    lines += [f"- {md(name)}: {md(value)}" for name, value in r.settings]
    lines += [""]
    if r.agent_notes:
        lines += ["### The agents' own justifications, for auditors", ""]
        lines += [f"- {md(n.agent)} for “{md(n.conclusion)}”: {md(n.text)}" for n in r.agent_notes]
        lines += [""]
    lines += [
        md(r.audit_line),
        "",
        f"Head of the verified chain `{r.audit_head}`, checked "
        f"{datetime.now(UTC).isoformat(timespec='seconds')}.",
        "",
    ]
    return "\n".join(lines)


def render_run_markdown(evidence: RunEvidence) -> str:
    """The report of one run as Markdown."""
    return report_markdown(summarise(evidence))
