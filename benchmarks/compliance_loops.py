"""Compliance and research loops: time to rescore a finished run, to diff constraint knowledge,
and to export a run's agent calls as chat records (redacted and not).

One offline deliberation on the grocer problem with regenerations forced (a high feasibility),
then each operation N times; prints best and median (other jobs share the machine).
Usage: .venv/bin/python benchmarks/compliance_loops.py [--runs 5] [--density 3000]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from hivemind_lab import Calibrations, DeliberationRequest, Limits, OfflineAgentModel
from hivemind_lab.compliance import rescore
from hivemind_lab.deliberation import deliberate
from hivemind_lab.knowledge.fingerprint import diff_folders
from hivemind_lab.problems import load_problem
from hivemind_lab.problems.decision import decide
from hivemind_lab.runs.audit import read_records
from hivemind_lab.runs.chat_export import export_chat

REPO = Path(__file__).resolve().parents[1]
PROBLEM = REPO / "data" / "problems" / "regional-grocer-discounter-price-war.toml"
PRACTICALITY = REPO / "data" / "practicality"


def timed(fn: Callable[[int], object], runs: int) -> tuple[float, float]:
    times = []
    for i in range(runs):
        started = time.perf_counter()
        fn(i)
        times.append(time.perf_counter() - started)
    return min(times), statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--density", type=int, default=3000)
    args = parser.parse_args()
    problem = load_problem(PROBLEM)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        request = DeliberationRequest(
            problem=problem.question,
            decision=decide(problem),
            client_data=problem.client_data,
            market_data=problem.market_data,
            problem_id=problem.id,
            sufficiency=2,
            feasibility=90,
            density=args.density,
        )
        result = deliberate(
            request,
            Calibrations(),
            Limits(max_regenerations=2),
            model=OfflineAgentModel(),
            run_dir=root / "run",
            knowledge_base=REPO / "data" / "knowledge",
            practicality_kb=PRACTICALITY,
        )
        calls = sum(1 for r in read_records(root / "run" / "audit.jsonl") if r.kind[:4] == "llm.")
        scored = sum(len({s.solution_id for s in v.scores}) for v in result.vetoes)
        print(
            f"run: {result.n_agents} agents, {len(result.vetoes)} judged set(s), "
            f"{scored} solutions scored, {calls} model calls, status {result.status}"
        )
        cases: dict[str, Callable[[int], object]] = {
            "rescore (all judged sets)": lambda i: rescore(
                root / "run",
                practicality_kb=PRACTICALITY,
                out=root / f"rescore-{i}",
                model=OfflineAgentModel(),
            ),
            "kb diff data/practicality (33 docs)": lambda i: diff_folders(
                PRACTICALITY, PRACTICALITY
            ),
            "chat export, redacted": lambda i: export_chat(root / "run", root / f"r{i}.jsonl"),
            "chat export, client data kept": lambda i: export_chat(
                root / "run", root / f"k{i}.jsonl", include_client_data=True
            ),
        }
        for name, fn in cases.items():
            best, median = timed(fn, args.runs)
            print(f"{name:<38} best {best * 1000:8.1f} ms   median {median * 1000:8.1f} ms")


if __name__ == "__main__":
    main()
