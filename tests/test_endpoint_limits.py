"""Endpoint settings (#35.4): request timeout, retries, concurrency and a rate limit, from the
environment and from flags, validated by name; and one rate shared by every worker of a sweep,
measured at a rate-limited fake OpenAI-compatible endpoint served here."""

from __future__ import annotations

import asyncio
import itertools
import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from hivemind_lab.agents.backends import BackendChoice, make_model
from hivemind_lab.agents.testing import TestModel
from hivemind_lab.errors import InputError
from hivemind_lab.llm.base import ChatMessage, ChatRequest
from hivemind_lab.llm.endpoint import EndpointSettings
from hivemind_lab.llm.ratelimit import FileGate, LocalGate
from tests.support import KNOWLEDGE, PRACTICALITY, PROBLEMS, REPO, child_env

OPENAI = BackendChoice(backend="openai", model="m", base_url="http://127.0.0.1:9/v1")


def test_a_70b_sized_timeout_and_the_other_limits_come_from_the_environment():
    env = {
        "HIVEMIND_REQUEST_TIMEOUT_S": "900",
        "HIVEMIND_MAX_RETRIES": "2",
        "HIVEMIND_ENDPOINT_CONCURRENCY": "3",
        "HIVEMIND_RATE_LIMIT_RPM": "120",
        "HIVEMIND_INPUT_USD_PER_MTOK": "2.5",
    }
    model = make_model(OPENAI, env=env)
    config = model.config  # type: ignore[attr-defined]
    assert (config.timeout_s, config.max_retries, config.max_concurrency) == (900, 2, 3)
    assert config.input_usd_per_mtok == 2.5
    assert isinstance(model.gate, LocalGate) and model.gate.rpm == 120  # type: ignore[attr-defined]
    assert model._client.timeout == 900  # type: ignore[attr-defined]
    # Given in code (a flag), a setting wins over its variable.
    given = EndpointSettings.from_env(env, timeout_s=1800)
    assert make_model(OPENAI, env=env, settings=given).config.timeout_s == 1800  # type: ignore[attr-defined]


def test_unset_settings_keep_the_backends_defaults():
    config = make_model(OPENAI, env={}).config  # type: ignore[attr-defined]
    assert (config.timeout_s, config.max_retries, config.max_concurrency) == (120, 5, 8)
    assert make_model(OPENAI, env={}).gate is None  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("variable", "value", "allowed"),
    [
        ("HIVEMIND_REQUEST_TIMEOUT_S", "0", "> 0 and <= 86400"),
        ("HIVEMIND_MAX_RETRIES", "21", ">= 0 and <= 20"),
        ("HIVEMIND_ENDPOINT_CONCURRENCY", "0", ">= 1 and <= 1024"),
        ("HIVEMIND_RATE_LIMIT_RPM", "-1", "> 0 and <= 1000000"),
        ("HIVEMIND_OUTPUT_USD_PER_MTOK", "-1", ">= 0 and <= 10000"),
    ],
)
def test_a_bad_variable_is_named_with_its_range(variable, value, allowed):
    with pytest.raises(InputError) as caught:
        make_model(OPENAI, env={variable: value})
    assert str(caught.value).startswith(f"{variable}: got {value!r}")
    assert allowed in str(caught.value)


@pytest.mark.parametrize(
    ("command", "args", "said"),
    [
        (
            ["deliberate", "--problem", "x"],
            {"HIVEMIND_RATE_LIMIT_RPM": "fast"},
            "HIVEMIND_RATE_LIMIT_RPM:",
        ),
        (
            ["deliberate", "--problem", "x", "--request-timeout", "0"],
            {},
            "--request-timeout: got 0.0",
        ),
        (
            ["deliberate", "--problem", "x", "--retries", "99"],
            {},
            "--retries: got 99 (allowed: >= 0",
        ),
        (
            ["sweep", "spec.toml", "--endpoint-concurrency", "0"],
            {},
            "--endpoint-concurrency: got 0",
        ),
        (["sweep", "spec.toml", "--rate-limit", "0"], {}, "--rate-limit: got 0.0 (allowed: > 0"),
    ],
)
def test_the_cli_names_the_flag_or_variable_as_written(tmp_path, command, args, said):
    (tmp_path / "spec.toml").write_text(_spec(tmp_path, backend="offline"))
    done = subprocess.run(
        [sys.executable, "-m", "hivemind_lab", *command],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=child_env(tmp_path, **args),
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert said in " ".join(done.stderr.split()), done.stderr


def test_a_file_gate_spaces_requests_across_processes(tmp_path):
    """Two processes reserving on one file get start times one interval apart in all."""
    script = (
        "import sys, time; from pathlib import Path; from hivemind_lab.llm.ratelimit import "
        "FileGate\ng = FileGate(Path(sys.argv[1]), 600.0)\n"
        "for _ in range(10):\n    print(time.time() + g.reserve())\n"
    )
    path = tmp_path / "gate"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", script, str(path)],
            stdout=subprocess.PIPE,
            text=True,
            cwd=REPO,
            env=child_env(tmp_path),
        )
        for _ in range(2)
    ]
    starts = sorted(float(x) for p in procs for x in p.communicate(timeout=60)[0].split())
    gaps = [b - a for a, b in itertools.pairwise(starts)]
    # Each start is read back as the clock after reserve() plus the wait it returned, so a
    # process the scheduler holds between the two reads shifts its start: on a loaded 2-core
    # machine by up to ~5 ms (seen 95.8 ms gaps); the gate's own grants are exactly 100 ms apart.
    assert len(starts) == 20 and min(gaps) >= 0.1 - 0.01, gaps
    assert FileGate(path, 600.0).reserve() > 0  # the next free time is after every grant


