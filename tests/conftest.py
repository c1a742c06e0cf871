"""Shared fixtures."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator

import pytest

from hivemind_lab.problems import Problem, load_problem
from tests.support import PROBLEMS

# Variables of the caller that the code, or the terminal libraries under the CLI (rich, click),
# read: removed before the test modules are imported (the CLI's consoles read them when they are
# made), so no test sees what the caller happens to export. Subprocesses get their whole
# environment from tests.support.child_env.
CALLER_VARIABLE = re.compile(
    r"(HIVEMIND|NEO4J|OPENAI|CONSENSUS)_\w*|SOURCE_MODEL|CONFLICT_THRESHOLD|VOTING_WINDOW_HOURS"
    r"|MAX_CONTEXT_TOKENS|XDG_DATA_HOME|COLUMNS|LINES|FORCE_COLOR|NO_COLOR|CLICOLOR\w*|TTY_\w+"
    r"|TERM|TZ"
)


def pytest_configure(config: pytest.Config) -> None:
    for name in [n for n in os.environ if CALLER_VARIABLE.fullmatch(n)]:
        del os.environ[name]
    time.tzset()  # TZ is read once: its removal applies from here


@pytest.fixture(scope="session")
def grocer() -> Problem:
    return load_problem(PROBLEMS / "regional-grocer-discounter-price-war.toml")


# -- graph stores: one contract suite, run on both ---------------------------------------------

import subprocess  # noqa: E402
from pathlib import Path  # noqa: E402

from hivemind_lab.graph import GraphConfig, HivemindGraph, open_store  # noqa: E402
from tests.support import REPO  # noqa: E402

NEO4J_SCRIPT = REPO / "scripts" / "neo4j"
NEO4J_STATE = REPO / ".cache" / "neo4j" / "state.env"


def _read_state() -> dict[str, str]:
    values = {}
    for line in NEO4J_STATE.read_text().splitlines():
        if "=" in line and not line.startswith("#"):
            key, _, value = line.partition("=")
            values[key.strip()] = value.strip().strip('"').strip("'")
    return values


@pytest.fixture(scope="session")
def neo4j_settings() -> Iterator[dict[str, str]]:
    """The project's own throw-away Neo4j server (started if needed). Never the one in the
    caller's NEO4J_URI: the suite wipes the database, and a test must not depend on what the
    caller happens to export."""
    started = subprocess.run([str(NEO4J_SCRIPT), "status"], capture_output=True).returncode != 0
    if started:
        subprocess.run([str(NEO4J_SCRIPT), "start"], check=True, timeout=900)
    yield _read_state()
    if started:
        subprocess.run([str(NEO4J_SCRIPT), "stop"], check=False, timeout=120)


def make_config(
    kind: str, tmp_path: Path, neo4j: dict[str, str] | None, **overrides
) -> GraphConfig:
    if kind == "neo4j":
        assert neo4j is not None
        return GraphConfig(
            store="neo4j",
            neo4j_uri=neo4j["NEO4J_URI"],
            neo4j_user=neo4j["NEO4J_USER"],
            neo4j_password=neo4j["NEO4J_PASSWORD"],
            **overrides,
        )
    return GraphConfig(store="ladybug", db_path=tmp_path / "graph.lbdb", **overrides)


@pytest.fixture(params=["ladybug", "neo4j"])
def store_kind(request) -> str:
    return request.param


# Fixtures that start an outside service, and the marker `make check` deselects them by.
SERVICE_FIXTURES = {"neo4j_settings": "neo4j", "llama_binary": "local_llm"}
SHARED_SERVICES = ("neo4j", "ray", "browser", "local_llm")
"""Markers whose tests share one service or one machine-wide resource, in order of precedence."""


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups off the items
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test that starts a service, however it asks for it (the Neo4j store is also
    reached through the ``store_kind`` parameter, whose fixture asks for the server late)."""
    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        needs = {
            SERVICE_FIXTURES[f] for f in getattr(item, "fixturenames", ()) if f in SERVICE_FIXTURES
        }
        if params.get("store_kind") == "neo4j":
            needs.add("neo4j")
        for name in sorted(needs):
            item.add_marker(name)
        # Under pytest-xdist (`make test` runs two workers), the tests of one outside service
        # run on one worker: the Neo4j tests wipe the one database, the Ray tests start
        # instances that must not meet, one JupyterLab serves a module's notebooks.
        for name in SHARED_SERVICES:
            if item.get_closest_marker(name) is not None:
                item.add_marker(pytest.mark.xdist_group(name))
                break


@pytest.fixture
def graph_factory(store_kind, tmp_path, request) -> Iterator:
    """Builds HivemindGraph instances on a fresh, empty store of the parametrised kind."""
    neo4j = request.getfixturevalue("neo4j_settings") if store_kind == "neo4j" else None
    opened = []

    def make(**overrides) -> HivemindGraph:
        clock = overrides.pop("clock", None)
        predicates = overrides.pop("predicates", None)
        config = make_config(store_kind, tmp_path, neo4j, **overrides)
        if opened and store_kind == "ladybug":
            store = opened[0].store  # one process, one handle on the embedded file
        else:
            store = open_store(config)
            if not opened:
                store.wipe()
        graph = HivemindGraph(store, config, clock=clock, predicates=predicates)
        opened.append(graph)
        return graph

    yield make
    closed = set()
    for graph in opened:
        if id(graph.store) not in closed:
            closed.add(id(graph.store))
            graph.store.close()


@pytest.fixture
def graph(graph_factory) -> HivemindGraph:
    return graph_factory()


@pytest.fixture
def test_model():
    """The content-free agent model (schema-valid, seeded, no domain reasoning): use it where a
    test is about the engine, storage, reports or CLI rather than the stand-in's judgement."""
    from hivemind_lab.agents.testing import TestModel

    return TestModel()
