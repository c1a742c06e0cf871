"""Embedded LadybugDB (the maintained Kùzu fork): the zero-set-up default store.

LadybugDB allows one process per database file and one write transaction at a time (a concurrent
write raises instead of waiting), so every operation here is serialised by one lock; several
processes should share a graph through the MCP server's HTTP transport or through Neo4j.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from hivemind_lab.graph.schema import NODE_TABLES, REL_TABLES
from hivemind_lab.graph.store import Row, StoreBusyError, StoreError

T = TypeVar("T")


class _LadybugTx:
    def __init__(self, conn: Any) -> None:
        self._conn = conn

    def run(self, query: str, params: Mapping[str, Any] | None = None) -> list[Row]:
        return _rows(self._conn.execute(query, dict(params or {})))


def _rows(result: Any) -> list[Row]:
    if isinstance(result, list):  # several statements
        result = result[-1]
    names = result.get_column_names()
    out = []
    while result.has_next():
        out.append(dict(zip(names, result.get_next(), strict=True)))
    return out


class LadybugStore:
    """GraphStore over an embedded LadybugDB file."""

    kind = "ladybug"

    def __init__(self, path: str | Path) -> None:
        import ladybug

        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._db = ladybug.Database(str(self.path))
        except RuntimeError as exc:
            if "lock" in str(exc).lower():
                raise StoreBusyError(
                    f"the embedded graph {str(self.path)!r} is open in another process "
                    f"({exc}). LadybugDB allows one process per database: share it through "
                    "`hivemind-lab mcp serve --transport http`, or use Neo4j "
                    "(HIVEMIND_STORE=neo4j) for several processes."
                ) from exc
            raise StoreError(f"cannot open {str(self.path)!r}: {exc}") from exc
        self._conn = ladybug.Connection(self._db)
        self._lock = threading.RLock()

    def init_schema(self) -> None:
        with self._lock:
            for name, columns in NODE_TABLES.items():
                self._conn.execute(f"CREATE NODE TABLE IF NOT EXISTS {name}({columns})")
            for name, columns in REL_TABLES.items():
                self._conn.execute(f"CREATE REL TABLE IF NOT EXISTS {name}({columns})")

    def read(self, query: str, params: Mapping[str, Any] | None = None) -> list[Row]:
        with self._lock:
            return _rows(self._conn.execute(query, dict(params or {})))

    def write(self, work: Callable[[Any], T]) -> T:
        with self._lock:
            self._conn.execute("BEGIN TRANSACTION")
            try:
                result = work(_LadybugTx(self._conn))
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")
            return result

    def wipe(self) -> None:
        with self._lock:
            for name in NODE_TABLES:
                self._conn.execute(f"MATCH (n:{name}) DETACH DELETE n")

    def close(self) -> None:
        with self._lock:
            self._conn.close()
            self._db.close()
