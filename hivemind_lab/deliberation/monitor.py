"""The monitor: clusters similar solutions, counts distinct conclusions, decides halting.

Clustering is deterministic: solutions are embedded (WordLlama, semantic, by default; TF-IDF as
an option), compared by cosine similarity rescaled from the embedder's floor, and grouped by
average-linkage agglomerative clustering cut at distance ``1 - similarity_threshold``: two groups
merge only when their members are, on average, at least ``similarity_threshold`` similar. Average
linkage avoids the chaining of single-linkage (connected components), where A≈B and B≈C would
lump A with a very different C. See docs/design/monitor-clustering.md and monitor-embedders.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from scipy.cluster.hierarchy import fcluster, linkage
from scipy.spatial.distance import squareform

from hivemind_lab.agents.schemas import (
    ClusterMember,
    DecisionContext,
    Objection,
    SolutionView,
    StandingConcern,
    SynthesizeTask,
)
from hivemind_lab.deliberation.embedders import Embedder
from hivemind_lab.deliberation.stances import decision_distance
from hivemind_lab.runs.results import (
    Cluster,
    Conclusion,
    ConstraintScore,
    Critique,
    Justification,
    MonitorReport,
    PracticalityVerdict,
    Solution,
)


def similarity_matrix(texts: Sequence[str], embedder: Embedder) -> np.ndarray:
    """Pairwise similarities in [0, 1]: cosines rescaled from the embedder's floor (identical
    texts score 1)."""
    vectors = embedder.embed(texts)
    floor = embedder.floor
    sims = np.clip((vectors @ vectors.T - floor) / (1.0 - floor), 0.0, 1.0)
    groups: dict[str, list[int]] = {}
    for i, text in enumerate(texts):  # empty vectors: identical texts still match
        groups.setdefault(text, []).append(i)
    for members in groups.values():
        sims[np.ix_(members, members)] = 1.0
    return sims


TEXT_SHARE = 0.3
"""Share of wording in the similarity of solutions that take stances (the rest: their
decisions)."""


def solution_similarity(
    solutions: Sequence[Solution | SolutionView], embedder: Embedder
) -> np.ndarray:
    """How alike solutions are: their texts' similarity, blended with their decisions'
    similarity when any of them takes stances on the problem's options (wording alone makes
    two plans that name the same options in opposite roles look alike)."""
    sims = similarity_matrix([s.text() for s in solutions], embedder)
    if any(s.stances for s in solutions):
        sims = TEXT_SHARE * sims + (1.0 - TEXT_SHARE) * decision_similarity(solutions)
    return sims


def decision_similarity(solutions: Sequence[Solution | SolutionView]) -> np.ndarray:
    """Pairwise similarity of the solutions' decisions in [0, 1]: one minus the continuous
    decision distance (`hivemind_lab.deliberation.stances.decision_distance`: the share of a
    plan's commitment, pursue 1 and later 1/3 per option, that must move to make it the other).

    A number per option instead of an equal/unequal stance: plans that share their first move
    and differ in what follows are closer than plans with different first moves, by steps
    small enough that the number of clusters responds across the threshold's range.
    """
    n = len(solutions)
    sims = np.ones((n, n))
    for i in range(n):
        for j in range(i + 1, n):
            value = 1.0 - decision_distance(solutions[i].stances, solutions[j].stances)
            sims[i, j] = sims[j, i] = value
    return sims


def cluster_labels(sims: np.ndarray, threshold: float) -> np.ndarray:
    """Average-linkage cluster labels (1-based) for a similarity matrix cut at ``threshold``."""
    n = len(sims)
    if n < 2:
        return np.ones(n, dtype=int)
    distance = squareform(1.0 - sims, checks=False)
    tree = linkage(distance, method="average")
    return np.asarray(fcluster(tree, t=1.0 - threshold + 1e-9, criterion="distance"))


def cluster_solutions(
    solutions: Sequence[Solution], threshold: float, embedder: Embedder
) -> tuple[Cluster, ...]:
    """Group solutions whose average similarity is at least ``threshold``."""
    n = len(solutions)
    if n == 0:
        return ()
    sims = solution_similarity(solutions, embedder)
    labels = cluster_labels(sims, threshold)
    order: dict[int, int] = {}
    for label in labels:
        order.setdefault(int(label), len(order))
    clusters = []
    for label, index in sorted(order.items(), key=lambda kv: kv[1]):
        members = [i for i in range(n) if labels[i] == label]
        block = sims[np.ix_(members, members)]
        mean_to_others = (block.sum(axis=1) - 1.0) / max(1, len(members) - 1)
        medoid = members[int(np.argmax(mean_to_others))]
        cohesion = (
            1.0
            if len(members) == 1
            else float((block.sum() - len(members)) / (len(members) * (len(members) - 1)))
        )
        clusters.append(
            Cluster(
                index=index,
                solution_ids=tuple(solutions[i].id for i in members),
                agent_ids=tuple(solutions[i].agent_id for i in members),
                representative_id=solutions[medoid].id,
                cohesion=round(cohesion, 6),
            )
        )
    return tuple(clusters)


def observe(
    solutions: Sequence[Solution],
    *,
    threshold: float,
    sufficiency: int,
    embedder: Embedder,
    regeneration: int,
    round: int,
) -> MonitorReport:
    """Cluster the current solutions and decide whether the theory loop halts."""
    clusters = cluster_solutions(solutions, threshold, embedder)
    return MonitorReport(
        regeneration=regeneration,
        round=round,
        clusters=clusters,
        distinct_conclusions=len(clusters),
        halted=len(clusters) <= sufficiency,
        similarity_threshold=threshold,
        embedder=embedder.name,
    )


def diversity(solutions: Sequence[Solution], embedder: Embedder) -> float:
    """Mean pairwise dissimilarity of solutions (0 when they all say the same)."""
    n = len(solutions)
    if n < 2:
        return 0.0
    sims = similarity_matrix([s.text() for s in solutions], embedder)
    return round(float(1.0 - (sims.sum() - n) / (n * (n - 1))), 6)


def is_repeat(
    candidate: SolutionView,
    vetoed: Sequence[SolutionView],
    threshold: float,
    embedder: Embedder,
) -> bool:
    """True when ``candidate`` is a vetoed solution or within the similarity threshold of one
    (the same measure the monitor clusters with)."""
    if not vetoed:
        return False
    if any(candidate.text() == v.text() and candidate.stances == v.stances for v in vetoed):
        return True
    sims = solution_similarity([candidate, *vetoed], embedder)
    return bool(sims[0, 1:].max() >= threshold)


def synthesis_task(
    context: DecisionContext,
    cluster: Cluster,
    solutions: Mapping[str, Solution],
    critiques: Sequence[Critique],
    *,
    criticised: Mapping[str, Solution] | None = None,
    scores: Sequence[ConstraintScore] = (),
) -> SynthesizeTask:
    """What the model needs to write one cluster's combined rationale: the members' solutions
    and justifications, the contradictions raised against them that still stand (the member
    kept the stance it was criticised for, or did not adopt the claim), and the major and
    critical concerns the constraint agents raised on them (``scores``) that no solution
    mitigates."""
    by_id = {s.id: s for s in solutions.values()}
    members = [by_id[i] for i in cluster.solution_ids]
    agents = {m.agent_id: m for m in members}
    before = criticised or {}

    def stands(c: Critique, option: int | None, claim: str) -> bool:
        member = agents[c.target_id]
        if claim in member.adopted:
            return False
        old = before.get(c.target_solution_id)
        if option is None or old is None:
            return True
        now: dict[int, str] = {st.option: st.stance for st in member.stances}
        then: dict[int, str] = {st.option: st.stance for st in old.stances}
        return now.get(option) == then.get(option)

    objections = [
        Objection(
            critic_id=c.critic_id,
            target_id=c.target_id,
            option=p.option,
            claim=p.claim,
            strength=p.strength,
            citation=p.citation,
        )
        for c in critiques
        if c.target_id in agents
        for p in c.points
        if p.kind == "contradiction" and stands(c, p.option, p.claim)
    ]
    return SynthesizeTask(
        **dict(context),
        cluster_index=cluster.index,
        members=tuple(
            ClusterMember(
                agent_id=m.agent_id,
                title=m.title,
                stances=m.stances,
                recommendations=m.recommendations,
                rationale=m.rationale,
                citations=m.citations,
                facts_used=m.facts_used,
            )
            for m in members
        ),
        objections=tuple(sorted(objections, key=lambda o: (-o.strength, o.critic_id))[:6]),
        concerns=standing_concerns(scores, {m.id: m.agent_id for m in members}),
    )


MAX_STANDING_CONCERNS = 8


def standing_concerns(
    scores: Sequence[ConstraintScore], members: Mapping[str, str]
) -> tuple[StandingConcern, ...]:
    """The unmitigated major and critical concerns raised on the solutions in ``members``
    (solution id → agent id), critical first, each once per constraint and option."""
    seen: dict[tuple[str, int | None, str], StandingConcern] = {}
    for score in scores:
        if score.solution_id not in members:
            continue
        for concern in score.concerns:
            if concern.mitigated or concern.grade == "minor":
                continue
            key = (score.constraint, concern.option, concern.text)
            seen.setdefault(
                key,
                StandingConcern(
                    constraint=score.constraint,
                    agent_id=members[score.solution_id],
                    option=concern.option,
                    grade=concern.grade,
                    text=concern.text,
                    basis=concern.basis,
                ),
            )
    ranked = sorted(seen.values(), key=lambda c: (c.grade != "critical", c.constraint))
    return tuple(ranked[:MAX_STANDING_CONCERNS])


def aggregate(
    report: MonitorReport,
    solutions: Sequence[Solution],
    verdict: PracticalityVerdict | None,
    *,
    rationales: Mapping[int, str] | None = None,
) -> tuple[Conclusion, ...]:
    """The ranked aggregate list: each cluster with its members' justifications side by side.

    A cluster whose every solution a binding constraint vetoed (each pursues now an option the
    client may not take first) ranks below every cluster with a lawful plan, whatever its
    size, and a cluster shows a lawful member's plan when it has one: a recommendation never
    leads with a barred option. Then clusters rank by size (how
    many agents reached the conclusion), then mean feasibility. The combined rationale is the model's (``rationales``, by cluster index) when the run asked
    for one, else a plain count of agents and passages.
    """
    by_id = {s.id: s for s in solutions}
    scores_by_solution: dict[str, dict[str, int]] = {}
    barred: set[str] = set()
    if verdict is not None:
        for score in verdict.scores:
            scores_by_solution.setdefault(score.solution_id, {})[score.constraint] = score.score
            if score.vetoes:
                barred.add(score.solution_id)
    drafts = []
    for cluster in report.clusters:
        members = [by_id[i] for i in cluster.solution_ids]
        per_constraint: dict[str, list[int]] = {}
        for member in members:
            for constraint, value in scores_by_solution.get(member.id, {}).items():
                per_constraint.setdefault(constraint, []).append(value)
        scores = {c: round(sum(v) / len(v), 2) for c, v in sorted(per_constraint.items())}
        mean = round(sum(scores.values()) / len(scores), 2) if scores else 0.0
        representative = by_id[cluster.representative_id]
        lawful = [m for m in members if m.id not in barred]
        if representative.id in barred and lawful:  # the plan shown is never a barred one
            representative = lawful[0]
        justifications = tuple(
            Justification(
                agent_id=m.agent_id, solution_id=m.id, rationale=m.rationale, citations=m.citations
            )
            for m in members
        )
        cited = {c for m in members for c in m.citations}
        combined = (rationales or {}).get(cluster.index) or (
            f"{len(members)} agent(s) ({', '.join(cluster.agent_ids)}) reached this conclusion "
            f"from different knowledge slices, citing {len(cited)} passage(s)."
        )
        in_breach = not lawful
        drafts.append(
            (
                in_breach,
                len(members),
                mean,
                cluster,
                representative,
                justifications,
                combined,
                scores,
            )
        )
    drafts.sort(key=lambda d: (d[0], -d[1], -d[2], d[3].index))
    return tuple(
        Conclusion(
            rank=rank + 1,
            title=rep.title,
            recommendations=rep.recommendations,
            agents=cluster.agent_ids,
            solution_ids=cluster.solution_ids,
            justifications=justs,
            combined_rationale=combined,
            scores=scores,
            mean_score=mean,
        )
        for rank, (_, _, mean, cluster, rep, justs, combined, scores) in enumerate(drafts)
    )
