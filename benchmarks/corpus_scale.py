"""The public strategy corpus at scale: 40+ offline agents, pairwise and batched, one round.

Reads ../shared/corpora/strategy_corpus/documents.jsonl in place (152 chapters of six
public-domain classics, ~0.8M tokens) and prints slicing, wall time and calls per mode.

Run: .venv/bin/python benchmarks/corpus_scale.py
"""

from __future__ import annotations

import os
import platform
import tempfile
import time
import warnings
from pathlib import Path

from hivemind_lab import Calibrations, Limits, OfflineAgentModel
from hivemind_lab.deliberation import deliberate
from hivemind_lab.inputs import request_for
from hivemind_lab.knowledge.documents import load_documents
from hivemind_lab.problems import load_problem

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpora" / "strategy_corpus" / "documents.jsonl"


def main() -> None:
    print(
        f"machine: {platform.node()} · {platform.machine()} · {os.cpu_count()} cores · "
        f"python {platform.python_version()} · {time.strftime('%Y-%m-%d')}"
    )
    if not CORPUS.exists():
        raise SystemExit(f"{CORPUS} is absent (the shared corpus sits beside the repository)")
    start = time.perf_counter()
    docs = load_documents(CORPUS)
    total = sum(d.tokens for d in docs)
    print(
        f"corpus: {len(docs)} documents, {total:,} tokens, loaded in {time.perf_counter() - start:.1f} s"
    )
    problem = load_problem(REPO / "data/problems/furniture-maker-asia-expansion.toml")
    for mode in ("batched", "pairwise"):
        request = request_for(problem, density=total // 46, sufficiency=1, critique_mode=mode)
        with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
            warnings.simplefilter("ignore")  # oversized chapters become slices of their own
            start = time.perf_counter()
            result = deliberate(
                request,
                Calibrations(),
                Limits(max_rounds=1, max_regenerations=0),
                model=OfflineAgentModel(),
                run_dir=Path(tmp) / "run",
                knowledge_base=CORPUS,
                practicality_kb=REPO / "data/practicality",
            )
            wall = time.perf_counter() - start
        print(
            f"{mode:>8}: {result.n_agents} agents (density {request.density:,}), status "
            f"{result.status}, {result.usage.calls} calls, {wall:.1f} s wall, "
            f"top: {result.conclusions[0].title if result.conclusions else '-'}"
        )


if __name__ == "__main__":
    main()