# -- a two-worker sweep against a rate-limited endpoint ------------------------------------------

RATE_RPM = 300
"""The endpoint's limit: 5 requests a second."""


class FakeEndpoint:
    """An OpenAI-compatible chat endpoint on 127.0.0.1 answering with `TestModel`; it records
    when each request arrived, and answers the first with a 429 (as a provider over its rate
    would), so the sweep must back off and still finish."""

    def __init__(self) -> None:
        self.arrivals: list[float] = []
        self.refused = 0
        self._lock = threading.Lock()
        model = TestModel()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with outer._lock:
                    outer.arrivals.append(time.monotonic())
                    first = len(outer.arrivals) == 1
                if first:
                    outer.refused += 1
                    return self._send(429, {"error": {"message": "rate limit", "type": "x"}})
                request = ChatRequest(
                    messages=tuple(ChatMessage(**m) for m in body["messages"]),
                    seed=body.get("seed"),
                )
                reply = asyncio.run(model.complete(request))
                self._send(
                    200,
                    {
                        "id": "c",
                        "object": "chat.completion",
                        "created": 0,
                        "model": body["model"],
                        "choices": [
                            {
                                "index": 0,
                                "message": {"role": "assistant", "content": reply.content},
                                "finish_reason": "stop",
                            }
                        ],
                        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
                    },
                )

            def _send(self, status: int, payload: dict) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def most_in_any(self, window_s: float) -> int:
        """The most requests that arrived within any ``window_s`` seconds."""
        times = sorted(self.arrivals)
        return max(
            sum(1 for t in times[i:] if t - start < window_s) for i, start in enumerate(times)
        )


@pytest.fixture
def endpoint() -> Iterator[FakeEndpoint]:
    fake = FakeEndpoint()
    thread = threading.Thread(target=fake.server.serve_forever, daemon=True)
    thread.start()
    yield fake
    fake.server.shutdown()
    fake.server.server_close()


def _spec(tmp_path: Path, *, backend: str) -> str:
    problem = PROBLEMS / "regional-grocer-discounter-price-war.toml"
    return f"""
name = "rate"
problems = ["{problem}"]
knowledge_base = "{KNOWLEDGE}"
practicality_kb = "{PRACTICALITY}"
backend = "{backend}"
model = "fake"
seeds = [0]

[inputs]
sufficiency = 1
feasibility = 1
density = 14000
critique_mode = "batched"
score_mode = "per_solution"  # a call per constraint agent and solution: enough calls for a rate

[limits]
max_rounds = 1
max_regenerations = 0
concurrency = 16

[space]
kind = "grid"
stubbornness = [0.2, 0.8]
similarity_threshold = [0.5]
severity = [0.5]
"""


@pytest.mark.slow
def test_a_two_worker_sweep_never_exceeds_the_shared_rate(tmp_path, endpoint):
    (tmp_path / "spec.toml").write_text(_spec(tmp_path, backend="openai"))
    done = subprocess.run(
        [sys.executable, "-m", "hivemind_lab", "sweep", "spec.toml", "--workers", "2"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=child_env(
            tmp_path,
            OPENAI_BASE_URL=endpoint.url,
            HIVEMIND_RATE_LIMIT_RPM=str(RATE_RPM),
            HIVEMIND_MAX_RETRIES="3",
        ),
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "2 runs" in done.stdout
    assert len(endpoint.arrivals) > 6 * RATE_RPM // 60, "too few requests to test a rate"
    assert endpoint.refused == 1  # the 429 was backed off and sent again
    # Both workers' requests, the refused one and its retry included, start one interval
    # (0.2 s) apart: a window of W seconds holds at most 5 W + 1 of them, and one more for the
    # client's own work between its start time and the request reaching the socket (up to
    # 0.2 s seen on 2 busy cores). Two workers each with its own gate would send 10 a second.
    rate = RATE_RPM / 60
    gaps = [round(b - a, 3) for a, b in itertools.pairwise(sorted(endpoint.arrivals))]
    for window in (1.0, 3.0):
        assert endpoint.most_in_any(window) <= rate * window + 2, (window, gaps)


@pytest.mark.ray
@pytest.mark.slow
def test_ray_tasks_share_one_gate():
    """Tasks on a local Ray instance ask one actor for their start times: one interval apart
    across both tasks (as a sweep's tasks on several nodes would be)."""
    ray = pytest.importorskip("ray")
    from hivemind_lab.llm.ratelimit import RayGate

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, _node_ip_address="127.0.0.1")
    try:
        gate = RayGate.start(600.0)

        @ray.remote
        def task(gate: RayGate) -> list[float]:
            async def go() -> list[float]:
                starts = []
                for _ in range(5):  # as gate.wait() does, keeping the time granted
                    delay = await gate.actor.reserve.remote()
                    starts.append(time.time() + delay)
                    await asyncio.sleep(max(delay, 0.0))
                return starts

            return asyncio.run(go())

        starts = sorted(t for ts in ray.get([task.remote(gate), task.remote(gate)]) for t in ts)
    finally:
        ray.shutdown()
    # Granted on the actor's clock 0.1 s apart, read on each task's clock after the actor's
    # reply (tens of ms late on a busy machine): at most 5 + 1 in any 0.45 s, where two gates of
    # their own would start all 10 within 0.4 s.
    assert len(starts) == 10
    most = max(sum(1 for t in starts[i:] if t - s < 0.45) for i, s in enumerate(starts))
    assert most <= 6, [round(b - a, 3) for a, b in itertools.pairwise(starts)]
