"""Divergence, patterns and provenance: what the graph tells about models and ideas."""

from __future__ import annotations

import uuid
from collections import defaultdict
from typing import Any

from hivemind_lab.errors import InputError
from hivemind_lab.graph.analytics import communities, entity_graph, islands, triangle_cycles
from hivemind_lab.graph.contests import ContestOps
from hivemind_lab.graph.core import now_iso
from hivemind_lab.graph.models import Assertion, ClaimRef, DivergenceReport, PatternReport


class InsightOps(ContestOps):
    """hivemind_divergence, hivemind_patterns and the provenance queries."""

    # -- divergence --------------------------------------------------------------------------
    def divergence(self, model_a: str, model_b: str, domain: str = "general") -> DivergenceReport:
        """What each model holds that the other does not, where they clash and where they agree."""
        model_a, model_b = self._model(model_a), self._model(model_b)
        domain = self._domain(domain)
        snap = self.snapshot()
        live = [a for a in snap.assertions.values() if a.status == "active"]

        def held_by(model: str) -> list[Assertion]:
            return [a for a in live if a.source_model == model or model in a.corroborated_by]

        all_a, all_b = held_by(model_a), held_by(model_b)
        in_a = [a for a in all_a if a.domain == domain]
        in_b = [a for a in all_b if a.domain == domain]
        subjects_a, subjects_b = {a.subject_key for a in in_a}, {a.subject_key for a in in_b}

        def ref(a: Assertion) -> ClaimRef:
            return ClaimRef(
                subject=a.subject,
                predicate=a.predicate,
                object=a.object,
                confidence=a.confidence,
            )

        unique_a = [ref(a) for a in in_a if a.subject_key not in subjects_b]
        unique_b = [ref(a) for a in in_b if a.subject_key not in subjects_a]
        ids_a = {
            a.id
            for a in snap.assertions.values()
            if a.source_model == model_a and a.domain == domain
        }
        ids_b = {
            a.id
            for a in snap.assertions.values()
            if a.source_model == model_b and a.domain == domain
        }
        conflicts = []
        clashing_pairs = set()
        for c in snap.conflicts:
            if c.domain != domain or c.status == "withdrawn":  # withdrawn claims stop counting
                continue
            for x, y in ((c.a_id, c.b_id), (c.b_id, c.a_id)):
                if x in ids_a and y in ids_b:
                    a, b = snap.assertions[x], snap.assertions[y]
                    clashing_pairs.add((x, y))
                    conflicts.append(
                        {
                            "conflict_id": c.id,
                            "subject": a.subject,
                            "a_claims": f"{a.predicate} {a.object}",
                            "b_claims": f"{b.predicate} {b.object}",
                            "status": c.status,
                        }
                    )
        agreements = []
        shared_ids = {a.id for a in in_a} & {a.id for a in in_b}
        for i in sorted(shared_ids):
            a = snap.assertions[i]
            agreements.append(
                {
                    "subject": a.subject,
                    "predicate": a.predicate,
                    "object": a.object,
                    "kind": "same_claim",
                }
            )
        for a in in_a:
            for b in in_b:
                if (
                    a.subject_key == b.subject_key
                    and a.id != b.id
                    and a.id not in shared_ids
                    and b.id not in shared_ids
                    and (a.id, b.id) not in clashing_pairs
                    and (b.id, a.id) not in clashing_pairs
                    and self.predicates.conflict(
                        a.predicate_key, a.object_key, b.predicate_key, b.object_key
                    )
                    is None
                ):
                    agreements.append(
                        {
                            "subject": a.subject,
                            "a_claims": f"{a.predicate} {a.object}",
                            "b_claims": f"{b.predicate} {b.object}",
                            "kind": "compatible",
                        }
                    )
        shared_subjects = len(subjects_a & subjects_b)
        ua, ub = len(unique_a), len(unique_b)
        score = (ua + ub) / (ua + ub + shared_subjects) if ua + ub + shared_subjects else 0.0
        domains_a, domains_b = {a.domain for a in all_a}, {a.domain for a in all_b}
        return DivergenceReport(
            model_a=model_a,
            model_b=model_b,
            domain=domain,
            unique_to_a=tuple(unique_a),
            unique_to_b=tuple(unique_b),
            direct_conflicts=tuple(conflicts),
            agreements=tuple(agreements),
            divergence_score=round(score, 6),
            blind_spots_a=tuple(sorted(domains_b - domains_a)),
            blind_spots_b=tuple(sorted(domains_a - domains_b)),
            record_a=self.track_record(model_a, domain),
            record_b=self.track_record(model_b, domain),
        )

    # -- patterns ----------------------------------------------------------------------------
    def patterns(self, domain: str = "general", min_frequency: int = 3) -> PatternReport:
        """Motifs, clusters, islands and cross-model patterns of a domain."""
        domain = self._domain(domain)
        if (
            isinstance(min_frequency, bool)
            or not isinstance(min_frequency, int)
            or min_frequency < 1
        ):
            raise InputError("min_frequency", f"got {min_frequency!r}", allowed="integer >= 1")
        snap = self.snapshot()
        live = [a for a in snap.assertions.values() if a.status == "active" and a.domain == domain]
        graph = entity_graph(live)
        names = {a.subject_key: a.subject for a in live} | {a.object_key: a.object for a in live}
        cycles = triangle_cycles(graph)
        motifs = []
        if len(cycles) >= min_frequency:
            motifs.append(
                {
                    "shape": "A->B->C->A",
                    "instances": len(cycles),
                    "example_subjects": [names[k] for k in cycles[0]],
                }
            )
        # Feed-forward triads (A->B, B->C, A->C) are the other shape worth naming.
        succ: dict[str, set[str]] = defaultdict(set)
        for a in live:
            if a.subject_key != a.object_key:
                succ[a.subject_key].add(a.object_key)
        ffl = [
            (x, y, z)
            for x in succ
            for y in succ[x]
            for z in succ.get(y, ())
            if z in succ[x] and z != x
        ]
        if len(ffl) >= min_frequency:
            motifs.append(
                {
                    "shape": "A->B->C, A->C",
                    "instances": len(ffl),
                    "example_subjects": [names[k] for k in sorted(ffl)[0]],
                }
            )
        by_key: dict[str, list[Assertion]] = defaultdict(list)
        for a in live:
            by_key[a.subject_key].append(a)
            by_key[a.object_key].append(a)
        clusters = []
        model_only = []
        for group in communities(graph):
            members = {i.id: i for k in group for i in by_key[k]}
            if len(group) < min_frequency:
                continue
            center = max(group, key=lambda k: (snap.pagerank.get(k, 0.0), k))
            models = sorted(
                {m for a in members.values() for m in (a.source_model, *a.corroborated_by)}
            )
            conf = sum(a.confidence for a in members.values()) / max(1, len(members))
            clusters.append(
                {
                    "center": names.get(center, center),
                    "size": len(group),
                    "avg_confidence": round(conf, 4),
                    "models_involved": models,
                }
            )
            if len(models) == 1:
                model_only.append(
                    {
                        "pattern": f"only {models[0]} holds this cluster",
                        "subjects": sorted(names.get(k, k) for k in group)[:10],
                    }
                )
        in_conflict = {i for c in snap.conflicts for i in (c.a_id, c.b_id)}
        island_rows = []
        for part in islands(graph):
            on_island = list({i.id: i for k in part for i in by_key[k]}.values())
            if any(m.id in in_conflict for m in on_island):
                continue
            for m in on_island:
                island_rows.append(
                    {
                        "subject": m.subject,
                        "confidence": m.confidence,
                        "connections": len(on_island),
                        "source_model": m.source_model,
                    }
                )
        island_rows.sort(key=lambda r: (r["confidence"], r["subject"]))
        pairs: dict[tuple[str, str], dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
        for a in live:
            for model in (a.source_model, *a.corroborated_by):
                pairs[(a.subject_key, a.object_key)][model].add(a.predicate_key)
        mechanism = []
        for (s, o), by_model in sorted(pairs.items()):
            predicates = {p for ps in by_model.values() for p in ps}
            if len(by_model) >= 2 and len(predicates) >= 2:
                mechanism.append(
                    {
                        "pattern": "models agree the subjects are related but disagree on the mechanism",
                        "subjects": [names.get(s, s), names.get(o, o)],
                        "mechanisms": {m: sorted(p) for m, p in sorted(by_model.items())},
                    }
                )
        return PatternReport(
            domain=domain,
            motifs=tuple(motifs),
            clusters=tuple(clusters[:20]),
            islands=tuple(island_rows[:20]),
            cross_model_patterns=tuple(mechanism + model_only),
        )

    def record_pattern(
        self,
        domain: str,
        description: str,
        *,
        frequency: int,
        confidence: float,
        discovered_by: str,
    ) -> str:
        """Store a discovered pattern (e.g. a monitor's clusters) as a Pattern node."""
        domain = self._domain(domain)
        description = self._text("description", description, limit=self.config.max_evidence)
        confidence = self._confidence("confidence", confidence)
        pattern_id = str(uuid.uuid4())
        now = now_iso(self.clock)
        self.store.write(
            lambda tx: tx.run(
                "CREATE (p:Pattern {id: $id, domain: $d, description: $text, frequency: $f, "
                "confidence: $c, discovered_by: $by, created_at: $now})",
                {
                    "id": pattern_id,
                    "d": domain,
                    "text": description,
                    "f": int(frequency),
                    "c": confidence,
                    "by": self._model(discovered_by),
                    "now": now,
                },
            )
        )
        return pattern_id

    # -- provenance --------------------------------------------------------------------------
    def exclusive_to(self, model: str) -> list[Assertion]:
        """What ``model`` asserted about subjects no other model has touched."""
        model = self._model(model)
        snap = self.snapshot()
        others = {
            a.subject_key
            for a in snap.assertions.values()
            if a.source_model != model or any(m != model for m in a.corroborated_by)
        }
        own = [
            a
            for a in snap.assertions.values()
            if a.source_model == model and a.subject_key not in others
        ]
        return sorted(own, key=lambda a: (-a.confidence, a.id))

    def survivors(self) -> list[Assertion]:
        """Assertions that survived consensus."""
        return sorted(
            (a for a in self.snapshot().assertions.values() if a.survived_consensus),
            key=lambda a: (-a.confidence, a.id),
        )

    def win_rates(self) -> list[dict[str, Any]]:
        """Per model: claims consensus decided (held as asserter or corroborator, all domains),
        how many won, and the share won."""
        rows = self.store.read(
            "MATCH (m:Model) RETURN m.name AS model, m.assertion_count AS assertions, "
            "m.last_active AS last_active"
        )
        records: dict[str, tuple[int, int]] = {}
        for r in self.store.read(
            "MATCH (r:Record) RETURN r.model AS model, r.decided AS decided, r.won AS won"
        ):
            decided, won = records.get(r["model"], (0, 0))
            records[r["model"]] = (decided + r["decided"], won + r["won"])
        for r in rows:
            decided, won = records.get(r["model"], (0, 0))
            r["decided"], r["wins"] = decided, won
            r["win_rate"] = round(won / decided, 6) if decided else 0.0
        return sorted(rows, key=lambda r: (-r["win_rate"], r["model"]))

    def models(self) -> dict[str, dict[str, Any]]:
        """Provenance counters per model."""
        return {r["model"]: r for r in self.win_rates()}
