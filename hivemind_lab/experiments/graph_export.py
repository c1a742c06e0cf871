"""Deliberations and the knowledge base as a graph a researcher can reason over.

Entities are the things of a deliberation: the problem, its options, the evidence documents and
their schools, the constraints, the theory agents and each run's verdict. Every claim is made by
the model that holds it, so divergence and conflicts compare agents: theory agents are models
(``run2:theory-03``), the client's problem statement is ``client``, practicality is
``practicality``, a run's verdict is ``run2:verdict`` and the knowledge base is ``knowledge-base``.

=====================  ==================================================  ====================
relation               meaning                                             held by
=====================  ==================================================  ====================
problem has_option     an option the client weighs                         client
problem has_constraint a feasibility constraint it is judged under         client
agent recommends       the agent's final solution pursues the option       agent
agent defers/rejects   the agent would pursue it later / avoid it          agent
option judged          pursue / later / avoid (one value: agents clash)    agent
option cites document  evidence the agent gives for the option it pursues  agent
agent supports/        the agent's final critique of a peer mostly         agent
contradicts agent      backs / attacks it
option scored_by       mean practicality score (confidence = score/100)    practicality
constraint
option vetoed_by       the constraint scored it under the feasibility bar  practicality
constraint
problem concludes      the run's top conclusion (one value: runs clash)    run verdict
option
document in_school     the document's school (its first topic)             knowledge-base
document draws_on      another school among its topics                     knowledge-base
school
document dissents_from a dissenting document against its school's others   knowledge-base
document
=====================  ==================================================  ====================

A run with a roster (issue 34) asserts what each agent concluded, judged and cited, and how it
critiqued its peers, as the model behind that agent (``openai:gpt-4.1-mini``, `source_model`),
and each constraint's scores as its agent's model: `hivemind_divergence` between two models
then says what one concluded that the other never did, and consensus weighs each model by its
track record across every run it took part in. The agents stay the subjects (``run2:theory-03``).

So PageRank flows from conclusions to the evidence and schools behind them, critiques form
agreement/disagreement triads among agents, and ideas held by one agent only stand apart.
Labels are readable (option names, document titles, ``run2:theory-03``); `ExportSummary.kinds`
says what each entity is.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from hivemind_lab.errors import InputError
from hivemind_lab.experiments.spec import CALIBRATIONS
from hivemind_lab.graph import GraphConfig, GraphStore, HivemindGraph, PredicateRegistry
from hivemind_lab.knowledge import Document, load_documents
from hivemind_lab.models import Frozen
from hivemind_lab.runs import events
from hivemind_lab.runs.audit import read_records
from hivemind_lab.runs.manifest import RunManifest
from hivemind_lab.runs.results import Critique, Solution
from hivemind_lab.runs.rundir import RunDir
from hivemind_lab.runs.sweepdir import SweepDir
from hivemind_lab.text import normalise

DOMAIN = "strategy"
EntityKind = Literal[
    "problem", "option", "agent", "document", "school", "constraint", "action", "verdict"
]
STANCE_RELATION = {"pursue": "recommends", "later": "defers", "avoid": "rejects"}
MULTI_VALUED = frozenset(
    {
        "has_option",
        "has_constraint",
        "recommends",
        "defers",
        "rejects",
        "cites",
        "supports",
        "scored_by",
        "vetoed_by",
        "in_school",
        "draws_on",
        "dissents_from",
    }
)
EXPORT_PREDICATES = PredicateRegistry(multi_valued=PredicateRegistry().multi_valued | MULTI_VALUED)
"""The registry a graph needs for exports: these relations hold many objects per subject
(``judged`` and ``concludes`` keep the default one-value rule, so disagreement is a conflict)."""
LABEL_CHARS = 70


class Claim(Frozen):
    """One relation to write, with the kinds of its two ends."""

    subject: str
    predicate: str
    object: str
    confidence: float
    model: str
    evidence: str = ""
    kinds: tuple[EntityKind, EntityKind]


class ExportSummary(Frozen):
    """What an export wrote."""

    assertions: int
    runs: tuple[str, ...] = ()
    """Run labels (``run1``…) in the order of ``run_dirs``."""
    run_dirs: tuple[str, ...] = ()
    settings: dict[str, str] = {}
    """Run label → its problem and calibrations, for legends."""
    kinds: dict[str, EntityKind]
    """Entity label → what it is (for colouring and filtering)."""


def label(text: str) -> str:
    """A readable, bounded entity label."""
    text = re.sub(r"\s+", " ", text).strip()
    return text if len(text) <= LABEL_CHARS else text[: LABEL_CHARS - 1].rstrip() + "…"


def is_dissent(doc: Document) -> bool:
    """Whether a document argues against its school (the knowledge base marks dissents with a
    ``critique`` topic or ``dissent`` in the id)."""
    return "critique" in doc.topics or "dissent" in doc.id


def knowledge_claims(documents: Sequence[Document]) -> list[Claim]:
    """The knowledge base's structure: schools, cross-school topics and dissents."""
    kb = "knowledge-base"
    schools = {d.school for d in documents}
    claims = []
    by_school: dict[str, list[Document]] = defaultdict(list)
    for doc in documents:
        by_school[doc.school].append(doc)
        title = label(doc.title)
        claims.append(
            Claim(
                subject=title,
                predicate="in_school",
                object=doc.school,
                confidence=1.0,
                model=kb,
                evidence=doc.id,
                kinds=("document", "school"),
            )
        )
        for topic in doc.topics[1:]:
            if topic in schools and topic != doc.school:
                claims.append(
                    Claim(
                        subject=title,
                        predicate="draws_on",
                        object=topic,
                        confidence=0.5,
                        model=kb,
                        evidence=doc.id,
                        kinds=("document", "school"),
                    )
                )
    for members in by_school.values():
        for dissent in (d for d in members if is_dissent(d)):
            for other in (d for d in members if not is_dissent(d)):
                claims.append(
                    Claim(
                        subject=label(dissent.title),
                        predicate="dissents_from",
                        object=label(other.title),
                        confidence=0.8,
                        model=kb,
                        evidence=dissent.id,
                        kinds=("document", "document"),
                    )
                )
    return claims


