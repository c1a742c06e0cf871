"""The monitor's embedders: the semantic one loads offline and clusters by meaning."""

from __future__ import annotations

import json
import random
import socket

import numpy as np
import pytest
from sklearn.metrics import adjusted_rand_score

from hivemind_lab.deliberation.embedders import TfidfEmbedder, WordLlamaEmbedder, make_embedder
from hivemind_lab.deliberation.monitor import cluster_labels, similarity_matrix
from hivemind_lab.errors import InputError
from tests.support import SHARED, python_output

PARAPHRASES = (
    "Cut prices on staple groceries to win back shoppers from the discounter.",
    "Reduce what basic food products cost to regain customers lost to the budget chain.",
)
UNRELATED = "Hire a chief data officer to build an actuarial analytics team."


def test_wordllama_loads_from_its_wheel_without_the_network(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the embedder tried to reach the network")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    embedder = WordLlamaEmbedder()
    vectors = embedder.embed([*PARAPHRASES, UNRELATED])
    assert vectors.shape[0] == 3
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert embedder.name.startswith("wordllama-") and embedder.version[0].isdigit()


def test_loading_wordllama_leaves_the_root_logger_as_it_was(tmp_path):
    """wordllama calls logging.basicConfig(level=INFO) on import; in a fresh interpreter the
    embedder must leave no handler on the root logger, so library INFO records stay quiet."""
    script = (
        "import logging\n"
        "from hivemind_lab.deliberation.embedders import WordLlamaEmbedder\n"
        "WordLlamaEmbedder()\n"
        "root = logging.getLogger()\n"
        "print(len(root.handlers), logging.getLevelName(root.level))\n"
    )
    assert python_output(script, tmp_path) == ["0", "WARNING"]


def test_semantic_similarity_sees_paraphrases_that_tfidf_misses():
    texts = [*PARAPHRASES, UNRELATED]
    vectors = make_embedder("wordllama").embed(texts)
    raw = vectors @ vectors.T
    assert raw[0, 1] > raw[0, 2] + 0.3
    lexical = similarity_matrix(texts, TfidfEmbedder())
    assert lexical[0, 1] < 0.15 < raw[0, 1]  # hardly a shared word
    # The floor rescales: texts that mean different things score 0, identical ones 1.
    semantic = similarity_matrix(texts, make_embedder("wordllama"))
    assert semantic[0, 2] == 0.0
    assert similarity_matrix([UNRELATED, UNRELATED], make_embedder("wordllama"))[0, 1] == 1.0


def test_embedders_are_named_and_unknown_names_are_refused():
    for short in ("tfidf", "wordllama"):
        embedder = make_embedder(short)
        assert make_embedder(embedder.name) is embedder
        assert 0.0 < embedder.default_threshold < 1.0
    with pytest.raises(InputError, match="wordllama, tfidf"):
        make_embedder("bert")
    with pytest.raises(InputError, match="wordllama-l2_supercat-256"):
        make_embedder("wordllama-other-64")


def test_higher_threshold_never_gives_fewer_clusters():
    texts = [*PARAPHRASES, UNRELATED, "Open ten convenience stores in city centres."]
    sims = similarity_matrix(texts, make_embedder("wordllama"))
    counts = [int(cluster_labels(sims, t).max()) for t in np.linspace(0, 1, 21)]
    assert counts == sorted(counts) and counts[0] == 1 and counts[-1] == len(texts)


@pytest.mark.shared
def test_semantic_embedder_clusters_intents_better_than_tfidf():
    path = SHARED / "eval" / "clinc150" / "data_full.json"
    if not path.exists():
        pytest.skip("../shared is absent")
    data = json.loads(path.read_text("utf-8"))
    sample = random.Random(1).sample(data["test"], 600)
    texts, gold = [t for t, _ in sample], [i for _, i in sample]

    def best(embedder) -> float:
        sims = similarity_matrix(texts, embedder)
        return max(
            adjusted_rand_score(gold, cluster_labels(sims, t)) for t in np.arange(0, 1, 0.05)
        )

    assert best(make_embedder("wordllama")) > best(TfidfEmbedder())
