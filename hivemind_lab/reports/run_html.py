"""The executive HTML report of one run: recommendation first, then dissent, reasons, vetoes,
figures, cost and the audit stamp."""

from __future__ import annotations

from datetime import UTC, datetime
from html import escape
from typing import Any

from hivemind_lab import plots
from hivemind_lab.reports.evidence import OFFLINE_NOTICE, Generation, RunEvidence
from hivemind_lab.reports.page import Banner, Block, figures, page
from hivemind_lab.runs.results import Conclusion

STATUS_WORDS = {
    "converged": "Converged: the agents agree and the practicality network passed the plan",
    "non_converged": "Did not converge: the agents still disagreed when the rounds ran out",
    "vetoed_out": "Vetoed out: every generation's plans failed the practicality network",
    "budget_exhausted": "Stopped early: the token or cost budget ran out",
}


def headline(conclusion: Conclusion) -> str:
    """The conclusion in plain words: its title, or its first recommendation when the title is
    a cut-off fragment."""
    title = conclusion.title.strip()
    if title.endswith(("…", "...")) and conclusion.recommendations:
        return conclusion.recommendations[0]
    return title


def share(evidence: RunEvidence, conclusion: Conclusion) -> str:
    n, total = len(conclusion.agents), evidence.result.n_agents
    return f"{n} of {total} theory agents ({100 * n / max(total, 1):.0f} %)"


def _feasibility_table(evidence: RunEvidence, conclusion: Conclusion) -> str:
    threshold = evidence.feasibility
    rows = []
    for constraint, score in conclusion.scores.items():
        below = score <= threshold
        verdict = (
            f'<span class="flag">⚠ at or below the client\'s feasibility {threshold}</span>'
            if below
            else "above feasibility"
        )
        rows.append(
            f'<tr class="{"below" if below else ""}"><td>{escape(constraint)}</td>'
            f"<td>{score:.0f}</td><td>{verdict}</td></tr>"
        )
    low = [c for c, s in conclusion.scores.items() if s <= threshold]
    note = ""
    if low and conclusion.mean_score > threshold:
        note = (
            f'<p class="flag">{len(low)} constraint(s) score at or below the client\'s feasibility '
            f"({threshold}) although the mean ({conclusion.mean_score:.1f}) passes: "
            + ", ".join(f"{escape(c)} {conclusion.scores[c]:.0f}" for c in low)
            + ".</p>"
        )
    severity = evidence.calibrations["severity"]
    return (
        f'<table class="feasibility"><tr><th>constraint</th><th>score</th>'
        f"<th>against feasibility {threshold} (severity {severity})</th></tr>"
        + "".join(rows)
        + f'</table><p class="meta">mean {conclusion.mean_score:.1f}</p>{note}'
    )


def _bullets(conclusion: Conclusion) -> str:
    return "<ol>" + "".join(f"<li>{escape(r)}</li>" for r in conclusion.recommendations) + "</ol>"


def _sources(evidence: RunEvidence, conclusion: Conclusion) -> str:
    cited = evidence.cited(conclusion)
    if not cited:
        return '<p class="meta">No sources cited.</p>'
    return (
        f'<p class="meta">Sources cited by its agents ({len(cited)}):</p><ul class="sources">'
        + "".join(f"<li>{escape(s)}</li>" for s in cited)
        + "</ul>"
    )


def _closest(evidence: RunEvidence) -> str:
    """For a run without a recommendation: what came closest to passing, and what sank it."""
    gens = [g for g in evidence.generations() if g.solutions]
    if not gens:
        return ""
    best_gen = max(gens, key=lambda g: g.verdict.mean_score)
    best = max((s for g in gens for s in g.solutions), key=lambda s: s.mean)
    sunk = best.sunk_by(evidence.feasibility)
    reasons = "; ".join(
        f"{escape(c)} {best.scores[c]}"
        + (f" (red flags: {escape(', '.join(best.flags[c]))})" if c in best.flags else "")
        for c in sunk
    )
    return (
        f"<p>Closest to passing: generation {best_gen.verdict.regeneration}, whose set scored "
        f"{best_gen.verdict.mean_score:.1f} against the client's feasibility "
        f"{evidence.feasibility}. The best single plan, “{escape(best.title)}”, averaged "
        f"{best.mean:.1f}" + (f"; it was sunk by {reasons}." if reasons else ".") + "</p>"
    )


