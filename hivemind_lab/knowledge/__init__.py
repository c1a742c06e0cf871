"""Knowledge: documents, density slicing and per-slice retrieval.

Names are imported on first use: loading documents (e.g. to validate a problem file) should not
pay for the retrieval index's scipy and bm25s.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hivemind_lab.lazy import homes, lazy_exports

if TYPE_CHECKING:  # the package's public names, each with its home (read by `homes`)
    from hivemind_lab.knowledge.documents import Document as Document
    from hivemind_lab.knowledge.documents import load_documents as load_documents
    from hivemind_lab.knowledge.retrieval import Passage as Passage
    from hivemind_lab.knowledge.retrieval import RetrievalIndex as RetrievalIndex
    from hivemind_lab.knowledge.retrieval import split_passages as split_passages
    from hivemind_lab.knowledge.slicing import Slice as Slice
    from hivemind_lab.knowledge.slicing import SlicingResult as SlicingResult
    from hivemind_lab.knowledge.slicing import slice_knowledge as slice_knowledge


_HOMES = homes(__name__)
"""Each public name and the module that defines it, read from the ``TYPE_CHECKING`` block
above (the one place the names are written): ``__all__`` and ``__getattr__`` come from it."""

__all__ = sorted(_HOMES)
__getattr__ = lazy_exports(__name__, _HOMES)
