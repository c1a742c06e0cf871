"""Benchmark: density slicing of a 10,000-document knowledge base.

Builds a deterministic synthetic corpus (lognormal token sizes clipped to 50..20,000, 20 schools
of unequal size), slices it with `plan_slices` at densities 4,000 and 16,000, and prints the
figures that matter to a user: time, objective against the first-fit baseline, mean deviation per
slice, topical coherence and peak memory. When the shared strategy corpus is present
(``../shared/corpora/strategy_corpus/documents.jsonl`` next to the repository) it is sliced too,
at densities 8,000 and 32,000.

Target: slicing 10,000 documents takes under 10 s per density.

Usage: python benchmarks/slicing_10k.py [--n 10000] [--densities 4000 16000] [--seed 7] [--strict]
(--strict exits 1 when the target is missed.)
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from hivemind_lab.knowledge.documents import Document, load_jsonl_documents
from hivemind_lab.knowledge.slicing import OversizedDocumentWarning, plan_slices
from hivemind_lab.tokens import default_counter

REPO = Path(__file__).resolve().parents[1]
SHARED_CORPUS = REPO.parent / "shared" / "corpora" / "strategy_corpus" / "documents.jsonl"
TARGET_SECONDS = 10.0
N_SCHOOLS = 20


def synthetic_corpus(n: int, seed: int) -> list[Document]:
    """``n`` documents with skewed token sizes and 20 schools of unequal popularity."""
    rng = np.random.default_rng(seed)
    sizes = np.clip(np.rint(rng.lognormal(mean=np.log(1200), sigma=1.0, size=n)), 50, 20_000)
    weights = 1.0 / np.sqrt(np.arange(1, N_SCHOOLS + 1))
    schools = rng.choice(N_SCHOOLS, size=n, p=weights / weights.sum())
    return [
        Document(
            id=f"syn-{i:05d}",
            title=f"Synthetic document {i}",
            authors=("Benchmark",),
            year=2000,
            venue="synthetic",
            peer_reviewed=False,
            topics=(f"school-{int(schools[i]):02d}",),
            text="synthetic",
            tokens=int(sizes[i]),
        )
        for i in range(n)
    ]


def peak_rss_mib() -> float:
    """Peak resident set size of this process so far (Linux reports KiB, macOS bytes)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def run(label: str, documents: list[Document], density: int, seed: int) -> float:
    """Slice once, print the figures, return the wall time."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OversizedDocumentWarning)
        start = time.perf_counter()
        result = plan_slices(documents, density, seed=seed)
        elapsed = time.perf_counter() - start
    n_slices = len(result.slices)
    ff = result.first_fit_objective
    improvement = 100.0 * (ff - result.objective) / ff if ff else 0.0
    oversized = sum(s.oversized for s in result.slices)
    # Oversized documents cost the same under any slicer; compare the part a slicer can improve.
    fixed = sum(d.tokens - density for d in documents if d.tokens > density)
    reducible_ff, reducible = ff - fixed, result.objective - fixed
    reducible_gain = 100.0 * (reducible_ff - reducible) / reducible_ff if reducible_ff else 0.0
    small_slices = [s for s in result.slices if not s.oversized]
    small_dev = (
        sum(abs(s.deviation) for s in small_slices) / len(small_slices) if small_slices else 0.0
    )
    print(f"\n[{label}] density {density:,}")
    print(f"  documents                     {len(documents):>12,}")
    print(f"  total tokens                  {sum(d.tokens for d in documents):>12,}")
    print(f"  slices                        {n_slices:>12,}   ({oversized:,} oversized singletons)")
    print(f"  wall time (s)                 {elapsed:>12.2f}")
    print(f"  objective Σ|tokens−density|   {result.objective:>12,}   (method {result.method})")
    print(f"  first-fit objective           {ff:>12,}")
    print(f"  improvement over first-fit    {improvement:>11.1f}%")
    print(
        f"    on the reducible part       {reducible_gain:>11.1f}%   "
        f"({reducible_ff:,} -> {reducible:,}; oversized excess {fixed:,} is unavoidable)"
    )
    print(f"  mean |deviation| per slice    {result.objective / n_slices:>12.1f}")
    print(f"    excluding oversized         {small_dev:>12.1f}")
    print(f"  coherence                     {result.coherence:>12.3f}")
    print(f"  peak memory (process RSS MiB) {peak_rss_mib():>12.1f}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000, help="synthetic documents")
    parser.add_argument("--densities", type=int, nargs="+", default=[4_000, 16_000])
    parser.add_argument("--shared-densities", type=int, nargs="+", default=[8_000, 32_000])
    parser.add_argument("--seed", type=int, default=7, help="corpus and slicer seed")
    parser.add_argument("--strict", action="store_true", help="exit 1 when the target is missed")
    args = parser.parse_args()

    print(f"slicing benchmark — target: slice {args.n:,} documents in < {TARGET_SECONDS:.0f} s")
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}")
    start = time.perf_counter()
    documents = synthetic_corpus(args.n, args.seed)
    print(f"built synthetic corpus: {len(documents):,} docs, {N_SCHOOLS} schools, lognormal sizes")
    print(f"  clipped to 50..20,000 tokens, in {time.perf_counter() - start:.2f} s")

    times = {d: run("synthetic", documents, d, args.seed) for d in args.densities}

    if SHARED_CORPUS.exists():
        start = time.perf_counter()
        shared = load_jsonl_documents(SHARED_CORPUS)
        print(
            f"\nloaded shared corpus {SHARED_CORPUS} ({len(shared)} docs, counter "
            f"{default_counter().name}) in {time.perf_counter() - start:.2f} s"
        )
        for density in args.shared_densities:
            run("shared strategy corpus", shared, density, args.seed)
    else:
        print(f"\nshared corpus not found at {SHARED_CORPUS}: skipped")

    print("\nsummary")
    missed = False
    for density, elapsed in times.items():
        ok = elapsed < TARGET_SECONDS
        missed |= not ok
        verdict = "met" if ok else "MISSED"
        print(
            f"  {args.n:,} docs at density {density:,}: {elapsed:.2f} s "
            f"(target < {TARGET_SECONDS:.0f} s: {verdict})"
        )
    return 1 if (missed and args.strict) else 0


if __name__ == "__main__":
    sys.exit(main())
