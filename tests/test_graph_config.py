"""Graph configuration, the embedded store's one-process rule, and the analytics helpers."""

from __future__ import annotations

import subprocess
import sys

import pytest

from hivemind_lab.errors import InputError
from hivemind_lab.graph import GraphConfig, StoreBusyError, open_store
from hivemind_lab.graph.analytics import (
    communities,
    entity_graph,
    islands,
    motif_census,
    pagerank,
    to_networkx,
    triangle_cycles,
)
from hivemind_lab.graph.models import Assertion
from tests.support import child_env


def test_defaults_and_environment():
    config = GraphConfig.from_env({})
    assert config.store == "ladybug"
    assert config.consensus_phi == pytest.approx(0.618)
    assert config.conflict_threshold == 3
    assert config.db_path.name == "hivemind.lbdb"
    custom = GraphConfig.from_env(
        {
            "CONFLICT_THRESHOLD": "5",
            "CONSENSUS_PHI": "0.7",
            "HIVEMIND_DB_PATH": "/tmp/x.lbdb",
            "HIVEMIND_DOMAINS": "a, b",
        }
    )
    assert (custom.conflict_threshold, custom.consensus_phi, str(custom.db_path)) == (
        5,
        0.7,
        "/tmp/x.lbdb",
    )
    assert custom.domains == ("a", "b")


@pytest.mark.parametrize(
    ("env", "name"),
    [
        ({"CONSENSUS_PHI": "0.4"}, "CONSENSUS_PHI"),
        ({"CONSENSUS_PHI": "lots"}, "CONSENSUS_PHI"),
        ({"CONFLICT_THRESHOLD": "0"}, "CONFLICT_THRESHOLD"),
        ({"HIVEMIND_STORE": "mysql"}, "HIVEMIND_STORE"),
        ({"HIVEMIND_STORE": "neo4j", "NEO4J_URI": "bolt://x"}, "NEO4J_USER, NEO4J_PASSWORD"),
        ({"HIVEMIND_STORE": "neo4j"}, "NEO4J_URI"),
    ],
)
def test_bad_configuration_names_the_variable(env, name):
    with pytest.raises(InputError) as info:
        GraphConfig.from_env(env)
    assert name in str(info.value)


def test_neo4j_password_is_never_defaulted_or_shown():
    config = GraphConfig.from_env(
        {
            "HIVEMIND_STORE": "neo4j",
            "NEO4J_URI": "neo4j+s://cluster.example",
            "NEO4J_USER": "u",
            "NEO4J_PASSWORD": "s3cret",
        }
    )
    assert config.neo4j_uri == "neo4j+s://cluster.example"
    assert "s3cret" not in repr(config)


def test_second_process_gets_a_clear_busy_error(tmp_path):
    path = tmp_path / "g.lbdb"
    store = open_store(GraphConfig(db_path=path))
    try:
        code = (
            "from hivemind_lab.graph import GraphConfig, open_store\n"
            f"open_store(GraphConfig(db_path={str(path)!r}))\n"
        )
        proc = subprocess.run(
            [sys.executable, "-c", code],
            env=child_env(tmp_path),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert proc.returncode != 0
        assert "StoreBusyError" in proc.stderr
        assert "another process" in proc.stderr
        assert "--transport http" in proc.stderr
        assert "HIVEMIND_STORE=neo4j" in proc.stderr
    finally:
        store.close()
    open_store(GraphConfig(db_path=path)).close()  # free again once the holder closes
    assert StoreBusyError.__mro__[1].__name__ == "StoreError"


def _a(i: str, s: str, o: str, conf: float = 0.8, model: str = "claude") -> Assertion:
    return Assertion(
        id=i,
        subject=s,
        predicate="influences",
        object=o,
        confidence=conf,
        source_model=model,
        domain="theory",
        created_at="2026-01-01T00:00:00+00:00",
        subject_key=s,
        object_key=o,
        predicate_key="influences",
    )


def test_analytics_on_a_known_graph():
    data = [
        _a("1", "a", "b"),
        _a("2", "b", "c"),
        _a("3", "c", "a"),
        _a("4", "x", "hub"),
        _a("5", "y", "hub"),
        _a("6", "z", "hub"),
        _a("7", "solo", "pair"),
    ]
    graph = entity_graph(data)
    pr = pagerank(graph)
    assert sum(pr.values()) == pytest.approx(1.0)
    assert pr["hub"] > pr["x"]
    assert triangle_cycles(graph) == [("a", "b", "c")]
    census = motif_census(graph)
    assert census["A->B->C->A (cycle)"] == 1
    assert census["A->C, B->C (in-star)"] == 3
    groups = communities(graph)
    assert ["a", "b", "c"] in groups
    assert ["hub", "x", "y", "z"] in groups
    assert ["pair", "solo"] in [sorted(g) for g in islands(graph)]
    nx_graph = to_networkx(graph)
    assert nx_graph.number_of_edges() == len(data)
    assert nx_graph["a"]["b"][0]["assertion_id"] == "1"