def graph_model(backend: str, model: str) -> str:
    """A run's model as the graph names a source model (letters, digits and ``._:@-``, at
    most 64): ``openai:gpt-4.1-mini``; a local model by its file's name."""
    if backend == "local":
        model = Path(model).name
    name = re.sub(r"[^A-Za-z0-9._:@-]+", "-", f"{backend}:{model}").strip("-")
    return name[:64]


def agent_models(manifest: RunManifest) -> dict[str, str]:
    """Each agent's model as the graph names it, for a run with a roster (empty without one:
    its claims are held by the agents themselves, as before rosters)."""
    return {a: graph_model(m.backend, m.model) for a, m in manifest.agent_models.items()}


def run_claims(
    run_dir: Path, run: str, titles: Mapping[str, str], constraint_bar: int | None = None
) -> list[Claim]:
    """One deliberation run as claims; ``run`` is its short label, ``titles`` maps document ids
    to labels (citations of unknown documents keep their id). With a roster, an agent's
    claims are held by its model and a constraint's scores by its agent's model."""
    files = RunDir(run_dir)
    result = files.read_result()
    manifest = files.read_manifest()
    request = manifest.request
    held = agent_models(manifest)
    final: dict[str, Solution] = {}
    critiques: dict[tuple[str, str], Critique] = {}
    scores: dict[str, list[tuple[str, int]]] = defaultdict(list)
    for record in read_records(files.audit_path):
        event = record.event
        if isinstance(event, events.Proposal):  # revisions too; later ones replace earlier
            final[event.agent_id] = event.solution
        elif isinstance(event, events.CritiqueGiven):
            critiques[(event.critic_id, event.target_id)] = event.critique
        elif isinstance(event, events.Score):
            scores[event.solution_id].append((event.constraint, event.score))
    problem = label(request.problem_title or result.problem_id)
    options = [label(o) for o in request.options]
    agent = {a: f"{run}:{a}" for a in final}
    claims = [
        Claim(
            subject=problem,
            predicate="has_option",
            object=option,
            confidence=1.0,
            model="client",
            kinds=("problem", "option"),
        )
        for option in options
    ]
    constraints = sorted({c for rows in scores.values() for c, _ in rows})
    claims += [
        Claim(
            subject=problem,
            predicate="has_constraint",
            object=c,
            confidence=1.0,
            model="client",
            kinds=("problem", "constraint"),
        )
        for c in constraints
    ]
    bar = constraint_bar if constraint_bar is not None else request.feasibility
    for agent_id, solution in sorted(final.items()):
        model = held.get(agent_id, agent[agent_id])
        pursued = []
        for stance in solution.stances:
            if not 0 <= stance.option < len(options):
                continue
            option = options[stance.option]
            claims.append(
                Claim(
                    subject=agent[agent_id],
                    predicate=STANCE_RELATION[stance.stance],
                    object=option,
                    confidence=0.8,
                    model=model,
                    evidence=solution.id,
                    kinds=("agent", "option"),
                )
            )
            claims.append(
                Claim(
                    subject=option,
                    predicate="judged",
                    object=stance.stance,
                    confidence=0.8,
                    model=model,
                    evidence=solution.id,
                    kinds=("option", "verdict"),
                )
            )
            if stance.stance == "pursue":
                pursued.append(option)
        cited = sorted({c.split("#", 1)[0] for c in solution.citations})
        for option in pursued:
            for doc_id in cited:
                claims.append(
                    Claim(
                        subject=option,
                        predicate="cites",
                        object=titles.get(doc_id, doc_id),
                        confidence=0.7,
                        model=model,
                        evidence=solution.id,
                        kinds=("option", "document"),
                    )
                )
        per_constraint: dict[str, list[int]] = defaultdict(list)
        for c, score in scores.get(solution.id, ()):
            per_constraint[c].append(score)
        for option in pursued:
            for c, values in sorted(per_constraint.items()):
                mean = sum(values) / len(values)
                claims.append(
                    Claim(
                        subject=option,
                        predicate="vetoed_by" if mean < bar else "scored_by",
                        object=c,
                        confidence=round(mean / 100, 4),
                        model=held.get(f"constraint-{c}", "practicality"),
                        evidence=solution.id,
                        kinds=("option", "constraint"),
                    )
                )
    for (critic, target), critique in sorted(critiques.items()):
        kinds = Counter(p.kind for p in critique.points)
        if (
            critic not in agent
            or target not in agent
            or not (kinds["support"] or kinds["contradiction"])
        ):
            continue
        backs = kinds["support"] >= kinds["contradiction"]
        claims.append(
            Claim(
                subject=agent[critic],
                predicate="supports" if backs else "contradicts",
                object=agent[target],
                confidence=0.6,
                model=held.get(critic, agent[critic]),
                evidence=critique.summary[:1000],
                kinds=("agent", "agent"),
            )
        )
    if result.conclusions:
        top = result.conclusions[0]
        chosen = next((o for o in options if normalise(o) == normalise(top.title)), None)
        claims.append(
            Claim(
                subject=problem,
                predicate="concludes",
                object=chosen or label(top.title),
                confidence=round(top.mean_score / 100, 4),
                model=f"{run}:verdict",
                evidence=f"{run_dir.name}: {result.status}",
                kinds=("problem", "option" if chosen else "action"),
            )
        )
    return claims


