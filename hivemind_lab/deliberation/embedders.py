"""The monitor's embedders: how solutions become vectors whose dot products are similarities.

Apart from the clustering so that a run's inputs (an experiment file naming its embedder, say)
can be checked without loading scikit-learn, SciPy or WordLlama: each is imported when an
embedder first needs it. See docs/design/monitor-embedders.md.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from hivemind_lab.errors import InputError
from hivemind_lab.text import STOPWORDS

if TYPE_CHECKING:  # numpy loads with an embedder, not with a sweep spec's names
    import numpy as np


class Embedder(Protocol):
    """Turns texts into L2-normalised vectors whose dot products are similarities."""

    name: str
    """Recorded in every manifest: a similarity threshold only means something for one embedder."""
    version: str
    """Version of the package that provides it."""
    floor: float
    """Cosine that counts as no similarity: similarities are rescaled so that it maps to 0 and
    the similarity threshold spans its whole range 0-1."""
    default_threshold: float
    """The threshold that clusters solution-length texts best by meaning (benchmarks/monitor_ari.py)."""

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


EmbedderName = Literal["wordllama", "tfidf"]
DEFAULT_EMBEDDER: EmbedderName = "wordllama"


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "absent"


class TfidfEmbedder:
    """TF-IDF over word unigrams and bigrams, fitted on the texts being compared (lexical: two
    texts that say the same in other words score low)."""

    name = "tfidf-1-2gram-sublinear"
    floor = 0.0
    """Texts sharing no term score 0 already."""
    default_threshold = 0.3

    def __init__(self) -> None:
        self.version = _version("scikit-learn")

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        if not texts:
            return np.zeros((0, 0))
        from sklearn.feature_extraction.text import TfidfVectorizer

        vectorizer = TfidfVectorizer(
            ngram_range=(1, 2),
            sublinear_tf=True,
            stop_words=sorted(STOPWORDS),
            norm="l2",
            token_pattern=r"(?u)\b[a-zA-Z][a-zA-Z0-9-]+\b",
        )
        try:
            matrix = vectorizer.fit_transform(list(texts))
        except ValueError:  # only stopwords: every text is the empty vector
            return np.zeros((len(texts), 1))
        return matrix.toarray()


def _import_wordllama() -> Any:
    """Imports wordllama without its side effect on logging: on import it calls
    ``logging.basicConfig(level=INFO)``, after which every INFO record of every library (an
    HTTP line per model call from httpx, say) is printed on the user's terminal."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        import wordllama
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)
    return wordllama


class WordLlamaEmbedder:
    """Semantic embeddings from WordLlama (static token embeddings distilled from an LLM, mean
    pooled): similar meaning in different words scores high. Its weights ship inside the
    ``wordllama`` wheel; they are loaded from there and never downloaded."""

    floor = 0.5
    """Two solution-length texts on one subject that mean different things have a raw cosine
    below 0.48 nine times in ten (CLINC150: eight-utterance texts of two intents of one domain;
    benchmarks/monitor_ari.py). Without it every solution to one problem scores above 0.3, and
    thresholds 0-0.3 would all lump everything together."""
    default_threshold = 0.5

    def __init__(self, config: str = "l2_supercat", dim: int = 256) -> None:
        wordllama = _import_wordllama()
        self.version = _version("wordllama")
        self.name = f"wordllama-{config}-{dim}"
        folder = Path(wordllama.__file__).parent
        try:
            self._model = wordllama.WordLlama.load(
                config=config, dim=dim, cache_dir=folder, disable_download=True
            )
        except (FileNotFoundError, ValueError, OSError) as exc:
            raise RuntimeError(
                f"wordllama {self.version}: weights {config!r} (dim {dim}) not found in {folder}"
                f" ({exc}); use the 'tfidf' embedder or reinstall wordllama"
            ) from None

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        if not texts:
            return np.zeros((0, 0))
        vectors = np.asarray(self._model.embed(list(texts), norm=True), dtype=np.float64)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return np.divide(vectors, norms, out=np.zeros_like(vectors), where=norms > 0)


_EMBEDDERS: dict[str, Embedder] = {}


def make_embedder(name: str = DEFAULT_EMBEDDER) -> Embedder:
    """The embedder called ``name`` (its short name or the full name a manifest records).

    Built once per process: WordLlama loads its weights in about half a second.
    """
    short = name.split("-", 1)[0]
    if short not in ("wordllama", "tfidf"):
        raise InputError("embedder", f"unknown embedder {name!r}", allowed="wordllama, tfidf")
    if short not in _EMBEDDERS:
        _EMBEDDERS[short] = WordLlamaEmbedder() if short == "wordllama" else TfidfEmbedder()
    embedder = _EMBEDDERS[short]
    if name not in (short, embedder.name):
        raise InputError("embedder", f"unknown embedder {name!r}", allowed=embedder.name)
    return embedder
