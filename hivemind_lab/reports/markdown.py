"""The run report as Markdown (terminals and version control): the HTML report's content, from
the same `RunReport`, as plain Markdown without HTML."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from hivemind_lab.reports.evidence import RunEvidence
from hivemind_lab.reports.models import said_of
from hivemind_lab.reports.summary import (
    BODY_CONCERNS,
    Plan,
    ReviewLine,
    RunReport,
    plural,
    summarise,
)

_MARKUP = re.compile(r"([\\`*_\[\]<>|#~])")


def md(text: object) -> str:
    """Client and model text as literal Markdown: one line, every markup character escaped, so
    a question holding "<b>", "*" or "[x](y)" reads as typed instead of changing the report."""
    return _MARKUP.sub(r"\\\1", " ".join(str(text).split()))


def said(text: str) -> str:
    """An agent's own words, quoted: the report never says them in its own voice."""
    return f"“{md(text)}”"


def _scores(plan: Plan, feasibility: int) -> list[str]:
    """A plan's scores with the reason each constraint agent gave (the concerns are listed
    once under Feasibility review, as the HTML does)."""
    lines = ["| constraint | score | reason its agent gave |", "|---|---:|---|"]
    for s in plan.scores:
        flag = "⚠ " if s.below else ""
        vetoes = "".join(f"**{md(v)}.** " for v in s.vetoes)
        pointer = f" ({md(s.tally)}: see Feasibility review)" if s.tally else ""
        reason = said(s.reason) if s.reason else "no reason given"
        lines.append(f"| {md(s.constraint)} | {flag}{s.score} | {vetoes}{reason}{pointer} |")
    if any(s.below for s in plan.scores):
        lines += ["", f"⚠ at or below the client's feasibility ({feasibility})."]
    return [*lines, ""]


def _concern(c: ReviewLine) -> str:
    """One concern of the feasibility review, with the constraints that raised it."""
    return f"- {md(c.about)}, raised by {md(', '.join(c.constraints))}: {said(c.text)}"


def _bullets(items: list[str]) -> list[str]:
    return [*(f"- {md(x)}" for x in items), ""]


