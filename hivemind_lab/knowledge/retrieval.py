"""Per-slice retrieval: BM25 over paragraph passages, with document ids for citation.

Passages are paragraphs; a paragraph longer than ``max_words`` is split between sentences, never
inside one, so every cited passage reads as whole sentences.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence

import bm25s
import numpy as np

from hivemind_lab.models import Frozen
from hivemind_lab.text import split_sentences, terms

# bm25s sets its own logger to DEBUG on import, so once any library configures the root logger
# every index build prints "Building index from tokens" on the user's terminal.
logging.getLogger("bm25s").setLevel(logging.WARNING)


class Passage(Frozen):
    """A citable paragraph of a document."""

    id: str
    """``<document_id>#<n>``: stable citation key."""
    document_id: str
    """The document the passage comes from."""
    text: str
    """Whole sentences of one paragraph."""
    topics: tuple[str, ...] = ()
    """The source document's topics."""


class ScoredPassage(Frozen):
    """A retrieval hit."""

    passage: Passage
    score: float


def split_passages(
    document_id: str, text: str, *, topics: Sequence[str] = (), max_words: int = 160
) -> list[Passage]:
    """Cut a document body into paragraph passages (heading-only lines are skipped)."""
    passages: list[Passage] = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        block = block.strip()
        if not block:
            continue
        if block.startswith("#") and "\n" not in block:
            continue
        sentences = split_sentences(block)
        chunk: list[str] = []
        chunks: list[str] = []
        words = 0
        for sentence in sentences:
            n = len(sentence.split())
            if chunk and words + n > max_words:
                chunks.append(" ".join(chunk))
                chunk, words = [], 0
            chunk.append(sentence)
            words += n
        if chunk:
            chunks.append(" ".join(chunk))
        for body in chunks:
            passages.append(
                Passage(
                    id=f"{document_id}#{len(passages)}",
                    document_id=document_id,
                    text=body,
                    topics=tuple(topics),
                )
            )
    return passages


class RetrievalIndex:
    """A BM25 index over a fixed list of passages (one per agent slice)."""

    def __init__(self, passages: Iterable[Passage]) -> None:
        self.passages: list[Passage] = list(passages)
        self._bm25: bm25s.BM25 | None = None
        corpus = [terms(p.text) or ["_empty_"] for p in self.passages]
        if self.passages:
            self._bm25 = bm25s.BM25()
            self._bm25.index(corpus, show_progress=False)

    def __len__(self) -> int:
        return len(self.passages)

    def search(self, query: str, k: int = 5) -> list[ScoredPassage]:
        """Top-k passages for ``query`` (ties broken by passage order; zero scores dropped)."""
        if self._bm25 is None or k <= 0:
            return []
        query_terms = [t for t in terms(query) if t in self._bm25.vocab_dict]
        if not query_terms:
            return []
        scores = np.asarray(self._bm25.get_scores(query_terms), dtype=np.float64)
        order = np.lexsort((np.arange(len(scores)), -scores))[:k]
        return [
            ScoredPassage(passage=self.passages[i], score=round(float(scores[i]), 6))
            for i in order
            if scores[i] > 0
        ]
