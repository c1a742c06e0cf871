"""Embedded LadybugDB (the maintained Kùzu fork): the zero-set-up default store.

LadybugDB allows one process per database file and one write transaction at a time (a concurrent
write raises instead of waiting), so every operation here is serialised by one lock; several
processes should share a graph through the MCP server's HTTP transport or through Neo4j.
"""

from __future__ import annotations

import contextlib
import tempfile
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from hivemind_lab.errors import InputError
from hivemind_lab.graph.schema import NODE_TABLES, REL_TABLES, assertion_relationships, columns
from hivemind_lab.graph.store import UPSERT_LOADER, Row, StoreBusyError, StoreError

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
        self.version = 0
        """Counts committed writes: all writers live in this process, so a reader can tell
        whether anything changed since it last looked."""

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
            self.version += 1
            return result

    def _copy(
        self,
        nodes: Mapping[str, Sequence[Row]],
        rels: Mapping[str, Sequence[Row]],
        before: Sequence[tuple[str, Mapping[str, Any]]] = (),
    ) -> None:
        """COPY from Parquet files: LadybugDB's bulk path (~10⁵ rows/s against ~10³ for
        row-by-row statements), after the ``before`` statements, all in one transaction."""
        import polars as pl

        kinds = {
            "STRING": pl.String,
            "DOUBLE": pl.Float64,
            "INT64": pl.Int64,
            "BOOLEAN": pl.Boolean,
        }
        with tempfile.TemporaryDirectory() as tmp, self._lock:
            files = []
            for table, rows in [*nodes.items(), *rels.items()]:
                if not rows:
                    continue
                cols = columns(table)
                schema = {name: kinds[kind] for name, kind in cols}
                data = {name: [row.get(name) for row in rows] for name, _ in cols}
                if table in REL_TABLES:
                    schema = {"from": pl.String, "to": pl.String, **schema}
                    data = {
                        "from": [r["from"] for r in rows],
                        "to": [r["to"] for r in rows],
                        **data,
                    }
                path = Path(tmp) / f"{table}.parquet"
                pl.DataFrame(data, schema=schema).write_parquet(path)
                files.append((table, path))
            self._conn.execute("BEGIN TRANSACTION")
            try:
                for statement, params in before:
                    self._conn.execute(statement, dict(params))
                for table, path in files:
                    self._conn.execute(f"COPY {table} FROM '{path}'")
            except BaseException:
                # A failed COPY aborts the transaction by itself; roll back if it is still open.
                with contextlib.suppress(RuntimeError):
                    self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")
            self.version += 1

    def load_assertions(
        self,
        model: str,
        entities: Sequence[Row],
        assertions: Sequence[Row],
        *,
        now: str,
        loaders: int = 1,
    ) -> None:
        if loaders != 1:
            raise InputError(
                "loaders",
                f"embedded LadybugDB has a single writer, so only loaders=1 is allowed, got "
                f"{loaders!r} (parallel loaders need the neo4j store)",
            )
        known = {
            r["k"]
            for r in self.read(
                "MATCH (e:Entity) WHERE e.key IN $keys RETURN e.key AS k",
                {"keys": [e["key"] for e in entities]},
            )
        }
        self._copy(
            {"Entity": [e for e in entities if e["key"] not in known], "Assertion": assertions},
            assertion_relationships(model, list(assertions)),
            before=[(UPSERT_LOADER, {"m": model, "n": len(assertions), "now": now})],
        )

    def wipe(self) -> None:
        with self._lock:
            for name in NODE_TABLES:
                self._conn.execute(f"MATCH (n:{name}) DETACH DELETE n")
            self.version += 1

    def close(self) -> None:
        with self._lock:
            self._conn.close()
            self._db.close()
