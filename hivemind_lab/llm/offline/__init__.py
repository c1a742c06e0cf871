"""A deterministic, evidence-driven offline agent model. It is not an LLM.

It answers hivemind agent tasks (see `hivemind_lab.agents.schemas`) by reading the task block of
the prompt and working only from the evidence in it, so the whole product runs and is tested with
no network:

- propose: ranks the sentences of the agent's own passages by retrieval score, overlap with the
  problem and prescriptive wording, and picks diverse ones that are not close to an excluded
  (vetoed) solution. Different slices therefore give different proposals.
- critique: matches each of the target's recommendations against the critic's evidence and
  position; overlapping evidence with the same polarity is support, opposite polarity
  (negations such as "not", "fails", "overstates") is contradiction; the critic's own
  recommendations the target lacks are gaps. Strength grows with overlap and retrieval score.
- revise: pools well-supported gap and contradiction points (same claim from several critics
  counts more) and adopts the strongest ``round((1 - stubbornness) * n)`` of them.
- score: starts from a severity-dependent baseline and deducts for the constraint's red flags
  found in the solution and for how strongly the solution engages the constraint knowledge,
  crediting mitigations; severity also scales the deductions.

Same request ⇒ byte-identical reply. The request's ``seed`` perturbs sentence ranking slightly,
so replicates with different seeds differ the way sampled runs would.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import BaseModel

from hivemind_lab.agents.prompts import parse_task
from hivemind_lab.agents.schemas import (
    BatchCritiqueOutput,
    BatchCritiqueTask,
    CritiqueOutput,
    CritiquePoint,
    CritiqueTask,
    Evidence,
    ProposalOutput,
    ProposeTask,
    ReviseTask,
    RevisionOutput,
    ScoreOutput,
    ScoreTask,
    SolutionView,
    TargetCritique,
)
from hivemind_lab.llm.base import ChatRequest, ChatResponse, Usage
from hivemind_lab.text import jaccard, normalise, overlap, split_sentences, term_set
from hivemind_lab.tokens import TokenCounter, default_counter

OFFLINE_MODEL_ID = "hivemind-offline-v1"
MATCH_OVERLAP = 0.34
"""Term overlap at which a piece of evidence is taken to address a recommendation."""
WELL_SUPPORTED = 0.3
"""Critique strength from which a revising agent considers a point."""
REPEAT_JACCARD = 0.4
"""A candidate sentence this close to an excluded recommendation is not proposed."""
_PRESCRIPTIVE = re.compile(
    r"\b(should|must|needs? to|ought|recommend\w*|best|prefer\w*|avoid\w*|focus\w*|invest\w*|"
    r"priorit\w*|secure|build|enter|commit\w*|pursue|adopt)\b",
    re.IGNORECASE,
)
_NEGATION = re.compile(
    r"\b(not|no|never|fail\w*|rarely|overstat\w*|contrary|unlikely|cannot|without|erode\w*|"
    r"destroy\w*|undermin\w*|mistak\w*|worse|harm\w*|little evidence)\b|n't\b",
    re.IGNORECASE,
)


def _stems(text: str) -> frozenset[str]:
    return frozenset(t[:5] for t in term_set(text))


def _jitter(seed: int | None, text: str) -> float:
    digest = hashlib.sha256(f"{seed}:{text}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


@dataclass(frozen=True)
class _Candidate:
    sentence: str
    citation: str
    score: float
    terms: frozenset[str]


CLIENT_DATA_TOPIC = "client-data"


def _candidates(evidence: Sequence[Evidence], query: str, seed: int | None) -> list[_Candidate]:
    """Rank sentences of knowledge passages; client and market data only sharpen the query."""
    context = [e for e in evidence if CLIENT_DATA_TOPIC in e.topics]
    evidence = [e for e in evidence if CLIENT_DATA_TOPIC not in e.topics]
    query_terms = term_set(" ".join([query, *(e.text for e in context)]))
    top = max((e.score for e in evidence), default=0.0) or 1.0
    seen: set[str] = set()
    out: list[_Candidate] = []
    for rank, ev in enumerate(evidence):
        for sentence in split_sentences(ev.text):
            key = normalise(sentence)
            terms = term_set(sentence)
            if key in seen or len(terms) < 5 or len(sentence) > 600:
                continue
            seen.add(key)
            shared = len(terms & query_terms)
            relevance = shared / math.sqrt(len(terms))
            score = (
                0.35 * (ev.score / top)
                + 0.5 * min(1.0, relevance)
                + 0.45 * bool(_PRESCRIPTIVE.search(sentence))
                - 0.5 * (shared < 2)  # off-topic for this problem: only if nothing better remains
                - 0.01 * rank
                + 0.08 * _jitter(seed, key)
            )
            out.append(_Candidate(sentence, ev.id, round(score, 9), terms))
    out.sort(key=lambda c: (-c.score, c.citation, c.sentence))
    return out


def _too_close(terms: frozenset[str], others: Sequence[frozenset[str]], limit: float) -> bool:
    return any(jaccard(terms, o) >= limit for o in others)


def _title(evidence: Sequence[Evidence], first: str) -> str:
    topics = [t for e in evidence for t in e.topics[:1] if t != CLIENT_DATA_TOPIC]
    school = max(sorted(set(topics)), key=topics.count) if topics else "evidence"
    words = first.split()
    return f"{school.replace('-', ' ').capitalize()} plan: {' '.join(words[:9])}" + (
        "…" if len(words) > 9 else ""
    )


def propose(task: ProposeTask, seed: int | None) -> ProposalOutput:
    """Pick diverse, relevant, prescriptive sentences from the agent's own evidence."""
    excluded = [term_set(r) for view in task.excluded for r in view.recommendations]
    excluded_keys = {normalise(r) for view in task.excluded for r in view.recommendations}
    chosen: list[_Candidate] = []
    skipped = 0
    for cand in _candidates(task.evidence, task.problem, seed):
        if normalise(cand.sentence) in excluded_keys or _too_close(
            cand.terms, excluded, REPEAT_JACCARD
        ):
            continue
        if _too_close(cand.terms, [c.terms for c in chosen], 0.5):
            continue
        if skipped < task.attempt:  # a retry after a refused repeat moves down the ranking
            skipped += 1
            continue
        chosen.append(cand)
        if len(chosen) == task.max_recommendations:
            break
    if not chosen:
        return ProposalOutput(
            title="No new proposal",
            recommendations=[
                "Gather more evidence before acting; this slice offers no new option."
            ],
            rationale="Every option this agent's evidence supports was excluded or already used.",
            citations=[],
        )
    citations = list(dict.fromkeys(c.citation for c in chosen))
    return ProposalOutput(
        title=_title(task.evidence, chosen[0].sentence),
        recommendations=[c.sentence for c in chosen],
        rationale="Grounded in this agent's slice: "
        + "; ".join(
            f"[{c.citation}] supports recommendation {i + 1}" for i, c in enumerate(chosen)
        ),
        citations=citations,
    )


