"""Deliberation engine speed: wall time, engine overhead per call, scaling and concurrency.

Prints figures for the targets of the deliberation engine:
- offline backend, 8 agents, 5 rounds: under 10 s wall, engine overhead per call under 2 ms;
- calls and tokens per round, and their growth with the number of agents (pairwise vs batched);
- with 200 ms artificial latency per call, each round's wall time within 1.5x of its longest
  chain of dependent calls (critique then revise: 2 calls = 0.4 s), i.e. calls run concurrently.

Run: .venv/bin/python benchmarks/deliberation_speed.py [--smoke]
(``--smoke``: 3 agents, 1 round, 20 ms latency: every section once, in seconds, for CI.)
"""

from __future__ import annotations

import argparse
import os
import platform
import tempfile
import time
from pathlib import Path

from hivemind_lab import Calibrations, DeliberationRequest, Limits, OfflineAgentModel
from hivemind_lab.deliberation import Progress, deliberate, prepare_knowledge
from hivemind_lab.knowledge import load_documents
from hivemind_lab.knowledge.slicing import plan_slices
from hivemind_lab.llm.cache import CachingChatModel, ResponseCache
from hivemind_lab.llm.latency import LatencyChatModel
from hivemind_lab.problems import load_problem
from hivemind_lab.problems.decision import decide

REPO = Path(__file__).resolve().parents[1]
PROBLEM = load_problem(REPO / "data/problems/regional-grocer-discounter-price-war.toml")
DECISION = decide(PROBLEM.model_copy(update={"options": ()}))
"""The question read as a bare request's was (no options given: the reader refuses prose)."""


def density_for(n_agents: int) -> int:
    """The largest density whose slicing of the sample knowledge base gives ``n_agents`` slices."""
    docs = load_documents(REPO / "data/knowledge")
    for density in range(20_000, 1_000, -100):
        if plan_slices(docs, density).n_agents == n_agents:
            return density
    raise SystemExit(f"no density gives {n_agents} agents")


class TimedModel:
    """Measures time spent inside the model so the rest can be attributed to the engine."""

    def __init__(self, inner) -> None:
        self.inner, self.backend, self.model = inner, inner.backend, inner.model
        self.seconds = 0.0
        self.calls = 0
        self.first_start: float | None = None

    async def complete(self, request):
        start = time.perf_counter()
        if self.first_start is None:
            self.first_start = start
        try:
            return await self.inner.complete(request)
        finally:
            self.seconds += time.perf_counter() - start
            self.calls += 1


def request(density: int, mode: str) -> DeliberationRequest:
    return DeliberationRequest(
        problem=PROBLEM.question,
        decision=DECISION,
        sufficiency=1,
        feasibility=1,
        density=density,
        client_data=PROBLEM.client_data,
        market_data=PROBLEM.market_data,
        critique_mode=mode,
    )


