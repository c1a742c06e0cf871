"""The hivemind graph schema (see docs/design/graph-schema.md).

Assertions hang off ``Entity`` nodes (one per normalised subject or object text): looking up an
assertion's subject is a primary-key lookup plus an adjacency walk on both stores, which is what
keeps conflict detection fast at 10⁵ assertions (LadybugDB indexes primary keys only). The
subject entity also serves as the lock that serialises concurrent writes about one subject.
"""

from __future__ import annotations

NODE_TABLES = {
    "Assertion": (
        "id STRING PRIMARY KEY, subject STRING, predicate STRING, object STRING, "
        "subject_key STRING, predicate_key STRING, object_key STRING, confidence DOUBLE, "
        "source_model STRING, domain STRING, evidence STRING, created_at STRING, "
        "updated_at STRING, survived_consensus BOOLEAN, status STRING, support INT64"
    ),
    "Model": "name STRING PRIMARY KEY, assertion_count INT64, conflict_wins INT64, last_active STRING",
    "Entity": "key STRING PRIMARY KEY, name STRING, version INT64",
    "Conflict": (
        "id STRING PRIMARY KEY, domain STRING, subject STRING, kind STRING, status STRING, "
        "resolution STRING, a_id STRING, b_id STRING, created_at STRING, resolved_at STRING, "
        "consensus_score DOUBLE"
    ),
    "Vote": (
        "id STRING PRIMARY KEY, conflict_id STRING, model STRING, resolution STRING, "
        "evidence STRING, synthesized_claim STRING, weight DOUBLE, created_at STRING"
    ),
    "Record": "id STRING PRIMARY KEY, model STRING, domain STRING, decided INT64, won INT64",
    "Verdict": (
        "id STRING PRIMARY KEY, domain STRING, subject STRING, winner STRING, posterior DOUBLE, "
        "decided_at STRING, revised_at STRING, revisions INT64"
    ),
    "Revision": (
        "id STRING PRIMARY KEY, verdict_id STRING, from_winner STRING, to_winner STRING, "
        "posterior DOUBLE, created_at STRING"
    ),
    "Withdrawal": (
        "id STRING PRIMARY KEY, assertion_id STRING, model STRING, reason STRING, "
        "outcome STRING, created_at STRING"
    ),
    "Pattern": (
        "id STRING PRIMARY KEY, domain STRING, description STRING, frequency INT64, "
        "confidence DOUBLE, discovered_by STRING, created_at STRING"
    ),
    # Facts about the store itself: ``keys`` holds the key rules' version (graph/rekey.py).
    "Meta": "key STRING PRIMARY KEY, value STRING",
}

REL_TABLES = {
    "ASSERTED_BY": "FROM Assertion TO Model",
    "CORROBORATED_BY": "FROM Assertion TO Model, confidence DOUBLE, evidence STRING, created_at STRING",
    "SUBJECT_REF": "FROM Assertion TO Entity",
    "OBJECT_REF": "FROM Assertion TO Entity",
    "RELATES_TO": (
        "FROM Entity TO Entity, predicate STRING, confidence DOUBLE, source STRING, assertion_id STRING"
    ),
    "CONFLICTS_WITH": "FROM Assertion TO Assertion",
    "INVOLVES": "FROM Conflict TO Assertion, side STRING",
    "VOTED_ON": "FROM Vote TO Conflict",
    "RESOLVED_BY": "FROM Conflict TO Model",
    "SYNTHESIZED_FROM": "FROM Assertion TO Conflict",
    "FORKED_FROM": "FROM Assertion TO Conflict",
    "PART_OF": "FROM Assertion TO Pattern",
    "WITHDRAWS": "FROM Withdrawal TO Assertion",
    "DECIDES": "FROM Verdict TO Conflict",
}

NEO4J_SCHEMA = [
    "CREATE CONSTRAINT assertion_id IF NOT EXISTS FOR (a:Assertion) REQUIRE a.id IS UNIQUE",
    "CREATE CONSTRAINT conflict_id IF NOT EXISTS FOR (c:Conflict) REQUIRE c.id IS UNIQUE",
    "CREATE CONSTRAINT model_name IF NOT EXISTS FOR (m:Model) REQUIRE m.name IS UNIQUE",
    "CREATE CONSTRAINT entity_key IF NOT EXISTS FOR (e:Entity) REQUIRE e.key IS UNIQUE",
    "CREATE CONSTRAINT vote_id IF NOT EXISTS FOR (v:Vote) REQUIRE v.id IS UNIQUE",
    "CREATE CONSTRAINT record_id IF NOT EXISTS FOR (r:Record) REQUIRE r.id IS UNIQUE",
    "CREATE CONSTRAINT pattern_id IF NOT EXISTS FOR (p:Pattern) REQUIRE p.id IS UNIQUE",
    "CREATE CONSTRAINT verdict_id IF NOT EXISTS FOR (v:Verdict) REQUIRE v.id IS UNIQUE",
    "CREATE CONSTRAINT revision_id IF NOT EXISTS FOR (r:Revision) REQUIRE r.id IS UNIQUE",
    "CREATE INDEX verdict_domain IF NOT EXISTS FOR (v:Verdict) ON (v.domain)",
    "CREATE CONSTRAINT withdrawal_id IF NOT EXISTS FOR (w:Withdrawal) REQUIRE w.id IS UNIQUE",
    "CREATE CONSTRAINT meta_key IF NOT EXISTS FOR (m:Meta) REQUIRE m.key IS UNIQUE",
    "CREATE INDEX assertion_domain IF NOT EXISTS FOR (a:Assertion) ON (a.domain)",
    # No query looks assertions up by display subject or by owner (subjects go through their
    # Entity key, models through ASSERTED_BY), and every write paid for both indexes: dropped
    # from stores made before 2026-12-02.
    "DROP INDEX assertion_subject IF EXISTS",
    "DROP INDEX assertion_model IF EXISTS",
    "CREATE INDEX conflict_status IF NOT EXISTS FOR (c:Conflict) ON (c.status, c.domain)",
    "CREATE INDEX vote_conflict IF NOT EXISTS FOR (v:Vote) ON (v.conflict_id)",
]


def columns(table: str) -> list[tuple[str, str]]:
    """(name, type) of a node table's or relationship table's properties, in schema order."""
    if table in NODE_TABLES:
        spec = NODE_TABLES[table]
    else:
        spec = REL_TABLES[table].split(",", 1)[1] if "," in REL_TABLES[table] else ""
    out = []
    for part in spec.split(","):
        words = part.split()
        if len(words) >= 2 and words[0] != "FROM":
            out.append((words[0], words[1]))
    return out


def assertion_relationships(model: str, assertions: list[dict]) -> dict[str, list[dict]]:
    """The relationships a batch of new assertions needs, as rows with ``from``/``to`` keys."""
    return {
        "ASSERTED_BY": [{"from": a["id"], "to": model} for a in assertions],
        "SUBJECT_REF": [{"from": a["id"], "to": a["subject_key"]} for a in assertions],
        "OBJECT_REF": [{"from": a["id"], "to": a["object_key"]} for a in assertions],
        "RELATES_TO": [
            {
                "from": a["subject_key"],
                "to": a["object_key"],
                "predicate": a["predicate_key"],
                "confidence": a["confidence"],
                "source": model,
                "assertion_id": a["id"],
            }
            for a in assertions
        ],
    }
