"""The shared, consensus-aware knowledge graph (assertions, conflicts, votes, divergence,
patterns, context packing) over embedded LadybugDB or Neo4j."""

from hivemind_lab.graph.config import GraphConfig
from hivemind_lab.graph.factory import open_store
from hivemind_lab.graph.hivemind import HivemindGraph, conflict_id
from hivemind_lab.graph.models import (
    AssertResult,
    ConflictView,
    DivergenceReport,
    PatternReport,
    RetractResult,
    TrackRecord,
    VoteResult,
)
from hivemind_lab.graph.predicates import PredicateRegistry
from hivemind_lab.graph.store import GraphStore, StoreBusyError, StoreError

__all__ = [
    "AssertResult",
    "ConflictView",
    "DivergenceReport",
    "GraphConfig",
    "GraphStore",
    "HivemindGraph",
    "PatternReport",
    "PredicateRegistry",
    "RetractResult",
    "StoreBusyError",
    "StoreError",
    "TrackRecord",
    "VoteResult",
    "conflict_id",
    "open_store",
]
