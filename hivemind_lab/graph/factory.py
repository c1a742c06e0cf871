"""Open the configured store. Kept apart from the protocol module so the stores can import the
protocol's types without the protocol importing the stores."""

from __future__ import annotations

from hivemind_lab.graph.config import GraphConfig
from hivemind_lab.graph.store import GraphStore


def open_store(config: GraphConfig) -> GraphStore:
    """Open the configured store, make sure its schema exists and that its keys follow the
    current key rules (a graph written by an older version is re-keyed once, `rekey`)."""
    store: GraphStore
    if config.store == "neo4j":
        from hivemind_lab.graph.neo4j_store import Neo4jStore

        store = Neo4jStore(
            uri=config.neo4j_uri or "",
            user=config.neo4j_user or "",
            password=config.neo4j_password or "",
            database=config.neo4j_database,
        )
    else:
        from hivemind_lab.graph.ladybug_store import LadybugStore

        store = LadybugStore(config.db_path)
    store.init_schema()
    from hivemind_lab.graph.rekey import rekey

    rekey(store)
    return store
