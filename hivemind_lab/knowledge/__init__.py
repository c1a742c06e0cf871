"""Knowledge: documents, density slicing and per-slice retrieval.

Names are imported on first use: loading documents (e.g. to validate a problem file) should not
pay for the retrieval index's scipy and bm25s.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hivemind_lab.lazy import lazy_exports

if TYPE_CHECKING:  # the table below, for type checkers (re-exported by name)
    from hivemind_lab.knowledge.documents import Document as Document
    from hivemind_lab.knowledge.documents import load_documents as load_documents
    from hivemind_lab.knowledge.retrieval import Passage as Passage
    from hivemind_lab.knowledge.retrieval import RetrievalIndex as RetrievalIndex
    from hivemind_lab.knowledge.retrieval import split_passages as split_passages
    from hivemind_lab.knowledge.slicing import Slice as Slice
    from hivemind_lab.knowledge.slicing import SlicingResult as SlicingResult
    from hivemind_lab.knowledge.slicing import slice_knowledge as slice_knowledge


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
"""Each public name and the module that defines it: the one table the package's ``__all__`` and
``__getattr__`` come from (tests/test_lazy.py checks the ``TYPE_CHECKING`` imports match it)."""

__all__ = sorted(_HOMES)
__getattr__ = lazy_exports(__name__, _HOMES)
