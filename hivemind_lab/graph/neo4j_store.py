"""Neo4j over Bolt with the official driver: the store for a graph shared by many processes.

Works unchanged against a single server (``bolt://``) or a cluster (``neo4j://``,
``neo4j+s://``): reads are routed to readers, writes to the leader, and write transactions are
retried by the driver on transient errors (deadlocks, leader switches).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from hivemind_lab.graph.schema import NEO4J_SCHEMA, NODE_TABLES, PRIMARY_KEYS, endpoints
from hivemind_lab.graph.store import Row, StoreError

T = TypeVar("T")


class _Neo4jTx:
    def __init__(self, tx: Any) -> None:
        self._tx = tx

    def run(self, query: str, params: Mapping[str, Any] | None = None) -> list[Row]:
        return [record.data() for record in self._tx.run(query, dict(params or {}))]


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

    def bulk_insert(
        self, nodes: Mapping[str, Sequence[Row]], rels: Mapping[str, Sequence[Row]]
    ) -> None:
        """UNWIND batches of 5,000 rows, one transaction per batch.

        One transaction for 10⁵ rows would exceed the server's transaction memory, so batches
        commit separately: an interrupted bulk load leaves the batches before it in place (bulk
        loading is for known-consistent data and can be re-run on a wiped store).
        """
        batch = 5_000
        with self._session("write") as session:
            for label, rows in nodes.items():
                query = f"UNWIND $rows AS r CREATE (n:{label}) SET n = r"
                for i in range(0, len(rows), batch):
                    chunk = list(rows[i : i + batch])
                    session.execute_write(
                        lambda tx, q=query, c=chunk: tx.run(q, {"rows": c}).consume()
                    )
            for rel, rows in rels.items():
                source, target = endpoints(rel)
                query = (
                    f"UNWIND $rows AS r MATCH (a:{source} {{{PRIMARY_KEYS[source]}: r.`from`}}), "
                    f"(b:{target} {{{PRIMARY_KEYS[target]}: r.`to`}}) CREATE (a)-[x:{rel}]->(b) "
                    "SET x = r.props"
                )
                for i in range(0, len(rows), batch):
                    chunk = [
                        {
                            "from": r["from"],
                            "to": r["to"],
                            "props": {k: v for k, v in r.items() if k not in ("from", "to")},
                        }
                        for r in rows[i : i + batch]
                    ]
                    session.execute_write(
                        lambda tx, q=query, c=chunk: tx.run(q, {"rows": c}).consume()
                    )

    def wipe(self) -> None:
        labels = "|".join(NODE_TABLES)
        with self._session("write") as session:
            session.run(
                f"MATCH (n:{labels}) CALL (n) {{ DETACH DELETE n }} IN TRANSACTIONS OF 10000 ROWS"
            ).consume()

    def close(self) -> None:
        self._driver.close()