def _critique_points(
    critic_position: SolutionView, target: SolutionView, evidence: Sequence[Evidence]
) -> tuple[list[CritiquePoint], str]:
    top = max((e.score for e in evidence), default=0.0) or 1.0
    pool: list[tuple[str, str | None, float, frozenset[str]]] = [
        (s, e.id, e.score / top, term_set(s)) for e in evidence for s in split_sentences(e.text)
    ]
    pool += [(r, None, 1.0, term_set(r)) for r in critic_position.recommendations]
    target_terms = [term_set(r) for r in target.recommendations]
    points: list[CritiquePoint] = []
    for index, (rec, rterms) in enumerate(zip(target.recommendations, target_terms, strict=True)):
        best = max(pool, key=lambda p: (overlap(rterms, p[3]), p[2], p[0]), default=None)
        if best is None:
            continue
        ov = overlap(rterms, best[3])
        if normalise(best[0]) == normalise(rec):
            points.append(
                CritiquePoint(
                    kind="support", recommendation=index, claim=rec, strength=1.0, citation=best[1]
                )
            )
        elif ov >= MATCH_OVERLAP:
            opposed = bool(_NEGATION.search(rec)) != bool(_NEGATION.search(best[0]))
            points.append(
                CritiquePoint(
                    kind="contradiction" if opposed else "support",
                    recommendation=index,
                    claim=best[0],
                    strength=round(min(1.0, ov * (0.5 + 0.5 * best[2])), 3),
                    citation=best[1],
                )
            )
    own = critic_position.recommendations
    gaps = 0
    for rank, rec in enumerate(own):
        terms = term_set(rec)
        if max((overlap(terms, t) for t in target_terms), default=0.0) >= MATCH_OVERLAP:
            continue
        points.append(
            CritiquePoint(
                kind="gap", claim=rec, strength=round(0.45 + 0.5 * (1 - rank / len(own)), 3)
            )
        )
        gaps += 1
        if gaps == 3:
            break
    counts = {k: sum(p.kind == k for p in points) for k in ("support", "contradiction", "gap")}
    summary = (
        f"{counts['support']} recommendation(s) supported, {counts['contradiction']} contradicted "
        f"by my evidence; {counts['gap']} gap(s) my evidence says the solution misses."
    )
    return points, summary


