"""MCP stdio start-up time, tool-call latency over stdio and HTTP, and HTTP throughput with 8
concurrent clients.

Run: .venv/bin/python benchmarks/mcp_latency.py [--calls 200] [--starts 10]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx2
from mcp import Client
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from hivemind_lab.mcp_server.tokens import add_token


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


async def calls(call, n: int) -> tuple[list[float], list[float]]:
    writes, reads = [], []
    for i in range(n):
        t0 = time.perf_counter()
        await call(
            "hivemind_assert",
            {
                "subject": f"topic {i % 50}",
                "predicate": "relates_to",
                "obj": f"idea {i}",
                "confidence": 0.7,
                "domain": "theory",
            },
        )
        writes.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        await call(
            "hivemind_query",
            {"question": f"what about topic {i % 50}?", "max_tokens": 500, "domain": "theory"},
        )
        reads.append(time.perf_counter() - t0)
    return writes, reads


def server_env(tmp: Path, **values: str) -> dict[str, str]:
    """An explicit environment for the server (nothing inherited but PATH)."""
    return {"PATH": os.environ.get("PATH", os.defpath), "HOME": str(tmp), **values}


def startup(tmp: Path, runs: int) -> None:
    """Spawn a stdio server and time it until tools/list is answered: wall clock, and the
    server's CPU time (user + system, from /proc) which does not depend on the machine's load."""
    walls, cpus = [], []
    hello = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "bench", "version": "1"},
        },
    }
    ready = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}
    for i in range(runs):
        env = server_env(tmp, SOURCE_MODEL="claude", HIVEMIND_DB_PATH=str(tmp / f"start{i}.lbdb"))
        start = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-m", "hivemind_lab", "mcp", "serve"],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        assert proc.stdin is not None and proc.stdout is not None
        for message in (hello, ready, listing):
            proc.stdin.write(json.dumps(message).encode() + b"\n")
        proc.stdin.flush()
        proc.stdout.readline()
        proc.stdout.readline()
        walls.append(time.perf_counter() - start)
        stat = Path(f"/proc/{proc.pid}/stat")
        if stat.exists():
            fields = stat.read_text().rsplit(")", 1)[1].split()
            cpus.append((int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK"))
        proc.stdin.close()
        proc.wait(timeout=30)
    walls.sort()
    cpu = f", CPU median {sorted(cpus)[len(cpus) // 2]:.2f} s" if cpus else ""
    print(
        f"stdio start-up to tools/list ({runs} runs): wall min {walls[0]:.2f} s, "
        f"median {walls[len(walls) // 2]:.2f} s{cpu} (load average {os.getloadavg()[0]:.1f})"
    )


async def stdio(tmp: Path, n: int) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "hivemind_lab", "mcp", "serve"],
        env=server_env(tmp, SOURCE_MODEL="claude", HIVEMIND_DB_PATH=str(tmp / "s.lbdb")),
    )
    async with Client(params) as client:
        writes, reads = await calls(client.call_tool, n)
    print(
        f"stdio   assert p50 {pct(writes, 0.5):6.1f} ms  p95 {pct(writes, 0.95):6.1f} ms | "
        f"query p50 {pct(reads, 0.5):6.1f} ms  p95 {pct(reads, 0.95):6.1f} ms"
    )


async def http(tmp: Path, n: int) -> None:
    tokens_file = tmp / "tokens.json"
    tokens = [add_token(tokens_file, f"client-{i}") for i in range(8)]
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "hivemind_lab",
            "mcp",
            "serve",
            "--transport",
            "http",
            "--port",
            str(port),
            "--token-file",
            str(tokens_file),
        ],
        env=server_env(tmp, HIVEMIND_DB_PATH=str(tmp / "h.lbdb")),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}/mcp"
    for _ in range(300):
        try:
            httpx2.get(url, timeout=1)
            break
        except httpx2.TransportError:
            time.sleep(0.2)

    async def session_run(token: str, count: int) -> tuple[list[float], list[float]]:
        async with (
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}) as client,
            streamable_http_client(url, http_client=client) as streams,
            ClientSession(streams[0], streams[1]) as session,
        ):
            await session.initialize()
            return await calls(session.call_tool, count)

    try:
        writes, reads = await session_run(tokens[0], n)
        print(
            f"http    assert p50 {pct(writes, 0.5):6.1f} ms  p95 {pct(writes, 0.95):6.1f} ms | "
            f"query p50 {pct(reads, 0.5):6.1f} ms  p95 {pct(reads, 0.95):6.1f} ms"
        )
        start = time.perf_counter()
        per_client = max(1, n // 4)
        results = await asyncio.gather(*(session_run(t, per_client) for t in tokens))
        wall = time.perf_counter() - start
        total = sum(len(w) + len(r) for w, r in results)
        all_calls = [x for w, r in results for x in (*w, *r)]
        print(
            f"http x8 {total} calls in {wall:.1f} s = {total / wall:.0f} calls/s "
            f"(p50 {pct(all_calls, 0.5):.1f} ms, p95 {pct(all_calls, 0.95):.1f} ms)"
        )
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--starts", type=int, default=10, help="stdio start-ups to time")
    args = parser.parse_args()
    print(
        f"machine: {platform.node()} · {os.cpu_count()} cores · python {platform.python_version()} "
        f"· {time.strftime('%Y-%m-%d')} · embedded store"
    )
    with tempfile.TemporaryDirectory() as tmp:
        startup(Path(tmp), args.starts)
        asyncio.run(stdio(Path(tmp), args.calls))
        asyncio.run(http(Path(tmp), args.calls))


if __name__ == "__main__":
    main()
