"""Knowledge: documents, density slicing and per-slice retrieval."""

from hivemind_lab.knowledge.documents import Document, load_documents
from hivemind_lab.knowledge.retrieval import Passage, RetrievalIndex, split_passages
from hivemind_lab.knowledge.slicing import Slice, SlicingResult, slice_knowledge

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