def critique(task: CritiqueTask) -> CritiqueOutput:
    """Critique one target with the critic's evidence and position."""
    points, summary = _critique_points(task.critic_position, task.target, task.evidence)
    return CritiqueOutput(points=points, summary=summary)


def critique_batch(task: BatchCritiqueTask) -> BatchCritiqueOutput:
    """The same critique as `critique`, for every target in one reply."""
    out = []
    for target in task.targets:
        points, summary = _critique_points(task.critic_position, target.target, target.evidence)
        out.append(TargetCritique(target_id=target.target_id, points=points, summary=summary))
    return BatchCritiqueOutput(critiques=out)


def revise(task: ReviseTask) -> RevisionOutput:
    """Adopt the strongest well-supported points, as many as stubbornness allows."""
    current = task.current
    pooled: dict[str, dict] = {}
    support: dict[int, int] = {}
    for received in task.critiques:
        for point in received.points:
            if point.kind == "support" and point.recommendation is not None:
                support[point.recommendation] = support.get(point.recommendation, 0) + 1
                continue
            if point.strength < WELL_SUPPORTED or point.kind == "support":
                continue
            entry = pooled.setdefault(
                normalise(point.claim),
                {
                    "claim": point.claim,
                    "kind": point.kind,
                    "strength": 0.0,
                    "critics": set(),
                    "targets": set(),
                    "citation": point.citation,
                },
            )
            entry["strength"] += point.strength
            entry["critics"].add(received.critic_id)
            if point.recommendation is not None:
                entry["targets"].add(point.recommendation)
    own_keys = {normalise(r) for r in current.recommendations}
    ranked = sorted(
        (e for k, e in pooled.items() if k not in own_keys),
        key=lambda e: (-len(e["critics"]), -e["strength"], e["claim"]),
    )
    n_adopt = math.floor((1.0 - task.stubbornness) * len(ranked) + 0.5)
    # Stubbornness also sets how many of its own recommendations an agent holds on to.
    own = list(current.recommendations)
    keep_own = min(len(own), math.ceil(task.stubbornness * len(own) - 1e-9))
    room = max(0, task.max_recommendations - keep_own)
    adopt, reject = ranked[: min(n_adopt, room)], ranked[min(n_adopt, room) :]
    contradicted: set[int] = set()
    for entry in adopt:
        if entry["kind"] == "contradiction":
            contradicted |= entry["targets"]
    own_slots = max(keep_own, task.max_recommendations - len(adopt))
    ranked_own = sorted(range(len(own)), key=lambda i: (i in contradicted, -support.get(i, 0), i))[
        :own_slots
    ]
    recommendations = [own[i] for i in sorted(ranked_own)] + [e["claim"] for e in adopt]
    adopted = [e["claim"] for e in adopt if e["claim"] in recommendations]
    citations = list(
        dict.fromkeys([*current.citations, *(e["citation"] for e in adopt if e["citation"])])
    )
    base = current.rationale.split(" | Revision:")[0]
    rationale = (
        f"{base} | Revision: adopted {len(adopted)} of {len(ranked)} well-supported critique "
        f"point(s) at stubbornness {task.stubbornness:.2f}."
    )
    final = recommendations or list(current.recommendations)
    school = current.title.split(" plan:")[0]
    words = final[0].split()
    title = f"{school} plan: {' '.join(words[:9])}" + ("…" if len(words) > 9 else "")
    return RevisionOutput(
        title=title if " plan:" in current.title else current.title,
        recommendations=final,
        rationale=rationale[: 4 * 1200],
        citations=citations,
        adopted=adopted,
        rejected=[e["claim"] for e in reject],
    )


