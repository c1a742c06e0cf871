"""Local LLM backend speed: the bundled SmolLM2-135M (Q4_1) on llama.cpp's llama-server.

Runs a one-round deliberation (propose → critique → revise → score) on a sample problem with
two theory agents and two constraint agents through the local backend, then prints:
- seconds per agent call by task kind (wall time of each call, two slots in parallel) with
  prompt and completion tokens per call;
- prompt-processing and generation tokens/s as the server measures them, re-sending one recorded
  request of each kind alone (prompt cache off).
Per task kind it also prints the prompt tokens the server reused from a slot's cache.

``--speed`` instead compares server builds: for each ``--binary`` (default: this checkout's
build) with weight repacking on and off, the server's own prompt and generation tokens/s on one
fixed request sent alone, median of ``--rounds``.

The 135M model checks the plumbing; its answers are not strategy. Set up with `make llama`.
Run: .venv/bin/python benchmarks/local_llm.py [--model-file PATH.gguf]
     .venv/bin/python benchmarks/local_llm.py --speed [--binary PATH ...] [--rounds 5]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import httpx

from hivemind_lab import Calibrations, Limits
from hivemind_lab.agents.backends import BackendChoice, local_server, make_model
from hivemind_lab.deliberation import deliberate
from hivemind_lab.inputs import request_for
from hivemind_lab.llm.base import ChatMessage, ChatRequest, ChatResponse
from hivemind_lab.llm.local import (
    LocalServer,
    LocalServerConfig,
    find_binary,
    resolve_model_file,
    server_version,
)
from hivemind_lab.problems import load_problem

REPO = Path(__file__).resolve().parents[1]
PROBLEM = REPO / "data/problems/regional-grocer-discounter-price-war.toml"
SLOTS = 2
KIND = {
    "ProposalOutput": "propose",
    "CritiqueOutput": "critique",
    "BatchCritiqueOutput": "critique",
    "RevisionOutput": "revise",
    "ScoreOutput": "score",
}


class TimedModel:
    """Records each call's wall time, token usage and request by task kind."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.backend, self.model = inner, inner.backend, inner.model
        self.calls: dict[str, list[tuple[float, int, int, int]]] = defaultdict(list)
        self.requests: dict[str, ChatRequest] = {}

    async def complete(self, request: ChatRequest) -> ChatResponse:
        fmt = request.response_format
        kind = KIND.get(fmt.name, fmt.name) if fmt else "other"
        started = time.perf_counter()
        response = await self.inner.complete(request)
        seconds = time.perf_counter() - started
        usage = response.usage
        self.calls[kind].append(
            (seconds, usage.prompt_tokens, usage.completion_tokens, usage.cached_prompt_tokens)
        )
        self.requests.setdefault(kind, request)
        return response


def server_timings(base_url: str, model: str, request: ChatRequest) -> dict[str, float]:
    """The server's own timings for one request sent alone (prompt cache off)."""
    body: dict[str, Any] = {
        "model": model,
        "messages": [m.model_dump() for m in request.messages],
        "temperature": request.temperature,
        "cache_prompt": False,
    }
    if request.max_tokens is not None:
        body["max_tokens"] = request.max_tokens
    if request.response_format is not None:
        fmt = request.response_format
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": fmt.name, "schema": fmt.json_schema},
        }
    reply = httpx.post(f"{base_url}/chat/completions", json=body, timeout=600).json()
    return dict(reply.get("timings", {}))


def speed(binaries: list[Path], model_file: Path, rounds: int) -> None:
    """Prompt and generation tokens/s of each binary with repacking on and off."""
    problem = load_problem(PROBLEM)
    text = f"{problem.title}. {problem.question} " * 3
    request = ChatRequest(
        messages=(
            ChatMessage(role="system", content="You advise a regional grocer."),
            ChatMessage(role="user", content=f"{text}\nList three options, one line each."),
        ),
        max_tokens=64,
    )
    print(f"{'binary':<44} {'repack':<6} {'prompt tok':>10} {'prompt tok/s':>12} {'gen tok/s':>10}")
    for binary in binaries:
        for repack in (True, False):
            config = LocalServerConfig(binary=binary, model_file=model_file, repack=repack)
            with LocalServer(config) as server:
                base_url = server.endpoint.base_url
                runs = [server_timings(base_url, model_file.name, request) for _ in range(rounds)]
            prompt = statistics.median(t.get("prompt_per_second", 0) for t in runs)
            gen = statistics.median(t.get("predicted_per_second", 0) for t in runs)
            name = f"{binary.parent.parent.name} ({server_version(binary)})"
            print(
                f"{name:<44} {'on' if repack else 'off':<6} {runs[0].get('prompt_n', 0):>10} "
                f"{prompt:>12.0f} {gen:>10.1f}"
            )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model-file", type=Path, default=None)
    parser.add_argument("--speed", action="store_true", help="compare server builds")
    parser.add_argument("--binary", type=Path, action="append", default=[])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores; {platform.platform()}")
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if args.speed:
        binaries = args.binary or [find_binary()]
        speed(binaries, resolve_model_file(args.model_file), args.rounds)
        return
    choice = BackendChoice(backend="local", model_file=args.model_file)
    problem = load_problem(PROBLEM)
    request = request_for(problem, density=20_000, profile=("legal", "financial"), sufficiency=1)
    started = time.perf_counter()
    with local_server(choice, slots=SLOTS) as server:
        endpoint = server.endpoint
        info = endpoint.info
        print(
            f"server: {info.server_version}; model {info.model_file} "
            f"({info.model_bytes / 1e6:.0f} MB); {info.slots} slots x {info.context_size} "
            f"tokens, {info.threads} threads; ready in {time.perf_counter() - started:.1f} s"
        )
        timed = TimedModel(make_model(choice, endpoint=endpoint))
        with tempfile.TemporaryDirectory() as tmp:
            run_started = time.perf_counter()
            result = deliberate(
                request,
                Calibrations(similarity_threshold=0.99),
                Limits(max_rounds=1, max_regenerations=0, concurrency=SLOTS),
                model=timed,
                run_dir=Path(tmp) / "run",
                knowledge_base=REPO / "data/knowledge",
                practicality_kb=REPO / "data/practicality",
            )
            wall = time.perf_counter() - run_started
        print(
            f"deliberation: {result.status}, {result.n_agents} theory agents, "
            f"{result.usage.calls} calls, {result.usage.tokens} tokens in {wall:.1f} s"
        )
        print(
            f"{'task':<9} {'calls':>5} {'s/call':>7} {'prompt tok':>10} {'reused tok':>10} "
            f"{'output tok':>10}"
        )
        for kind, calls in sorted(timed.calls.items()):
            seconds = statistics.mean(c[0] for c in calls)
            prompt = statistics.mean(c[1] for c in calls)
            output = statistics.mean(c[2] for c in calls)
            reused = statistics.mean(c[3] for c in calls)
            print(
                f"{kind:<9} {len(calls):>5} {seconds:>7.1f} {prompt:>10.0f} {reused:>10.0f} "
                f"{output:>10.0f}"
            )
        print(f"{'task':<9} {'prompt tok/s':>12} {'gen tok/s':>10}   (one request alone)")
        for kind, recorded in sorted(timed.requests.items()):
            t = server_timings(endpoint.base_url, info.model_file, recorded)
            print(
                f"{kind:<9} {t.get('prompt_per_second', 0):>12.0f} "
                f"{t.get('predicted_per_second', 0):>10.0f}"
            )


if __name__ == "__main__":
    main()