def one_run(
    density: int,
    mode: str,
    model,
    *,
    rounds: int = 5,
    concurrency: int = 64,
    calibrations: Calibrations | None = None,
):
    stamps: list[tuple[str, int, float]] = []

    def on_progress(p: Progress) -> None:
        stamps.append((p.phase, p.round, time.perf_counter()))

    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        result = deliberate(
            request(density, mode),
            calibrations or Calibrations(stubbornness=0.9, similarity_threshold=0.9),
            Limits(max_rounds=rounds, max_regenerations=0, concurrency=concurrency),
            model=model,
            run_dir=Path(tmp) / "run",
            knowledge_base=REPO / "data/knowledge",
            practicality_kb=REPO / "data/practicality",
            on_progress=on_progress,
        )
        wall = time.perf_counter() - start
    return result, wall, stamps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--smoke", action="store_true", help="smallest size: 3 agents, 1 round (CI)"
    )
    args = parser.parse_args()
    print(
        f"machine: {platform.node()} · {platform.machine()} · {os.cpu_count()} cores · "
        f"python {platform.python_version()} · {time.strftime('%Y-%m-%d')}"
    )
    sizes = (3,) if args.smoke else (4, 6, 8)
    rounds, latency = (1, 0.02) if args.smoke else (5, 0.2)
    densities = {n: density_for(n) for n in sizes}
    big = max(sizes)
    d8 = densities[big]
    setup_start = time.perf_counter()
    prepare_knowledge(
        request(d8, "pairwise"),
        knowledge_base=REPO / "data/knowledge",
        practicality_kb=REPO / "data/practicality",
        seed=0,
    )
    setup = time.perf_counter() - setup_start

    print(
        f"\n== offline backend, {big} agents (density {d8}), {rounds} rounds "
        "(target at 8 agents, 5 rounds: < 10 s wall)"
    )
    result, wall, _ = one_run(d8, "pairwise", OfflineAgentModel(), rounds=rounds)
    print(
        f"agents {result.n_agents} · rounds {result.rounds} · calls {result.usage.calls} "
        f"({result.usage.cache_hits} served from cache) · tokens {result.usage.tokens:,} · "
        f"wall {wall:.2f} s (of which knowledge set-up {setup:.2f} s)"
    )
    print("round  agents  distinct  calls  tokens")
    for m in result.metrics:
        print(
            f"{m.round:>5}  {m.agents:>6}  {m.distinct_conclusions:>8}  {m.calls:>5}  {m.tokens:>7,}"
        )

    print("\n== engine overhead per call, sequential calls (target: < 2 ms/call)")
    timed = TimedModel(OfflineAgentModel())
    start = time.perf_counter()
    result, wall, _ = one_run(d8, "pairwise", timed, rounds=rounds, concurrency=1)
    end = start + wall
    loop_time = end - (timed.first_start or start)
    overhead_ms = (loop_time - timed.seconds) / result.usage.calls * 1000
    print(
        f"calls {result.usage.calls} · from the first call to the result {loop_time:.2f} s, of which "
        f"inside the model {timed.seconds:.2f} s ⇒ engine overhead {overhead_ms:.2f} ms/call "
        "(render, retrieval, cache lookup/insert, validation, an fsynced audit record per call); "
        f"run set-up (slicing, indexes, manifest) {wall - loop_time:.2f} s"
    )

    print("\n== growth with the number of agents (one round of critique + revision)")
    print("agents  mode      calls/round  tokens/round")
    for _, density in sorted(densities.items()):
        for mode in ("pairwise", "batched"):
            res, _, _ = one_run(density, mode, OfflineAgentModel(), rounds=1)
            m = res.metrics[1]
            print(f"{res.n_agents:>6}  {mode:<8}  {m.calls:>11}  {m.tokens:>12,}")

    chain = 2 * latency
    print(
        f"\n== {latency * 1000:.0f} ms latency per call, {big} agents "
        f"(target: round wall <= 1.5 x {chain:.2f} s)"
    )
    # A remote model's thinking costs this machine nothing: replay recorded replies (a cheap
    # lookup) behind the latency, so what remains on the clock is waiting plus engine work.
    calibrations = Calibrations(stubbornness=0.3, similarity_threshold=0.99)
    latency_rounds = 1 if args.smoke else 3
    with tempfile.TemporaryDirectory() as tmp:
        recorder = CachingChatModel(OfflineAgentModel(), ResponseCache(Path(tmp) / "rec.sqlite"))
        one_run(d8, "pairwise", recorder, rounds=latency_rounds, calibrations=calibrations)
        remote = CachingChatModel(
            None, recorder.cache, mode="replay", backend=recorder.backend, model=recorder.model
        )
        slow = LatencyChatModel(remote, latency)
        res, wall, stamps = one_run(
            d8, "pairwise", slow, rounds=latency_rounds, calibrations=calibrations
        )
    marks = {(phase, rnd): t for phase, rnd, t in stamps}
    for m in res.metrics[1:]:
        start = marks.get(("critique", m.round - 1))
        end = marks.get(("critique", m.round)) or marks.get(("score", m.round))
        if start and end:
            took = end - start
            print(
                f"round {m.round}: {m.calls} calls in {took:.3f} s = {took / chain:.2f} x the "
                f"dependent chain of 2 calls (peak calls in flight {slow.peak_in_flight})"
            )


if __name__ == "__main__":
    main()
