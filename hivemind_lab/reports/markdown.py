"""The run report as Markdown (terminals and version control), in the HTML report's order."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from hivemind_lab.reports.evidence import OFFLINE_NOTICE, RunEvidence
from hivemind_lab.reports.run_html import (
    STATUS_WORDS,
    decision_line,
    headline,
    options_line,
    share,
)

_MARKUP = re.compile(r"([\\`*_\[\]<>|#~])")


def md(text: object) -> str:
    """Client and model text as literal Markdown: one line, every markup character escaped, so
    a question holding "<b>", "*" or "[x](y)" reads as typed instead of changing the report."""
    return _MARKUP.sub(r"\\\1", " ".join(str(text).split()))


def _bold_label(line: str) -> str:
    """``Label: text`` as ``**Label.** text``, the text escaped."""
    label, _, text = line.partition(": ")
    return f"**{md(label)}.** {md(text)}"


def render_run_markdown(evidence: RunEvidence) -> str:
    """The report of one run as Markdown."""
    req, cal, r, a = evidence.request, evidence.calibrations, evidence.result, evidence.audit
    threshold = evidence.feasibility
    lines = [f"# {md(evidence.title)}", ""]
    if not a.ok:
        lines += [
            f"> **AUDIT VERIFICATION FAILED at record {a.first_bad} of {a.total}** ({a.reason}). "
            "This report was forced: do not rely on it.",
            "",
        ]
    if evidence.offline:
        lines += [f"> **{OFFLINE_NOTICE}**", ""]
    lines += [
        f"**Question.** {md(req['problem'])}",
        "",
        _bold_label(options_line(req)),
        "",
        f"**Inputs.** sufficiency {req['sufficiency']} · feasibility {req['feasibility']} · "
        f"density {req['density']} tokens · profile {req['profile']}",
        "",
        *([_bold_label(decision_line(req)), ""] if req.get("options") else []),
        f"**Calibrations.** stubbornness {cal['stubbornness']} · similarity threshold "
        f"{cal['similarity_threshold']} · severity {cal['severity']}",
        "",
        f"**Model.** {evidence.model_label()}",
        "",
        "## Recommendation",
        "",
        f"*{STATUS_WORDS[r.status]}.*",
        "",
    ]
    if r.conclusions:
        top = r.conclusions[0]
        lines += [
            f"**{md(headline(top))}**",
            "",
            f"Supported by {share(evidence, top)}; mean feasibility {top.mean_score:.1f} against "
            f"the client's {threshold}.",
            "",
            f"*Why.* {md(top.combined_rationale)}",
            "",
            *[f"{k}. {md(rec)}" for k, rec in enumerate(top.recommendations, start=1)],
            "",
            f"*Feasibility* (severity {cal['severity']}): "
            + " · ".join(
                f"{c} {s:.0f}" + (" ⚠ at or below feasibility" if s <= threshold else "")
                for c, s in top.scores.items()
            ),
            "",
            "*Sources.* " + ("; ".join(md(c) for c in evidence.cited(top)) or "none cited"),
            "",
            "## Dissent",
            "",
        ]
        for c in r.conclusions[1:]:
            lines += [f"- minority: **{md(headline(c))}** — {share(evidence, c)}"]
        for x in evidence.contradictions(top):
            lines += [
                f"- {md(x.critic)} contradicts {md(x.target)}: {md(x.claim)} "
                f"(evidence: {md(x.source)})"
            ]
        lines += ["", "## Why: justifications", ""]
        for c in r.conclusions:
            for j in c.justifications:
                text = evidence.justification_text(c, j.solution_id, j.rationale)
                lines += [f"- conclusion {c.rank}, {md(j.agent_id)}: {md(text)}"]
        lines += [""]
    else:
        lines += ["No recommendation: no plan cleared the practicality network.", ""]
    lines += ["## Vetoes", ""]
    for gen in evidence.generations():
        v = gen.verdict
        lines += [
            f"### Generation {v.regeneration}: {'vetoed' if v.vetoed else 'passed'} "
            f"(mean {v.mean_score:.1f} against feasibility {v.feasibility})",
            "",
        ]
        for s in gen.solutions:
            sunk = ", ".join(f"{c} {s.scores[c]}" for c in s.sunk_by(threshold)) or "none"
            flags = "; ".join(f"{c}: {', '.join(f)}" for c, f in sorted(s.flags.items()))
            flags = md(flags)
            lines += [
                f"- {md(s.title)} — mean {s.mean:.1f}; at or below feasibility: {sunk}"
                + (f"; red flags: {flags}" if flags else "")
            ]
        lines += [""]
    state = (
        f"intact: all {a.total} records verified"
        if a.ok
        else f"FAILED at record {a.first_bad} of {a.total}: {a.reason}"
    )
    lines += [
        "## Outcome and cost",
        "",
        f"{r.status} · {r.n_agents} theory agents · {r.rounds} round(s) in the final generation "
        f"({r.total_rounds} in all) · {r.regenerations} regeneration(s) · {r.usage.calls} model "
        f"calls · {r.usage.tokens:,} tokens · {evidence.cost_label()}",
        "",
        "## Audit",
        "",
        f"Audit trail {state}; head `{a.head}`, verified at "
        f"{datetime.now(UTC).isoformat(timespec='seconds')}.",
        "",
    ]
    return "\n".join(lines)
