"""What a run report says, gathered once from a run directory into plain data.

The result holds the conclusions and verdicts; the audit trail holds what the result only names
by id (each solution's title and recommendations, every critique); the knowledge base turns
citation ids into titles, authors and years. Renderers (HTML, Markdown) only format this.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ValidationError

from hivemind_lab.errors import HivemindError
from hivemind_lab.runs.audit import VerifyReport, verify_log
from hivemind_lab.runs.results import (
    BindingVeto,
    Conclusion,
    ConstraintScore,
    Critique,
    DeliberationResult,
    Justification,
    PracticalityVerdict,
    Solution,
)
from hivemind_lab.samples import PROJECT
from hivemind_lab.text import normalise

if TYPE_CHECKING:
    from hivemind_lab.agents.schemas import Concern, Objection
    from hivemind_lab.calibrations import Calibrations
    from hivemind_lab.inputs import DeliberationRequest
    from hivemind_lab.knowledge.documents import Document
    from hivemind_lab.problems.model import Decision
    from hivemind_lab.runs import events
    from hivemind_lab.runs.manifest import RunManifest

OFFLINE_NOTICE = (
    "Illustrative run: the agents spoke through the offline stand-in, a deterministic model that "
    "weighs the options by word cues in its evidence and the client's facts. It is not an LLM; "
    "its wording is not advice."
)
TEST_NOTICE = (
    "Test run: the agents spoke through the content-free test model, which writes schema-valid "
    "replies with no reasoning. It is not an LLM; nothing in this report is advice."
)


@dataclass(frozen=True)
class AuditState:
    """The audit check as a report shows it."""

    ok: bool
    verified: int
    """Records that verified before the first problem (all of them when ok)."""
    total: int
    """Records (lines) in the log."""
    head: str
    first_bad: int | None
    reason: str | None

    @classmethod
    def of(cls, check: VerifyReport, log: Path) -> AuditState:
        with log.open("rb") as handle:
            total = sum(1 for _ in handle)
        return cls(check.ok, check.records, total, check.head, check.first_bad, check.reason)


@dataclass(frozen=True)
class SolutionScore:
    """One vetoed (or passed) solution with its per-constraint scores and red flags."""

    solution_id: str
    title: str
    mean: float
    scores: dict[str, int]
    flags: dict[str, tuple[str, ...]]
    reasons: dict[str, str]
    concerns: dict[str, tuple[Concern, ...]] = field(default_factory=dict)
    """Per constraint, the concerns its agent listed (read from the model's reply)."""
    vetoes: dict[str, tuple[BindingVeto, ...]] = field(default_factory=dict)
    """Per constraint, the binding constraints that set its score to 0."""

    def sunk_by(self, feasibility: int) -> list[str]:
        """Constraints scoring at or below the client's feasibility, worst first."""
        return sorted(
            (c for c, s in self.scores.items() if s <= feasibility), key=lambda c: self.scores[c]
        )


@dataclass(frozen=True)
class Generation:
    """One practicality verdict with its solutions, best first."""

    verdict: PracticalityVerdict
    solutions: list[SolutionScore]


@dataclass(frozen=True)
class Contradiction:
    """An objection that still stands against the shown plan's backers, as the monitor decided
    when it asked for the plan's combined rationale."""

    claim: str
    """The critic's own words."""
    option: str
    """The option the objection is about ("" when it names none)."""
    strength: int
    source: str
    targets: tuple[str, ...] = ()
    """The backers it was raised against (their own stances are what it contradicts)."""
    index: int | None = None
    """The option's index in the decision (None when it names none)."""


@dataclass
class RunEvidence:
    """Everything a run report shows, read from one run directory."""

    run_dir: Path
    result: DeliberationResult
    manifest: RunManifest
    audit: AuditState
    solutions: dict[str, Solution] = field(default_factory=dict)
    """Every proposal and revision of the audit trail, by solution id."""
    critiques: list[Critique] = field(default_factory=list)
    sources: dict[str, str] = field(default_factory=dict)
    """Document id -> "Title (Authors, Year)"."""
    short_sources: dict[str, str] = field(default_factory=dict)
    """Document id -> "Author et al. Year", for citations inside running text."""
    concerns: dict[tuple[str, str], tuple[Concern, ...]] = field(default_factory=dict)
    """(constraint, solution id) -> the concerns the constraint agent listed for it."""
    standing: dict[frozenset[str], tuple[Objection, ...]] = field(default_factory=dict)
    """A final cluster's agent ids -> the objections the monitor judged still standing against
    them (read from its synthesis task; none when the run asked for no synthesis)."""

    @property
    def request(self) -> DeliberationRequest:
        return self.manifest.request

    @property
    def decision(self) -> Decision:
        """The client's decision as the run recorded and deliberated it."""
        return self.manifest.decision

    @property
    def calibrations(self) -> Calibrations:
        return self.manifest.calibrations

    @property
    def feasibility(self) -> int:
        return self.request.feasibility

    @property
    def title(self) -> str:
        """The problem's title; its id when the run predates titles; a label for ad-hoc text."""
        req = self.request
        if req.problem_title:
            return req.problem_title
        return "Ad-hoc question" if req.problem_id == "ad-hoc" else req.problem_id

    @property
    def offline(self) -> bool:
        """Whether the agents spoke through a model that is no LLM (the stand-in or the
        content-free test model): its report says it is illustrative."""
        return self.manifest.backend in ("offline", "test")

    def recommendations(self, solution_id: str) -> tuple[str, ...]:
        """A solution's own recommendations (none when the audit no longer holds it)."""
        solution = self.solutions.get(solution_id)
        return solution.recommendations if solution else ()

    def model_label(self) -> str:
        """Which model the agents spoke through, in words."""
        backend, model = self.manifest.backend, self.manifest.model
        if backend == "offline":
            return f"offline stand-in ({model}), not an LLM"
        if backend == "test":
            return f"content-free test model ({model}), not an LLM"
        return f"{model} ({backend} backend)"

    def cost_label(self) -> str:
        """The run's cost; never "$0.0000" for a backend that has no cost."""
        cost = self.result.usage.cost_usd
        if cost > 0:
            return f"${cost:.4f}"
        if self.offline:
            return (
                "no cost (offline stand-in)"
                if self.manifest.backend == "offline"
                else "no cost (test model)"
            )
        return "cost not metered"

    def source(self, citation: str | None) -> str:
        """A citation id (``doc-id#passage``) as the document's title, authors and year."""
        if not citation:
            return "the critic's own position"
        doc_id = citation.split("#", 1)[0]
        return self.sources.get(doc_id, doc_id)

    def short_source(self, citation: str) -> str:
        """A citation id as "Author et al. Year" (the full reference is under Sources)."""
        doc_id = citation.split("#", 1)[0]
        return self.short_sources.get(doc_id) or self.source(citation)

    def own_justifications(self, conclusion: Conclusion) -> list[Justification]:
        """The justifications of the plan the conclusion shows: the members whose own
        recommendations are the ones shown (the cluster's representative, and any member that
        proposed the same plan); every member's when the audit no longer names them.

        Backers of a cluster reach a similar plan from different slices, so all their citations
        together list papers that bear on no step shown (ESG, two-sided markets for a retailer)."""
        shown = [normalise(r) for r in conclusion.recommendations]
        own = [
            j
            for j in conclusion.justifications
            if [normalise(r) for r in self.recommendations(j.solution_id)] == shown
        ]
        return own or list(conclusion.justifications)

    def cited(self, conclusion: Conclusion) -> list[str]:
        """Every document the shown plan's own justifications cite, once each, in order of
        first use."""
        seen: dict[str, None] = {}
        for j in self.own_justifications(conclusion):
            for c in j.citations:
                # a model may cite a constraint or fact id among its passages: not a source
                if c.split("#", 1)[0] in self.sources:
                    seen.setdefault(self.source(c), None)
        return list(seen)

    def generations(self) -> list[Generation]:
        """Every verdict with its solutions (title, scores, flags), highest mean first."""
        out = []
        for verdict in self.result.vetoes:
            by_solution: dict[str, list[ConstraintScore]] = {}
            for score in verdict.scores:
                by_solution.setdefault(score.solution_id, []).append(score)
            rows = [
                SolutionScore(
                    solution_id=sid,
                    title=plan_label(self.solutions.get(sid), sid),
                    mean=round(sum(s.score for s in scores) / len(scores), 1),
                    scores={s.constraint: s.score for s in scores},
                    flags={s.constraint: tuple(s.flags) for s in scores if s.flags},
                    reasons={s.constraint: s.reason for s in scores},
                    concerns={
                        s.constraint: self.concerns[(s.constraint, sid)]
                        for s in scores
                        if self.concerns.get((s.constraint, sid))
                    },
                    vetoes={s.constraint: s.vetoes for s in scores if s.vetoes},
                )
                for sid, scores in by_solution.items()
            ]
            rows.sort(key=lambda r: (-r.mean, r.solution_id))
            out.append(Generation(verdict, rows))
        return out

    def bullet_map(self, conclusion: Conclusion, solution_id: str) -> dict[int, int]:
        """A member's own recommendation index (0-based) -> the conclusion's bullet (1-based)."""
        shown = {normalise(r): k for k, r in enumerate(conclusion.recommendations, start=1)}
        own = self.recommendations(solution_id)
        return {i: shown[normalise(r)] for i, r in enumerate(own) if normalise(r) in shown}

    def justification_text(self, conclusion: Conclusion, solution_id: str, rationale: str) -> str:
        """A member's rationale with citation ids as sources and its own recommendation numbers
        as the bullets shown (or quoted, when the bullet is not among those shown)."""
        mapping = self.bullet_map(conclusion, solution_id)
        own = self.recommendations(solution_id)

        def recommendation(match: re.Match[str]) -> str:
            index = int(match.group(1)) - 1
            if index in mapping:
                return f"bullet {mapping[index]}"
            if 0 <= index < len(own):
                return f"its own recommendation “{own[index]}”"
            return match.group(0)

        text = self.justification_text_plain(rationale)
        return re.sub(r"\brecommendation (\d+)\b", recommendation, text)

    def justification_text_plain(self, text: str) -> str:
        """Text with passage ids (``doc#3``, ``[doc#3, doc#5]``) as short citations."""

        def cited(match: re.Match[str]) -> str:
            ids = re.findall(r"[A-Za-z0-9][\w.-]*#\d+", match.group(1))
            return "; ".join(dict.fromkeys(self.short_source(i) for i in ids)) or match.group(0)

        # Short citations: a rationale cites a passage per option, and full references (title,
        # all authors) repeated for each made the justifications unreadable.
        text = re.sub(r"\[([^\[\]]*#\d+[^\[\]]*)\]", cited, text)
        return re.sub(r"\b[a-z0-9][\w.-]*#\d+\b", lambda m: self.short_source(m.group(0)), text)

    def contradictions(self, conclusion: Conclusion, limit: int = 3) -> list[Contradiction]:
        """The strongest objections that still stand against the conclusion's backers, one per
        claim, strongest first.

        What stands is the monitor's decision (`hivemind_lab.deliberation.monitor`: the backer
        kept the stance it was criticised for and did not take the claim in), read from the
        synthesis task it recorded; re-deriving it from every critique showed objections to a
        stance the backer had since changed."""
        objections = self.standing.get(frozenset(conclusion.agents), ())
        labels = self.decision.labels
        grouped: dict[str, list[Objection]] = {}
        for o in objections:
            grouped.setdefault(normalise(o.claim), []).append(o)
        out = [
            Contradiction(
                claim=same[0].claim,
                option=_label(labels, same[0].option),
                strength=max(x.strength for x in same),
                source=self.source(same[0].citation),
                targets=tuple(dict.fromkeys(x.target_id for x in same)),
                index=same[0].option,
            )
            for same in grouped.values()
        ]
        out.sort(key=lambda c: -c.strength)
        return out[:limit]


def _label(labels: tuple[str, ...], option: int | None) -> str:
    return labels[option] if option is not None and 0 <= option < len(labels) else ""


def plan_label(solution: Solution | None, fallback: str) -> str:
    """A solution's title, completed with its first recommendation when the title is cut."""
    title = ((solution.title if solution else "") or fallback).strip()
    recs = solution.recommendations if solution else ()
    if title.endswith(("…", "...")) and recs:
        kicker = title.split(":", 1)[0] if ":" in title else ""
        return f"{kicker}: {recs[0]}" if kicker else recs[0]
    return title


def _short_citation(document: Document) -> str:
    """ "Surname Year", "A & B Year" or "A et al. Year"; the title when no author is known."""
    names = [a.split()[-1] for a in document.authors if a.split()]
    year = "n.d." if document.year is None else str(document.year)
    if not names:
        return document.title
    who = names[0] if len(names) == 1 else " & ".join(names) if len(names) == 2 else ""
    return f"{who or names[0] + ' et al.'} {year}"


def _documents(manifest: RunManifest, run_dir: Path) -> list[Document]:
    """The run's knowledge base documents (none when it is gone).

    A manifest records the path the run was given, often relative ("data/knowledge"), so a
    report written from another directory looked for it in the wrong place and cited bare ids.
    The path is tried as given, then against the run directory and each folder above it, then
    against the project; a folder counts only when its knowledge hash is the run's."""
    from hivemind_lab.knowledge.documents import load_documents
    from hivemind_lab.knowledge.fingerprint import knowledge_hash

    if not manifest.knowledge_base:
        return []
    location = Path(manifest.knowledge_base)
    expected = manifest.knowledge_hashes.theory if manifest.knowledge_hashes else None
    bases = [Path(), run_dir, *run_dir.resolve().parents, PROJECT]
    candidates = [location] if location.is_absolute() else [b / location for b in bases]
    for candidate in dict.fromkeys(candidates):
        if not candidate.exists():
            continue
        try:
            documents = load_documents(candidate)
        except HivemindError:
            continue
        if expected is None or knowledge_hash(documents) == expected:
            return documents
    return []


class _Scored(BaseModel):
    """What a score task names: which constraint judged which solution (the rest of the task
    is not needed here, so a task written by an older prompt version still reads)."""

    constraint: str
    solution_id: str


class _ScoredBatch(BaseModel):
    """What a batched score task names: the constraint that judged."""

    constraint: str


SCORE_CALLS = ("llm.score", "llm.score_batch")


def _score_concerns(call: events.ModelCall) -> list[tuple[tuple[str, str], tuple[Concern, ...]]]:
    """A score call's (constraint, solution id) and the concerns of its last reply; a batched
    score call's, for each solution it judged.

    Runs recorded before the result kept the concerns have them only in the model's reply, so
    they are read back from the audit; a reply that does not parse has none."""
    from hivemind_lab.agents.prompts import split_task_block
    from hivemind_lab.agents.schemas import BatchScoreOutput, ScoreOutput

    block = split_task_block(str(call.prompt[-1].get("content", ""))) if call.prompt else None
    if block is None or not call.responses:
        return []
    content = str(call.responses[-1].get("content", ""))
    try:
        if call.kind == "llm.score_batch":
            batch = _ScoredBatch.model_validate_json(block.data)
            output = BatchScoreOutput.model_validate_json(content)
            return [((batch.constraint, s.solution_id), tuple(s.concerns)) for s in output.scores]
        task = _Scored.model_validate_json(block.data)
        single = ScoreOutput.model_validate_json(content)
    except ValidationError:
        return []
    return [((task.constraint, task.solution_id), tuple(single.concerns))]


def _standing(call: events.ModelCall) -> tuple[frozenset[str], tuple[Objection, ...]] | None:
    """A synthesis call's cluster (its members' agent ids) and the objections the monitor
    judged still standing against them (None when the task does not read)."""
    from hivemind_lab.agents.prompts import split_task_block
    from hivemind_lab.agents.schemas import SynthesizeTask

    block = split_task_block(str(call.prompt[-1].get("content", ""))) if call.prompt else None
    if block is None:
        return None
    try:
        task = SynthesizeTask.model_validate_json(block.data)
    except ValidationError:
        return None
    return frozenset(m.agent_id for m in task.members), task.objections


def gather(run_dir: str | Path) -> RunEvidence:
    """Read a run directory: result, manifest, audit check, solutions, critiques, sources."""
    from hivemind_lab.runs import events
    from hivemind_lab.runs.audit import read_records
    from hivemind_lab.runs.rundir import RunDir

    run = RunDir(run_dir)
    run_dir, log = run.path, run.audit_path
    evidence = RunEvidence(
        run_dir=run_dir,
        result=run.read_result(),
        manifest=run.read_manifest(),
        audit=AuditState.of(verify_log(log), log),
    )
    for record in read_records(log, skip_damaged=True):  # the audit state names damage
        event = record.event
        if isinstance(event, events.Proposal):  # revisions too
            evidence.solutions[event.id] = event.solution
        elif isinstance(event, events.CritiqueGiven):
            evidence.critiques.append(event.critique)
        elif isinstance(event, events.ModelCall) and event.kind in SCORE_CALLS:
            evidence.concerns.update(_score_concerns(event))
        elif isinstance(event, events.ModelCall) and event.kind == "llm.synthesize":
            cluster = _standing(event)
            if cluster is not None:  # a resumed run's last synthesis is the one that counts
                evidence.standing[cluster[0]] = cluster[1]
    documents = _documents(evidence.manifest, run_dir)
    evidence.sources = {d.id: d.citation() for d in documents}
    evidence.short_sources = {d.id: _short_citation(d) for d in documents}
    return evidence