def recommendation_block(evidence: RunEvidence) -> str:
    result = evidence.result
    status = (
        f'<p><span class="status {result.status}">{escape(STATUS_WORDS[result.status])}</span></p>'
    )
    if not result.conclusions:
        return (
            status
            + '<p class="headline">No recommendation: no plan cleared the practicality network '
            f"after {len(result.vetoes)} generation(s) (see “Vetoes” below).</p>"
            + _closest(evidence)
        )
    top = result.conclusions[0]
    return (
        status
        + f'<p class="headline">{escape(headline(top))}</p>'
        + f'<p class="support">Supported by {share(evidence, top)}; mean feasibility '
        f"{top.mean_score:.1f} against the client's {evidence.feasibility}.</p>"
        + f'<p class="rationale"><b>Why:</b> {escape(top.combined_rationale)}</p>'
        + _bullets(top)
        + _feasibility_table(evidence, top)
        + _sources(evidence, top)
    )


def dissent_block(evidence: RunEvidence) -> str:
    result = evidence.result
    parts = []
    minority = result.conclusions[1:]
    if minority:
        parts.append(f"<h3>Minority conclusions ({len(minority)})</h3>")
        for c in minority:
            parts.append(
                f'<div class="conclusion"><p><b>{c.rank}. {escape(headline(c))}</b> — '
                f"{share(evidence, c)}, mean feasibility {c.mean_score:.1f}</p>{_bullets(c)}</div>"
            )
    elif result.conclusions:
        parts.append("<p>No minority conclusion: every agent ended in the recommended one.</p>")
    if result.conclusions:
        found = evidence.contradictions(result.conclusions[0])
        parts.append("<h3>Strongest contradicting critiques</h3>")
        if not found:
            parts.append(
                "<p>No critique in the final generation contradicted the recommendation.</p>"
            )
        for x in found:
            target = f" “{escape(x.recommendation)}”" if x.recommendation else ""
            parts.append(
                f"<blockquote><p>{escape(x.critic)} against {escape(x.target)}{target}: "
                f'{escape(x.claim)}</p><p class="meta">evidence: {escape(x.source)} · strength '
                f"{x.strength:g}</p></blockquote>"
            )
    return "\n".join(parts) or "<p>No conclusions to dissent from.</p>"


def justifications_block(evidence: RunEvidence, *, expand: bool) -> str:
    parts = []
    for c in evidence.result.conclusions:
        cards = []
        for j in c.justifications:
            held = sorted(set(evidence.bullet_map(c, j.solution_id).values()))
            holds = (
                f"holds bullet(s) {', '.join(map(str, held))}"
                if held
                else "holds none of the bullets word for word"
            )
            text = evidence.justification_text(c, j.solution_id, j.rationale)
            cards.append(
                f'<div class="just"><b>{escape(j.agent_id)}</b> <span class="meta">{holds}</span>'
                f"<p>{escape(text)}</p></div>"
            )
        parts.append(
            f"<details{' open' if expand else ''}><summary>{c.rank}. {escape(headline(c))} — "
            f"{len(c.justifications)} justification(s) side by side</summary>"
            f'<p class="rationale"><b>Combined rationale:</b> {escape(c.combined_rationale)}</p>'
            f'<div class="grid">{"".join(cards)}</div></details>'
        )
    return "\n".join(parts) or "<p>No conclusion to justify.</p>"


def _generation(evidence: RunEvidence, gen: Generation) -> str:
    v, threshold = gen.verdict, evidence.feasibility
    verdict = (
        f"vetoed: mean {v.mean_score:.1f} at or below feasibility {v.feasibility}"
        if v.vetoed
        else f"passed: mean {v.mean_score:.1f} above feasibility {v.feasibility}"
    )
    constraints = sorted({c for s in gen.solutions for c in s.scores})
    head = "".join(f"<th>{escape(c)}</th>" for c in constraints)
    rows = []
    for i, s in enumerate(gen.solutions):
        cells = "".join(
            f'<td class="{"below" if s.scores.get(c, 101) <= threshold else ""}">'
            f"{s.scores.get(c, '')}</td>"
            for c in constraints
        )
        flags = "; ".join(f"{c}: {', '.join(f)}" for c, f in sorted(s.flags.items()))
        mark = ' <span class="meta">(closest)</span>' if i == 0 and v.vetoed else ""
        rows.append(
            f"<tr><td>{escape(s.title)}{mark}</td><td>{s.mean:.1f}</td>{cells}"
            f"<td>{escape(flags) or '—'}</td></tr>"
        )
    return (
        f"<h3>Generation {v.regeneration}: {verdict}</h3>"
        f"<table><tr><th>plan</th><th>mean</th>{head}<th>red flags</th></tr>"
        + "".join(rows)
        + "</table>"
    )


