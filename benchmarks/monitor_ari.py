"""How well the monitor clusters by meaning: adjusted Rand index against gold intents.

Data: CLINC150 (Larson et al., EMNLP 2019; CC BY 3.0), read in place from ../shared/eval/clinc150
(never copied into the repository). Two tests, for each embedder and similarity threshold:

- short: a 2,000-utterance sample of the in-scope test and validation texts, gold = intent;
- solution-length: texts of eight utterances of one intent (about 65 words, the length of a
  deliberation's solution), three per intent, gold = intent. The default threshold of each
  embedder is the one that maximises ARI here.

``wordllama-raw`` is WordLlama's cosine without the monitor's floor (see `WordLlamaEmbedder.floor`,
whose value this script measures too).

Usage: python benchmarks/monitor_ari.py [--shared ../shared] [--sample 2000]
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from sklearn.metrics import adjusted_rand_score

from hivemind_lab.deliberation.embedders import Embedder, make_embedder
from hivemind_lab.deliberation.monitor import cluster_labels, similarity_matrix

ARGS_SHARED: list[Path] = []
THRESHOLDS = [round(x, 2) for x in np.arange(0.0, 1.0, 0.05)]


def load(shared: Path) -> dict[str, list[list[str]]]:
    path = shared / "eval" / "clinc150" / "data_full.json"
    if not path.exists():
        raise SystemExit(f"{path} not found (the shared evaluation data is read in place)")
    return json.loads(path.read_text("utf-8"))


def short_texts(data: dict, n: int, seed: int) -> tuple[list[str], list[str]]:
    pool = data["test"] + data["val"]
    sample = random.Random(seed).sample(pool, n)
    return [t for t, _ in sample], [i for _, i in sample]


def solution_texts(data: dict, seed: int, per_intent: int = 3, size: int = 8):
    rng = random.Random(seed)
    by_intent: dict[str, list[str]] = {}
    for text, intent in data["test"]:
        by_intent.setdefault(intent, []).append(text)
    texts, gold = [], []
    for intent, utterances in sorted(by_intent.items()):
        for _ in range(per_intent):
            texts.append(" ".join(rng.sample(utterances, size)))
            gold.append(intent)
    return texts, gold


def floor(data: dict, seed: int) -> float:
    """Raw cosine of solution-length texts of two intents of one domain, 90th percentile."""
    domains = json.loads((ARGS_SHARED[0] / "eval" / "clinc150" / "domains.json").read_text("utf-8"))
    domain_of = {intent: d for d, intents in domains.items() for intent in intents}
    texts, gold = solution_texts(data, seed)
    vectors = make_embedder("wordllama").embed(texts)
    sims = vectors @ vectors.T
    a, b = np.triu_indices(len(texts), 1)
    pairs = [
        sims[x, y]
        for x, y in zip(a, b, strict=True)
        if gold[x] != gold[y] and domain_of[gold[x]] == domain_of[gold[y]]
    ]
    return float(np.percentile(pairs, 90))


class RawCosine:
    """An embedder seen without its floor (the cosine as it comes)."""

    def __init__(self, inner: Embedder) -> None:
        self.inner, self.floor = inner, 0.0
        self.name, self.version = f"{inner.name}-raw", inner.version
        self.default_threshold = inner.default_threshold

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self.inner.embed(texts)


def embedder(name: str) -> Embedder:
    return RawCosine(make_embedder("wordllama")) if name == "wordllama-raw" else make_embedder(name)


def sweep(texts: list[str], gold: list[str], name: str) -> list[tuple[float, float, int]]:
    sims = similarity_matrix(texts, embedder(name))
    rows = []
    for threshold in THRESHOLDS:
        labels = cluster_labels(sims, threshold)
        rows.append((threshold, adjusted_rand_score(gold, labels), int(labels.max())))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--shared", type=Path, default=Path(__file__).resolve().parents[2] / "shared"
    )
    parser.add_argument("--sample", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    ARGS_SHARED.append(args.shared)
    data = load(args.shared)
    tests = {
        "short": short_texts(data, args.sample, args.seed),
        "solution-length": solution_texts(data, args.seed),
    }
    print(
        f"## wordllama floor: {floor(data, args.seed):.3f} (90th percentile raw cosine, same domain, other intent; the embedder uses {make_embedder('wordllama').floor})"
    )
    for test, (texts, gold) in tests.items():
        words = sum(len(t.split()) for t in texts) / len(texts)
        print(
            f"\n## {test}: {len(texts)} texts, {len(set(gold))} gold intents, {words:.0f} words each"
        )
        for name in ("tfidf", "wordllama", "wordllama-raw"):
            started = time.perf_counter()
            rows = sweep(texts, gold, name)
            best = max(rows, key=lambda r: r[1])
            default = embedder(name).default_threshold
            at_default = next(r for r in rows if abs(r[0] - default) < 1e-9)
            print(
                f"{name:10s} best ARI {best[1]:.3f} at threshold {best[0]:.2f} ({best[2]} clusters); "
                f"at the default {default:.2f}: ARI {at_default[1]:.3f} ({at_default[2]} clusters); "
                f"{time.perf_counter() - started:.1f} s"
            )
            print("  " + " ".join(f"{t:.2f}:{a:.2f}" for t, a, _ in rows))


if __name__ == "__main__":
    main()
