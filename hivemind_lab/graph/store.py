"""The one interface both graph databases implement (`hivemind_lab.graph.factory` opens one).

Both stores speak the common subset of Cypher that LadybugDB and Neo4j share (MATCH, CREATE,
MERGE … ON CREATE/ON MATCH SET, SET, OPTIONAL MATCH, aggregates, parameters), so the operations
in `hivemind_lab.graph` are written once. Only schema creation differs per store.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, TypeVar

from hivemind_lab.errors import HivemindError

T = TypeVar("T")
Row = dict[str, Any]

UPSERT_LOADER = (
    "MERGE (m:Model {name: $m}) ON CREATE SET m.assertion_count = $n, m.conflict_wins = 0, "
    "m.last_active = $now ON MATCH SET m.assertion_count = m.assertion_count + $n, "
    "m.last_active = $now"
)
"""Create or credit the model a bulk load belongs to (inside the load's transaction)."""


class StoreError(HivemindError):
    """The graph database failed or is unavailable."""


class StoreBusyError(StoreError):
    """Another process holds the embedded database."""


class Tx(Protocol):
    """An open write transaction."""

    def run(self, query: str, params: Mapping[str, Any] | None = None) -> list[Row]: ...


class GraphStore(Protocol):
    """A graph database holding the hivemind schema."""

    kind: str

    @property
    def version(self) -> int | None:
        """Committed-write counter when every writer is in this process (embedded), else None."""

    def init_schema(self) -> None:
        """Create tables, constraints and indexes (idempotent)."""

    def read(self, query: str, params: Mapping[str, Any] | None = None) -> list[Row]:
        """Run a read-only query."""

    def write(self, work: Callable[[Tx], T]) -> T:
        """Run ``work`` in one write transaction (committed when it returns, rolled back if it
        raises). ``work`` may be retried on transient conflicts, so it must only touch the
        database."""

    def load_assertions(
        self,
        model: str,
        entities: Sequence[Row],
        assertions: Sequence[Row],
        *,
        now: str,
        loaders: int = 1,
    ) -> None:
        """Bulk-load new assertions of ``model`` (all or nothing): the model is created or its
        ``assertion_count`` raised, entities that do not exist yet are created, and each
        assertion gets its ASSERTED_BY, SUBJECT_REF, OBJECT_REF and RELATES_TO relationships.
        ``loaders`` > 1 asks for parallel writers on disjoint entity sets; a store with one
        writer refuses it with `InputError` before writing anything."""

    def wipe(self) -> None:
        """Delete every node and relationship (tests and benchmarks)."""

    def close(self) -> None: ...
