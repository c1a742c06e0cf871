"""Neo4j over Bolt with the official driver: the store for a graph shared by many processes.

Works unchanged against a single server (``bolt://``) or a cluster (``neo4j://``,
``neo4j+s://``): reads are routed to readers, writes to the leader, and write transactions are
retried by the driver on transient errors (deadlocks, leader switches).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from typing import Any, TypeVar

from hivemind_lab.graph.partition import partition_rows
from hivemind_lab.graph.schema import NEO4J_SCHEMA, NODE_TABLES, columns
from hivemind_lab.graph.store import UPSERT_LOADER, Row, StoreError

T = TypeVar("T")


_BATCH = 10_000
_IN_FLIGHT_ROWS = 20_000
"""Rows in the open transactions of all parallel loaders together: the server caps the memory
of all open transactions (~700 MiB with a 1 GiB heap; a single 50,000-row load exceeds it)."""
_ASSERTION_FIELDS = [name for name, _ in columns("Assertion")]
_EXISTING_ENTITIES = "UNWIND $keys AS k MATCH (e:Entity {key: k}) RETURN k"
_MERGE_ENTITIES = (
    "UNWIND range(0, size($key) - 1) AS i MERGE (n:Entity {key: $key[i]}) "
    "ON CREATE SET n.name = $name[i], n.version = $version[i]"
)
"""Creates the entities a chunk needs that did not exist when it looked (MERGE, so one made
meanwhile by another writer is reused)."""
_CREATE_ASSERTIONS = (
    "MATCH (m:Model {name: $m}) UNWIND range(0, size($id) - 1) AS i "
    "MATCH (s:Entity {key: $subject_key[i]}) MATCH (o:Entity {key: $object_key[i]}) "
    f"CREATE (a:Assertion {{{', '.join(f'{f}: ${f}[i]' for f in _ASSERTION_FIELDS)}}}) "
    "CREATE (a)-[:ASSERTED_BY]->(m), (a)-[:SUBJECT_REF]->(s), (a)-[:OBJECT_REF]->(o), "
    "(s)-[:RELATES_TO {predicate: $predicate_key[i], confidence: $confidence[i], source: $m, "
    "assertion_id: $id[i]}]->(o)"
)
"""Parameters are columns (one list per property) rather than one map per row: the server
decodes no key strings per row, and naming each property (instead of ``SET a = row``) lets the
planner write in one pass, with no Eager buffering of the whole batch."""


class _Neo4jTx:
    def __init__(self, tx: Any) -> None:
        self._tx = tx

    def run(self, query: str, params: Mapping[str, Any] | None = None) -> list[Row]:
        return [record.data() for record in self._tx.run(query, dict(params or {}))]


def _write_chunk(tx: Any, model: str, by_key: Mapping[str, Row], chunk: list[Row]) -> list[str]:
    """Entities of ``chunk`` that do not exist yet, then its assertions; returns the keys of the
    entities it created (so a failed load can delete them again)."""
    keys = sorted({r["subject_key"] for r in chunk} | {r["object_key"] for r in chunk})
    known: set[str] = set()
    for i in range(0, len(keys), _BATCH):
        known.update(r["k"] for r in tx.run(_EXISTING_ENTITIES, {"keys": keys[i : i + _BATCH]}))
    fresh = [k for k in keys if k not in known]
    for i in range(0, len(fresh), _BATCH):
        rows = [by_key[k] for k in fresh[i : i + _BATCH]]
        entity = {f: [r[f] for r in rows] for f in ("key", "name", "version")}
        tx.run(_MERGE_ENTITIES, entity).consume()
    for i in range(0, len(chunk), _BATCH):
        rows = chunk[i : i + _BATCH]
        params = {f: [r[f] for r in rows] for f in _ASSERTION_FIELDS}
        tx.run(_CREATE_ASSERTIONS, {**params, "m": model}).consume()
    return fresh


class Neo4jStore:
    """GraphStore over a Neo4j server or cluster."""

    kind = "neo4j"
    version = None
    """Other processes write too: readers cannot count changes locally."""

    def __init__(self, *, uri: str, user: str, password: str, database: str | None = None) -> None:
        import neo4j

        self._neo4j = neo4j
        self.database = database
        try:
            self._driver = neo4j.GraphDatabase.driver(
                uri, auth=(user, password), notifications_min_severity="OFF"
            )
            self._driver.verify_connectivity()
        except neo4j.exceptions.AuthError as exc:
            raise StoreError(f"Neo4j at {uri} refused the credentials of {user!r}") from exc
        except (neo4j.exceptions.ServiceUnavailable, ValueError, OSError) as exc:
            raise StoreError(f"Neo4j at {uri!r} is not reachable: {exc}") from exc

    def _session(self, access: str) -> Any:
        mode = self._neo4j.READ_ACCESS if access == "read" else self._neo4j.WRITE_ACCESS
        return self._driver.session(database=self.database, default_access_mode=mode)

    def init_schema(self) -> None:
        with self._session("write") as session:
            for statement in NEO4J_SCHEMA:
                session.run(statement).consume()

    def read(self, query: str, params: Mapping[str, Any] | None = None) -> list[Row]:
        with self._session("read") as session:
            return session.execute_read(lambda tx: _Neo4jTx(tx).run(query, params))

    def write(self, work: Callable[[Any], T]) -> T:
        with self._session("write") as session:
            return session.execute_write(lambda tx: work(_Neo4jTx(tx)))

    def load_assertions(
        self,
        model: str,
        entities: Sequence[Row],
        assertions: Sequence[Row],
        *,
        now: str,
        loaders: int = 1,
    ) -> None:
        """Creates the assertions and all four relationships in one statement per batch of
        10,000 rows (several times faster than one statement per relationship).

        A load that fits in ``_IN_FLIGHT_ROWS`` is one transaction. A larger one, or one split
        across ``loaders`` > 1 threads (own sessions, entity-disjoint parts), commits in chunks,
        because the server caps the memory of all open transactions together: if any chunk
        fails, the loaders stop and what was committed is deleted again (assertions, the
        entities they created, the model's credit) before the error is raised. Only a process
        killed mid-load can leave committed chunks behind."""
        parts = partition_rows(assertions, loaders) if loaders > 1 else [list(assertions)]
        by_key = {e["key"]: e for e in entities}
        if len(parts) == 1 and len(assertions) <= _IN_FLIGHT_ROWS:

            def whole(tx: Any) -> None:
                tx.run(UPSERT_LOADER, {"m": model, "n": len(assertions), "now": now}).consume()
                _write_chunk(tx, model, by_key, parts[0])

            with self._session("write") as session:
                session.execute_write(whole)
            return
        self._load_chunked(model, by_key, parts, now=now)

    def _load_chunked(
        self, model: str, by_key: Mapping[str, Row], parts: list[list[Row]], *, now: str
    ) -> None:
        """One loader per part, each committing transactions of ``_IN_FLIGHT_ROWS /
        len(parts)`` rows. Parts touch disjoint entities, so loaders only share the model node,
        which is upserted once up front (its counter would otherwise serialise them)."""
        total = sum(len(p) for p in parts)
        committed: list[tuple[list[Row], list[str]]] = []
        stop = threading.Event()

        def upsert(tx: Any) -> dict[str, Any]:
            before = tx.run(
                "OPTIONAL MATCH (m:Model {name: $m}) RETURN m IS NULL AS fresh, "
                "m.last_active AS last",
                {"m": model},
            ).single()
            tx.run(UPSERT_LOADER, {"m": model, "n": total, "now": now}).consume()
            return dict(before)

        step = max(1, _IN_FLIGHT_ROWS // len(parts))

        def load(part: list[Row]) -> None:
            with self._session("write") as session:
                for i in range(0, len(part), step):
                    if stop.is_set():
                        return
                    chunk = part[i : i + step]
                    try:
                        fresh = session.execute_write(_write_chunk, model, by_key, chunk)
                    except BaseException:
                        stop.set()
                        raise
                    committed.append((chunk, fresh))

        with self._session("write") as session:
            before = session.execute_write(upsert)
        if len(parts) == 1:
            try:
                load(parts[0])
            except BaseException:
                self._undo(model, committed, total, before)
                raise
            return
        with ThreadPoolExecutor(max_workers=len(parts)) as pool:
            futures = [pool.submit(load, part) for part in parts]
            wait(futures)
        failed = [f.exception() for f in futures if f.exception() is not None]
        if failed:
            self._undo(model, committed, total, before)
            error = failed[0]
            assert error is not None
            raise error

    def _undo(
        self,
        model: str,
        committed: list[tuple[list[Row], list[str]]],
        total: int,
        before: Mapping[str, Any],
    ) -> None:
        """Deletes what committed chunks of a failed load wrote and takes back the model's
        credit, leaving the graph as it was before the load."""
        ids = [r["id"] for chunk, _ in committed for r in chunk]
        fresh = [k for _, keys in committed for k in keys]

        def undo(tx: Any) -> None:
            for i in range(0, len(ids), _BATCH):
                tx.run(
                    "UNWIND $ids AS id MATCH (a:Assertion {id: id})-[:SUBJECT_REF]->(:Entity)"
                    "-[r:RELATES_TO {assertion_id: id}]->(:Entity) DELETE r WITH DISTINCT a "
                    "DETACH DELETE a",
                    {"ids": ids[i : i + _BATCH]},
                ).consume()
            tx.run(
                "UNWIND $keys AS k MATCH (e:Entity {key: k}) WHERE NOT (e)--() DELETE e",
                {"keys": fresh},
            ).consume()
            if before["fresh"]:
                tx.run(
                    "MATCH (m:Model {name: $m}) WHERE NOT (m)--() DELETE m", {"m": model}
                ).consume()
            tx.run(
                "MATCH (m:Model {name: $m}) SET m.assertion_count = m.assertion_count - $n, "
                "m.last_active = coalesce($last, m.last_active)",
                {"m": model, "n": total, "last": before["last"]},
            ).consume()

        with self._session("write") as session:
            session.execute_write(undo)

    def wipe(self) -> None:
        labels = "|".join(NODE_TABLES)
        with self._session("write") as session:
            session.run(
                f"MATCH (n:{labels}) CALL (n) {{ DETACH DELETE n }} IN TRANSACTIONS OF 1000 ROWS"
            ).consume()

    def close(self) -> None:
        self._driver.close()
