"""The offline monitor's combined rationale: a structured synthesis of a cluster's members.

Shared reasons first (the options every member chooses, the client facts and passages several
members rely on), then where members differ (options some sequence or rule out and others do
not, facts only some use), then the strongest objection that no member took in. It writes
sentences about the decision, never a list of passage ids: the ids go to ``citations``.
"""

from __future__ import annotations

from collections import Counter

from hivemind_lab.agents.schemas import RationaleOutput, SynthesizeTask
from hivemind_lab.problems.decision import fact_snippet

_VERB = {"pursue": "choose", "later": "keep for later", "avoid": "rule out"}
"""What members do with an option; the option follows in quotes, whole, so an imperative
label reads right ("choose “Acquire Beta”", not "choose acquire Beta")."""


def _label(task: SynthesizeTask, option: int) -> str:
    label = task.options[option] if option < len(task.options) else f"option {option + 1}"
    return f"“{label}”"


def _join(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def synthesize(task: SynthesizeTask) -> RationaleOutput:
    """Shared reasons, differences and the strongest unresolved objection of one cluster."""
    n = len(task.members)
    facts = {f.id: f for f in task.facts}
    stance_counts: Counter[tuple[int, str]] = Counter(
        (s.option, s.stance) for m in task.members for s in m.stances
    )
    shared_parts: list[str] = []
    agreed = sorted(
        {(o, st) for (o, st), c in stance_counts.items() if c == n}, key=lambda x: (x[1], x[0])
    )
    who = "Both agents" if n == 2 else f"All {n} agents" if n > 1 else "The agent"
    for stance in ("pursue", "later", "avoid"):
        options = [_label(task, o) for o, st in agreed if st == stance]
        if options:
            shared_parts.append(f"{who} {_VERB[stance]} {_join(options)}.")
    if not shared_parts:
        shared_parts.append(f"{who} reach this conclusion from different knowledge slices.")
    fact_counts = Counter(f for m in task.members for f in dict.fromkeys(m.facts_used))
    common_facts = [f for f, c in fact_counts.most_common() if c >= max(2, (n + 1) // 2)]
    if n == 1:
        common_facts = [f for f, _ in fact_counts.most_common(2)]
    if common_facts:
        quoted = "; ".join(fact_snippet(facts[f], 160) for f in common_facts[:2] if f in facts)
        if quoted:
            shared_parts.append(f"They ground it in the client's figures: {quoted}.")
    cited = Counter(c for m in task.members for c in dict.fromkeys(m.citations))
    common = [c for c, k in cited.most_common() if k >= 2]
    if common:
        shared_parts.append(
            f"{len(common)} passage(s) are cited by more than one agent, from separate slices."
        )
    elif cited:
        shared_parts.append(f"Each agent draws on its own passages ({len(cited)} in all).")

    differences: list[str] = []
    for option in sorted({o for o, _ in stance_counts}):
        held = {st: c for (o, st), c in stance_counts.items() if o == option}
        if sum(held.values()) == n and len(held) == 1:
            continue  # everyone agrees on this option
        parts = [f"{c} {_VERB[st]}" for st, c in sorted(held.items())]
        silent = n - sum(held.values())
        if silent:
            parts.append(f"{silent} leave it aside")
        differences.append(f"on {_label(task, option)}, {_join(parts)}")
    rare = [f for f, c in fact_counts.items() if c == 1 and f in facts and f not in common_facts]
    text = ""
    if differences:
        text = "They differ " + "; ".join(differences[:3]) + "."
    if rare:
        text += f" {len(rare)} client fact(s) are used by one agent only."

    objection = ""
    if task.objections:
        top = max(task.objections, key=lambda o: (o.strength, o.claim))
        objection = (
            f"Strongest unresolved objection ({top.critic_id} to {top.target_id}, strength "
            f"{top.strength} of 5): {top.claim}"
        )
    return RationaleOutput(
        shared=" ".join(shared_parts)[:800],
        differences=text.strip()[:600],
        objection=objection,
        citations=[c for c, _ in cited.most_common(12)],
    )
