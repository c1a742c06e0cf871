"""Knowledge: documents, density slicing and per-slice retrieval.

Names are imported on first use: loading documents (e.g. to validate a problem file) should not
pay for the retrieval index's scipy and bm25s.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hivemind_lab.lazy import lazy_exports

if TYPE_CHECKING:
    from hivemind_lab.knowledge.documents import Document, load_documents
    from hivemind_lab.knowledge.retrieval import Passage, RetrievalIndex, split_passages
    from hivemind_lab.knowledge.slicing import Slice, SlicingResult, slice_knowledge

_HOMES: dict[str, str] = {
    "Document": "hivemind_lab.knowledge.documents",
    "load_documents": "hivemind_lab.knowledge.documents",
    "Passage": "hivemind_lab.knowledge.retrieval",
    "RetrievalIndex": "hivemind_lab.knowledge.retrieval",
    "split_passages": "hivemind_lab.knowledge.retrieval",
    "Slice": "hivemind_lab.knowledge.slicing",
    "SlicingResult": "hivemind_lab.knowledge.slicing",
    "slice_knowledge": "hivemind_lab.knowledge.slicing",
}


__getattr__ = lazy_exports(__name__, _HOMES)


__all__ = [
    "Document",
    "Passage",
    "RetrievalIndex",
    "Slice",
    "SlicingResult",
    "load_documents",
    "slice_knowledge",
    "split_passages",
]
