"""Sweep results into the hivemind graph, so divergence, patterns and igraph analytics work
across runs.

Each theory agent of a run is a model (``<run-id>:<agent>``); each of its final recommendations is
an assertion ``<problem> recommends <recommendation>`` (domain ``strategy``) with the run's
feasibility as confidence; each contradiction in a critique is the critic asserting
``<problem> negates <recommendation>``, which the graph turns into a conflict with the target
agent's claim; the monitor's final clusters are stored as patterns.
"""

from __future__ import annotations

import json
from pathlib import Path

from hivemind_lab.audit.log import read_records
from hivemind_lab.deliberation import load_result
from hivemind_lab.graph import HivemindGraph

DOMAIN = "strategy"


def export_run(graph: HivemindGraph, run_dir: Path) -> int:
    """Write one run; returns the number of assertions made."""
    result = load_result(run_dir)
    run_id = run_dir.name[-12:]
    confidence = round((result.vetoes[-1].mean_score if result.vetoes else 50.0) / 100, 4)
    written = 0
    final: dict[str, list[str]] = {}
    for record in read_records(run_dir / "audit.jsonl"):
        if record.kind in ("theory.proposal", "theory.revision"):
            final[record.payload["agent_id"]] = record.payload["recommendations"]
    for agent, recommendations in sorted(final.items()):
        for rec in recommendations:
            graph.assert_claim(
                result.problem_id,
                "recommends",
                rec[:1000],
                confidence,
                DOMAIN,
                f"run {run_dir.name}",
                model=f"{run_id}:{agent}",
            )
            written += 1
    for record in read_records(run_dir / "audit.jsonl"):
        if record.kind != "theory.critique":
            continue
        target = final.get(record.payload["target_id"], [])
        for point in record.payload["points"]:
            index = point.get("recommendation")
            if point["kind"] == "contradiction" and index is not None and index < len(target):
                graph.assert_claim(
                    result.problem_id,
                    "negates",
                    target[index][:1000],
                    point["strength"],
                    DOMAIN,
                    point["claim"][:1000],
                    model=f"{run_id}:{record.payload['critic_id']}",
                )
                written += 1
    clusters = [list(c.agent_ids) for c in (result.monitor[-1].clusters if result.monitor else ())]
    graph.record_pattern(
        DOMAIN,
        f"run {run_dir.name}: final clusters {json.dumps(clusters)}",
        frequency=len(clusters),
        confidence=confidence,
        discovered_by="monitor",
    )
    return written


def export_runs(graph: HivemindGraph, root: Path) -> int:
    """Write every finished deliberation run under an experiment's folder."""
    total = 0
    for run_dir in sorted(p for p in root.iterdir() if (p / "result.json").exists()):
        if run_dir.name.startswith("deliberation-"):
            total += export_run(graph, run_dir)
    return total