def write(graph: HivemindGraph, claims: Iterable[Claim]) -> int:
    """Assert every claim (conflicts and corroboration are detected as usual)."""
    missing = MULTI_VALUED - graph.predicates.multi_valued
    if missing:
        raise InputError(
            "predicates",
            f"the graph treats {sorted(missing)} as single-valued, so exports would conflict "
            "with themselves",
            allowed="a graph built with predicates=EXPORT_PREDICATES",
        )
    written = 0
    for claim in claims:
        graph.assert_claim(
            claim.subject,
            claim.predicate,
            claim.object,
            claim.confidence,
            DOMAIN,
            claim.evidence,
            model=claim.model,
        )
        written += 1
    return written


def _manifest(run_dir: Path) -> RunManifest | None:
    try:
        return RunDir(run_dir).read_manifest()
    except InputError:
        return None


def run_settings(run_dir: Path) -> str:
    """A run's problem and calibrations in one line."""
    manifest = _manifest(run_dir)
    if manifest is None:
        return run_dir.name
    cal = manifest.calibrations
    names = {"similarity_threshold": "similarity"}
    settings = ", ".join(f"{names.get(n, n)} {getattr(cal, n)}" for n in CALIBRATIONS)
    return f"{manifest.request.problem_id or '?'}: {settings}"


