"""The hivemind knowledge graph: the spec's operations, written once for both stores.

`HivemindGraph` is a thin facade: each group of operations lives in its own module
(`assertions`, `consensus`, `query`, `insights`) over the shared state in `core`.
"""

from __future__ import annotations

from hivemind_lab.graph.assertions import AssertOps
from hivemind_lab.graph.consensus import ConsensusOps
from hivemind_lab.graph.core import conflict_id
from hivemind_lab.graph.insights import InsightOps
from hivemind_lab.graph.query import QueryOps
from hivemind_lab.graph.retraction import RetractOps

__all__ = ["HivemindGraph", "conflict_id"]


class HivemindGraph(AssertOps, ConsensusOps, QueryOps, InsightOps, RetractOps):
    """Operations on the shared knowledge graph (assert, conflicts, resolve, query, divergence,
    patterns, provenance, retract) over any `GraphStore`."""
