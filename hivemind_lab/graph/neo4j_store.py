"""Neo4j over Bolt with the official driver: the store for a graph shared by many processes.

Works unchanged against a single server (``bolt://``) or a cluster (``neo4j://``,
``neo4j+s://``): reads are routed to readers, writes to the leader, and write transactions are
retried by the driver on transient errors (deadlocks, leader switches).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from hivemind_lab.graph.schema import NEO4J_SCHEMA, NODE_TABLES
from hivemind_lab.graph.store import UPSERT_LOADER, Row, StoreError

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

    def load_assertions(
        self, model: str, entities: Sequence[Row], assertions: Sequence[Row], *, now: str
    ) -> None:
        """One transaction: the model, then entities, then one statement per batch of 10,000
        that creates the assertions and all four relationships together (several times faster
        than one statement per relationship)."""
        batch = 10_000
        create = (
            "UNWIND $rows AS r MATCH (m:Model {name: $m}) MATCH (s:Entity {key: r.subject_key}) "
            "MATCH (o:Entity {key: r.object_key}) CREATE (a:Assertion) SET a = r "
            "CREATE (a)-[:ASSERTED_BY]->(m), (a)-[:SUBJECT_REF]->(s), (a)-[:OBJECT_REF]->(o), "
            "(s)-[:RELATES_TO {predicate: r.predicate_key, confidence: r.confidence, source: $m, "
            "assertion_id: r.id}]->(o)"
        )

        def work(tx: Any) -> None:
            tx.run(UPSERT_LOADER, {"m": model, "n": len(assertions), "now": now}).consume()
            for i in range(0, len(entities), batch):
                tx.run(
                    "UNWIND $rows AS r MERGE (n:Entity {key: r.key}) ON CREATE SET n = r",
                    {"rows": list(entities[i : i + batch])},
                ).consume()
            for i in range(0, len(assertions), batch):
                tx.run(create, {"rows": list(assertions[i : i + batch]), "m": model}).consume()

        with self._session("write") as session:
            session.execute_write(work)

    def wipe(self) -> None:
        labels = "|".join(NODE_TABLES)
        with self._session("write") as session:
            session.run(
                f"MATCH (n:{labels}) CALL (n) {{ DETACH DELETE n }} IN TRANSACTIONS OF 1000 ROWS"
            ).consume()

    def close(self) -> None:
        self._driver.close()