def vetoes_block(evidence: RunEvidence) -> str:
    gens = evidence.generations()
    if not gens:
        return "<p>The practicality network never scored a plan (the run stopped earlier).</p>"
    vetoed = sum(g.verdict.vetoed for g in gens)
    intro = (
        f"<p>{vetoed} of {len(gens)} generation(s) vetoed. Scores at or below the client's "
        f"feasibility ({evidence.feasibility}) are marked; a veto rejects the whole set and the "
        "theory network regenerates without repeating a vetoed plan.</p>"
    )
    return intro + "\n".join(_generation(evidence, g) for g in gens)


def outcome_block(evidence: RunEvidence) -> str:
    r = evidence.result
    return (
        f"<p>{r.n_agents} theory agents · {r.rounds} round(s) in the final generation "
        f"({r.total_rounds} in all) · {r.regenerations} regeneration(s)</p>"
        f'<p class="meta">{r.usage.calls} model calls · {r.usage.tokens:,} tokens · '
        f"{escape(evidence.cost_label())} · model: {escape(evidence.model_label())} · "
        f"{r.wall_time_s:.1f} s</p>"
    )


def audit_block(evidence: RunEvidence) -> str:
    a = evidence.audit
    stamp = datetime.now(UTC).isoformat(timespec="seconds")
    if a.ok:
        state = f'<span class="ok">intact</span>: all {a.total} records verified'
    else:
        state = (
            f'<span class="bad">FAILED at record {a.first_bad} of {a.total}</span>: '
            f"{escape(a.reason or '')}; {a.verified} record(s) before it verified"
        )
    return (
        f"<p>Audit trail {state}, at {stamp}.</p>"
        f'<p class="stamp">head of the verified chain {a.head}</p>'
    )


def banners(evidence: RunEvidence) -> list[Banner]:
    out = []
    a = evidence.audit
    if not a.ok:
        out.append(
            Banner(
                "danger",
                f"Audit verification FAILED at record {a.first_bad} of {a.total} "
                f"({escape(a.reason or '')}). This report was forced: do not rely on it.",
            )
        )
    if evidence.offline:
        out.append(Banner("notice", escape(OFFLINE_NOTICE)))
    return out


_EXCLUSIVE_FROM = {
    "problem": "set by the problem",
    "cli": "set on the command line",
    "request": "set by the request",
    "question": "read from the question",
    "default": "the default",
}


def options_line(req: dict[str, Any]) -> str:
    """The client's options and where they came from (or that the agents proposed their own)."""
    options = tuple(req.get("options") or ())
    source = str(req.get("options_source", "given"))
    if not options:
        return "Options: none found in the question, so the agents proposed their own courses"
    where = {"given": "given by the problem", "extracted": "read from the question"}
    return f"Options ({where.get(source, source)}): {' · '.join(options)}"


def decision_line(req: dict[str, Any]) -> str:
    """Whether the client takes one option or may combine them, and who said so, so a reader
    knows why no plan sequences the options (or why some do)."""
    kind = (
        "one of the options (the others are rejected alternatives)"
        if req.get("exclusive")
        else "options may be combined or sequenced"
    )
    source = str(req.get("exclusive_source", "default"))
    return f"Decision: {kind} ({_EXCLUSIVE_FROM.get(source, source)})"


def render_run_html(evidence: RunEvidence, *, expand: bool = False) -> str:
    """The executive report of one run (``expand`` opens the justifications, for print)."""
    req, cal = evidence.request, evidence.calibrations
    header = [
        f"Question: {' '.join(str(req['problem']).split())}",
        f"Inputs: sufficiency {req['sufficiency']} · feasibility {req['feasibility']} · density "
        f"{req['density']} tokens · profile {req['profile']}",
        f"Calibrations: stubbornness {cal['stubbornness']} · similarity threshold "
        f"{cal['similarity_threshold']} · severity {cal['severity']}",
        f"Model: {evidence.model_label()}",
    ]
    header.insert(1, options_line(req))
    if req.get("options"):
        header.insert(2, decision_line(req))
    r = evidence.result
    blocks = [
        Block("Recommendation", recommendation_block(evidence), "recommendation"),
        Block("Dissent", dissent_block(evidence)),
        Block("Why: justifications side by side", justifications_block(evidence, expand=expand)),
        Block("Vetoes", vetoes_block(evidence)),
        Block(
            "Feasibility and vetoes",
            figures([plots.feasibility_by_constraint(r), plots.veto_history(r)], first=True),
        ),
        Block("Rounds", figures([plots.convergence(r)], first=False)),
        Block("Outcome and cost", outcome_block(evidence)),
        Block("Audit", audit_block(evidence)),
    ]
    return page(
        title=evidence.title,
        header_lines=header,
        blocks=blocks,
        banners=banners(evidence),
        expand=expand,
    )
