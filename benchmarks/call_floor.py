"""Calls and tokens per deliberation at the default critique and score modes, before (pairwise
critique, one scoring call per solution) and after (both batched, the default on model
backends since issue 35), side by side in one run.

1. The recorded capable-model runs (tests/fixtures/recorded/): bakery (pairwise) against
   bakery-batched (batched, the same problem, decision and flags), each by kind of call, with
   the conclusion and mean feasibility each reached; then every recorded run by mode.
2. The offline stand-in (which counts calls the same way, its tokens with the run's counter)
   on a sample problem, both modes in this process, one after the other.

Each figure is set beside the issue's floor, 1 + N + 2NR + C + S (an intake, the proposals,
batched critique and revision for R rounds, one scoring call per constraint agent, one
synthesis per final cluster), and the plan (`hivemind_lab.agents.plan`).

Run: .venv/bin/python benchmarks/call_floor.py [--smoke]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from hivemind_lab import Calibrations, Limits, OfflineAgentModel  # noqa: E402
from hivemind_lab.agents.calls import ModelCall  # noqa: E402
from hivemind_lab.agents.plan import plan_run  # noqa: E402
from hivemind_lab.deliberation import deliberate  # noqa: E402
from hivemind_lab.deliberation.runner import knowledge_for  # noqa: E402
from hivemind_lab.inputs import request_for  # noqa: E402
from hivemind_lab.problems import load_problem  # noqa: E402
from hivemind_lab.runs.audit import read_records  # noqa: E402
from hivemind_lab.runs.rundir import RunDir  # noqa: E402
from tests.recorded import RECORDED, recorded_runs, run_name, version  # noqa: E402

MODES = {"pairwise": "pair", "batched": "batch", "per_solution": "per"}
"""Critique / score modes as the tables print them."""
PROBLEM = REPO / "data" / "problems" / "regional-grocer-discounter-price-war.toml"


def floor(n: int, rounds: int, constraints: int, clusters: int) -> int:
    return 1 + n + 2 * n * rounds + constraints + clusters


def recorded(path: Path) -> dict:
    run = RunDir(path)
    name = f"{version(path)}/{run_name(path)}"
    manifest, result = run.read_manifest(), run.read_result()
    kinds = Counter(
        r.event.kind.removeprefix("llm.")
        for r in read_records(run.audit_path)
        if isinstance(r.event, ModelCall)
    )
    plan = plan_run(manifest.request, manifest.limits, knowledge_for(manifest))
    head = result.conclusions[0] if result.conclusions else None
    last = result.vetoes[-1] if result.vetoes else None
    return {
        "name": name,
        "mode": f"{MODES[manifest.request.critique_mode]}/{MODES[manifest.request.score_mode]}",
        "agents": result.n_agents,
        "constraints": len(manifest.constraints),
        "rounds": result.total_rounds,
        "clusters": len(result.conclusions),
        "calls": result.usage.calls,
        "prompt": result.usage.prompt_tokens,
        "completion": result.usage.completion_tokens,
        "kinds": dict(sorted(kinds.items())),
        "plan_calls": plan.calls,
        "plan_tokens": plan.tokens,
        "conclusion": head.title if head else "",
        "mean": last.mean_score if last else None,
        "intake": manifest.decision.intake is not None,
    }


def line(r: dict) -> str:
    f = floor(r["agents"], r["rounds"], r["constraints"], max(r["clusters"], 1))
    calls = r["calls"] + r["intake"]
    return (
        f"{r['name']:<28} {r['mode']:<11} {calls:>5} {r['prompt']:>9,} {r['completion']:>8,} "
        f"{r['prompt'] + r['completion']:>9,} {f:>5} {calls / f:>5.2f}x "
        f"{r['plan_calls'] + r['intake']:>5} {r['plan_tokens']:>9,}"
    )


HEADER = (
    f"{'run':<28} {'mode':<11} {'calls':>5} {'prompt':>9} {'complet.':>8} {'tokens':>9} "
    f"{'floor':>5} {'/floor':>6} {'plan':>5} {'plan tok':>9}"
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="1 round offline (CI)")
    args = parser.parse_args()
    print(
        f"machine: {platform.node()} · {platform.machine()} · {os.cpu_count()} cores · load "
        f"{os.getloadavg()[0]:.2f} · python {platform.python_version()} · "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"
    )
    print("\n== recorded capable-model runs: bakery (pairwise) against bakery-batched")
    print(
        "calls (and the plan's) count the intake where one read the decision; floor = 1 + N + 2NR + C + S"
    )
    print(HEADER)
    pair = [
        recorded(RECORDED / "2026-12-03.1" / n)
        for n in ("bakery", "bakery-batched")
        if (RECORDED / "2026-12-03.1" / n).is_dir()
    ]
    for r in pair:
        print(line(r))
    for r in pair:
        print(f"  {r['name']}: by kind {json.dumps(r['kinds'])}")
        mean = f"{r['mean']:.1f}" if r["mean"] is not None else "-"
        print(f"  {r['name']}: mean feasibility {mean}; conclusion “{r['conclusion']}”")
    print("\n== every recorded run")
    print(HEADER)
    for r in sorted(map(recorded, recorded_runs()), key=lambda r: (r["mode"], r["name"])):
        print(line(r))

    rounds = 1 if args.smoke else 2
    print(f"\n== offline stand-in, {PROBLEM.name}, max {rounds} rounds, before and after")
    print(f"{'mode':<11} {'calls':>5} {'tokens':>9} {'rounds':>6} {'wall s':>6}  conclusion")
    problem = load_problem(PROBLEM)
    with tempfile.TemporaryDirectory() as tmp:
        for i, (mode, scoring) in enumerate((("pairwise", "per_solution"), ("batched", "batched"))):
            request = request_for(
                problem,
                sufficiency=2,
                feasibility=60,
                density=6000,
                critique_mode=mode,
                score_mode=scoring,
            )
            start = time.perf_counter()
            result = deliberate(
                request,
                Calibrations(),
                Limits(max_rounds=rounds),
                model=OfflineAgentModel(),
                run_dir=Path(tmp) / f"run{i}",
            )
            wall = time.perf_counter() - start
            head = result.conclusions[0].title if result.conclusions else "-"
            print(
                f"{MODES[mode] + '/' + MODES[scoring]:<11} {result.usage.calls:>5} {result.usage.tokens:>9,} "
                f"{result.total_rounds:>6} {wall:>6.1f}  {head}"
            )


if __name__ == "__main__":
    main()