def report_markdown(r: RunReport) -> str:
    """A `RunReport` as Markdown."""
    lines = [f"# {md(r.title)}", ""]
    for banner in r.banners:
        lines += [f"> **{md(banner.text)}**", ""]
    if r.question:
        lines += [f"**Question.** {md(' '.join(r.question.split()))}", ""]
    lines += ["## The decision", ""]
    lines += [f"- {o.letter}. {md(o.text)} ({md(o.source)})" for o in r.decision.options]
    lines += ["", md(r.decision.kind), ""]
    if r.decision.warning:
        lines += [f"**Warning.** {md(r.decision.warning)}", ""]
    if r.decision.constraints:
        lines += ["Each plan is judged against the client's constraints:", ""]
        lines += [
            f"{n}. {md(text)}" + (f" ({md(bars)})" if bars else "")
            for n, (text, bars) in enumerate(r.decision.constraints, 1)
        ]
        lines += [
            "",
            f"A set of plans whose mean score is at or below the client's feasibility "
            f"({r.feasibility}) is vetoed.",
            "",
        ]
    lines += ["## Summary", "", f"**{md(r.status_label)}.** {md(r.happened)}", ""]
    rec = r.recommendation
    if rec is not None:
        lines += [
            f"**{said(rec.title) if rec.quoted else md(rec.title)}**",
            "",
            f"{md(r.support)} This plan's constraint scores average {rec.mean} against the client's "
            f"{r.feasibility}.",
            "",
            "The plan in its backers' words:",
            "",
            *(f"{k}. {said(step)}" for k, step in enumerate(rec.recommendations, 1)),
            "",
        ]
        if r.why or r.rationale:
            lines += ["### Why", ""]
            if r.rationale:
                lines += [
                    f"The backers' reasons, as the monitor drew them together: {said(r.rationale)}",
                    "",
                ]
            lines += _bullets(r.why) if r.why else []
        lines += ["### Risks: each constraint's score and reason", "", *_scores(rec, r.feasibility)]
    else:
        lines += ["**No recommendation.**", ""]
        c, u = r.closest, r.unbacked
        if u is not None:
            lines += [
                "For the record, the plan with the most support, which cites no evidence from "
                f"the knowledge base (mean feasibility score {u.mean}): {said(u.title)}",
                "",
                md(r.support),
                "",
            ]
            if u.recommendations:
                lines += [
                    *(f"{k}. {said(step)}" for k, step in enumerate(u.recommendations, 1)),
                    "",
                ]
        elif c is not None:
            by = f", proposed by {c.plan.agents} agents" if c.plan.agents > 1 else ""
            lead = (
                f"The plans of attempt {c.attempt} passed the practicality review (mean "
                f"{c.set_mean} against the client's feasibility {r.feasibility}), but the run "
                "stopped before it concluded. Their best plan"
                if c.passed
                else f"Closest to passing: the plans of attempt {c.attempt} averaged "
                f"{c.set_mean} against the client's feasibility {r.feasibility}. Their best plan"
            )
            lines += [
                f"{lead}{by}: "
                f"{said(c.plan.title) if c.plan.quoted else '**' + md(c.plan.title) + '**'} "
                f"(mean {c.plan.mean}).",
                "",
                *_scores(c.plan, r.feasibility),
            ]
        else:
            lines += ["No set of plans reached the practicality review.", ""]
    if r.change:
        lines += ["### What would change the answer", "", *_bullets(r.change)]
    if r.minority or r.objections:
        lines += ["## Other views", ""]
        for m in r.minority:
            lines.append(
                f"- {said(m.title) if m.quoted else md(m.title)}"
                f"{': ' + md(m.differs) if m.differs else ''} ({md(m.support)}; mean "
                f"feasibility score {m.mean})" + (". Its plan:" if m.steps else "")
            )
            lines += [f"  {k}. {said(step)}" for k, step in enumerate(m.steps, 1)]
        lines += [
            "- An objection that still stands"
            + (
                f" against {md(x.about)}"
                if x.about
                else f" about “{md(x.option)}”"
                if x.option
                else ""
            )
            + f", citing {md(x.source)}. The critic wrote: {said(x.claim)}"
            for x in r.objections
        ]
        lines += [""]
    if r.sources:
        lines += ["## Sources the recommendation cites", "", *_bullets(r.sources)]
    grave = [c for c in r.review if c.in_body]
    minor = [c for c in r.review if not c.in_body]
    if grave or minor:
        lines += ["## Feasibility review: the concerns behind the scores", ""]
        lines += [_concern(c) for c in grave]
        if minor:
            lines += [
                f"- {len(minor)} further concerns (minor, answered, or beyond the "
                f"{BODY_CONCERNS} gravest) are listed in the appendix."
            ]
        lines += [""]
    if r.any_veto:
        lines += ["## Vetoed attempts", ""]
        for a in r.attempts:
            if not a.vetoed:
                continue
            lines += [
                f"### Attempt {a.number}: vetoed, mean {a.set_mean} (feasibility {r.feasibility})"
                + ("; every plan breaches a binding constraint" if a.why == "breach" else ""),
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
                    f"- {said(p.title) if p.quoted else md(p.title)} — {plural(p.agents, 'agent')}, mean {p.mean}; lowest: {lowest}"
                ]
            lines += [""]
    lines += ["## Appendix: research settings and audit", ""]
    lines += [f"- {md(name)}: {md(value)}" for name, value in r.settings]
    lines += [""]
    if minor:
        lines += ["### Further concerns on the plan", ""]
        lines += [_concern(c) for c in minor]
        lines += [""]
    if r.models:
        lines += ["### The models behind the agents", ""]
        for line in r.models:
            lines += [f"- **{md(line.model)}**"]
            lines += [f"  - {what}: {md(value)}" for what, value in said_of(line)]
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