def run_order(run_dir: Path) -> tuple[Any, ...]:
    """Where a run goes in the export's numbering: by problem, calibrations and seed. Folder
    names are hashes, so numbering by them put stubbornness 0.9 before 0.1 in every legend."""
    manifest = _manifest(run_dir)
    if manifest is None:
        return (1, run_dir.name)
    cal = manifest.calibrations
    return (
        0,
        manifest.request.problem_id or "",
        *(getattr(cal, n) for n in CALIBRATIONS),
        manifest.seed,
        run_dir.name,
    )


def deliberations(root: Path) -> list[Path]:
    """The finished deliberation runs directly under ``root`` (by their manifests' strategy)."""
    found = []
    for run in SweepDir(root).runs():
        if not run.finished:
            continue
        manifest = _manifest(run.path)
        if manifest is not None and manifest.strategy == "deliberation":
            found.append(run.path)
    return found


def _record_clusters(graph: HivemindGraph, run: str, run_dir: Path) -> None:
    """The monitor's final clusters of agents, as a pattern of the run."""
    result = RunDir(run_dir).read_result()
    clusters = [
        [f"{run}:{a}" for a in c.agent_ids]
        for c in (result.monitor[-1].clusters if result.monitor else ())
    ]
    graph.record_pattern(
        DOMAIN,
        f"{run} ({run_dir.name}): final clusters {json.dumps(clusters)}",
        frequency=len(clusters),
        confidence=round(result.vetoes[-1].mean_score / 100, 4) if result.vetoes else 0.5,
        discovered_by="monitor",
    )


def _kinds(claims: Iterable[Claim]) -> dict[str, EntityKind]:
    kinds: dict[str, EntityKind] = {}
    for c in claims:
        kinds.setdefault(c.subject, c.kinds[0])
        kinds.setdefault(c.object, c.kinds[1])
    return kinds


def export_knowledge(graph: HivemindGraph, location: Path) -> ExportSummary:
    """Write a knowledge base's documents, schools and dissents."""
    claims = knowledge_claims(load_documents(location))
    return ExportSummary(assertions=write(graph, claims), kinds=_kinds(claims))


def export_runs(
    graph: HivemindGraph, root: Path, *, knowledge: Path | None = None
) -> ExportSummary:
    """Write every finished deliberation run under an experiment's folder as ``run1``,
    ``run2``… (in the order of their settings, `run_order`); ``knowledge`` also writes the
    knowledge base and gives cited documents their titles."""
    documents = load_documents(knowledge) if knowledge is not None else []
    titles = {d.id: label(d.title) for d in documents}
    claims = knowledge_claims(documents)
    run_dirs = sorted(deliberations(root), key=run_order)
    runs = tuple(f"run{i + 1}" for i in range(len(run_dirs)))
    for run, run_dir in zip(runs, run_dirs, strict=True):
        claims += run_claims(run_dir, run, titles)
    written = write(graph, claims)
    for run, run_dir in zip(runs, run_dirs, strict=True):
        _record_clusters(graph, run, run_dir)
    return ExportSummary(
        assertions=written,
        runs=runs,
        run_dirs=tuple(p.name for p in run_dirs),
        settings={run: run_settings(d) for run, d in zip(runs, run_dirs, strict=True)},
        kinds=_kinds(claims),
    )


def analysis_graph(store: GraphStore, config: GraphConfig) -> HivemindGraph:
    """A `HivemindGraph` over ``store`` that knows the export's relations."""
    return HivemindGraph(store, config, predicates=EXPORT_PREDICATES)