def _flag_hit(flag: str, stems: frozenset[str]) -> bool:
    flag_stems = _stems(flag)
    return bool(flag_stems) and flag_stems <= stems


def score(task: ScoreTask) -> ScoreOutput:
    """Feasibility under one constraint from its red flags, mitigations and knowledge."""
    text = " ".join([task.solution.title, *task.solution.recommendations])
    stems = _stems(text)
    flags = sorted({f for f in task.red_flags if _flag_hit(f, stems)})
    mitigations = sorted({m for m in task.mitigations if _flag_hit(m, stems)})
    solution_terms = term_set(text)
    engagement = max(
        (overlap(solution_terms, term_set(e.text)) for e in task.evidence[:3]), default=0.0
    )
    penalty = max(0.0, 13.0 * len(flags) + 22.0 * engagement - 7.0 * len(mitigations))
    s = task.severity
    value = round(92.0 - 25.0 * s - (0.5 + 1.5 * s) * penalty)
    value = max(0, min(100, value))
    cited = ", ".join(e.document_id for e in task.evidence[:2]) or "no matching knowledge"
    reason = (
        f"{task.constraint}: {len(flags)} risk signal(s)"
        + (f" ({', '.join(flags)})" if flags else "")
        + f"; engagement with constraint knowledge {engagement:.2f} ({cited})"
        + (f"; mitigations: {', '.join(mitigations)}" if mitigations else "")
        + f"; severity {s:.2f}."
    )
    return ScoreOutput(score=value, reason=reason[:1200], flags=flags)


class OfflineAgentModel:
    """ChatModel that answers hivemind agent tasks deterministically from their evidence."""

    backend = "offline"

    def __init__(
        self, *, counter: TokenCounter | None = None, model: str = OFFLINE_MODEL_ID
    ) -> None:
        self.model = model
        self._counter = counter or default_counter()
        self.calls = 0

    def answer(self, request: ChatRequest) -> BaseModel:
        """The structured answer to a rendered task request."""
        task = parse_task(request)
        if isinstance(task, ProposeTask):
            return propose(task, request.seed)
        if isinstance(task, CritiqueTask):
            return critique(task)
        if isinstance(task, BatchCritiqueTask):
            return critique_batch(task)
        if isinstance(task, ReviseTask):
            return revise(task)
        return score(task)

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """Answer without I/O (yields once so concurrent callers interleave fairly)."""
        self.calls += 1
        try:
            answer = self.answer(request)
        except ValueError as exc:
            raise ValueError(
                f"the offline model only answers hivemind agent task prompts: {exc}"
            ) from exc
        content = json.dumps(answer.model_dump(mode="json"), ensure_ascii=False, sort_keys=True)
        usage = Usage(
            prompt_tokens=sum(self._counter.count(m.content) for m in request.messages),
            completion_tokens=self._counter.count(content),
        )
        await asyncio.sleep(0)
        return ChatResponse(content=content, usage=usage, model=self.model)
