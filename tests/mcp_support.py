"""Helpers of the MCP server tests: spawn `hivemind-lab mcp serve` on stdio or HTTP with an
explicit environment, and read tool results."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from mcp.client.stdio import StdioServerParameters

from hivemind_lab.mcp_server import catalog
from tests.support import REPO, child_env

TOOLS = set(catalog.TOOLS)
"""What a server must list (`serve --help` counts from the same catalog)."""
T = "theory"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def served(tmp_path: Path, transport: str, env: dict[str, str], *extra: str) -> Iterator[int]:
    """`hivemind-lab mcp serve` in a subprocess on a free port, until the block ends."""
    with served_process(tmp_path, transport, env, *extra) as (port, _):
        yield port


@contextmanager
def served_process(
    tmp_path: Path, transport: str, env: dict[str, str], *extra: str
) -> Iterator[tuple[int, subprocess.Popen]]:
    """`served`, yielding the server's process beside its port."""
    port = free_port()
    log = (tmp_path / f"{transport}-{port}.log").open("w")
    command = [sys.executable, "-m", "hivemind_lab", "mcp", "serve", "--transport", transport]
    proc = subprocess.Popen(
        [*command, "--port", str(port), *extra],
        env=child_env(tmp_path, **env),
        stdout=log,
        stderr=log,
    )
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            assert proc.poll() is None, (tmp_path / f"{transport}-{port}.log").read_text()
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                time.sleep(0.2)
        yield port, proc
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        log.close()


def stdio_params(env: dict[str, str]) -> StdioServerParameters:
    home = Path(env.get("HIVEMIND_DB_PATH", REPO / ".cache" / "home")).parent
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "hivemind_lab", "mcp", "serve"],
        env=child_env(home, **env),
    )


def cpu_seconds(pid: int) -> float:
    """User and system CPU time a process has used so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def data(result) -> dict:
    assert not result.is_error, result.content[0].text
    return result.structured_content


def rpc(method: str, **params) -> dict:
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}


async def divergence(runs: Path, model_a: str, model_b: str, db: Path) -> tuple[dict, set[str]]:
    """Export every run under ``runs`` into a fresh embedded graph at ``db`` and ask the MCP
    server, in process, what ``model_a`` and ``model_b`` diverge on: the tool's report, and
    the source models the graph holds claims from."""
    import json

    from mcp import Client

    from hivemind_lab.experiments.graph_export import analysis_graph, export_runs
    from hivemind_lab.graph import GraphConfig, open_store
    from hivemind_lab.mcp_server import ServerSettings, build_server

    config = GraphConfig(db_path=db)
    store = open_store(config)
    try:
        graph = analysis_graph(store, config)
        export_runs(graph, runs)
        held = {x.source_model for x in graph.snapshot().assertions.values()}
        async with Client(build_server(graph, ServerSettings(source_model="claude"))) as client:
            said = await client.call_tool(
                "hivemind_divergence",
                {"model_a": model_a, "model_b": model_b, "domain": "strategy"},
            )
        assert not said.is_error, said.content
        return json.loads(said.content[0].text), held
    finally:
        store.close()
