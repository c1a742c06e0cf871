"""The progress bar's time left and tok/s, replayed on a finished run's audit log.

No model is called: the log holds every call's kind, tokens and the time its record was written,
and every checkpoint's next phase, which is all the live estimate is fed. At each finished call
this prints the time truly left (to the last call), the token estimate (`ProgressEstimate`) and
the calls-per-second estimate the bar used before (calls left of a fixed plan over calls done
per second), and the two rates (every token against what the server read or generated).

Run: .venv/bin/python benchmarks/progress_estimate.py RUN_DIR
"""

from __future__ import annotations

import json
import sys
from datetime import datetime
from pathlib import Path

from hivemind_lab.agents.usage import (
    KIND_OF_FORMAT,
    CallPlan,
    CallRecord,
    ProgressEstimate,
    planned_calls,
)

KINDS = set(KIND_OF_FORMAT.values())


def replay(run_dir: Path) -> list[dict[str, float | str]]:
    manifest = json.loads((run_dir / "manifest.json").read_text("utf-8"))
    records = [json.loads(line) for line in (run_dir / "audit.jsonl").open(encoding="utf-8")]
    agents = {r["actor"] for r in records if r["kind"] == "llm.propose"}
    scorers = {r["actor"] for r in records if r["kind"] == "llm.score"}
    mode = manifest["request"].get("critique_mode", "pairwise")
    max_rounds = manifest["limits"]["max_rounds"]
    plan = CallPlan(len(agents), len(scorers), max_rounds=max_rounds, critique_mode=mode)
    old_total = planned_calls(len(agents), len(scorers), max_rounds=max_rounds, critique_mode=mode)
    start = next(r for r in records if r["kind"] == "deliberation.request")["ts"]
    t0 = datetime.fromisoformat(start)

    def at(r: dict) -> float:  # type: ignore[type-arg]
        return (datetime.fromisoformat(r["ts"]) - t0).total_seconds()

    calls = [r for r in records if r["kind"].startswith("llm.")]
    end = at(calls[-1])
    now = [0.0]
    estimate = ProgressEstimate(plan, clock=lambda: now[0])
    estimate.began()
    distinct: int | None = None
    every_token = 0
    rows: list[dict[str, float | str]] = []
    pending: tuple[str, float] | None = None  # a finished call, shown once the checkpoints
    # written in the same instant (the phase it ended) are applied

    def show(kind: str, t: float) -> None:
        now[0] = t
        done = len(estimate.records)
        old_left = max(old_total, done) - done
        rows.append(
            {
                "call": f"{done}/{estimate.total} {kind}",
                "true_s": end - t,
                "tokens_s": estimate.seconds_left() or 0.0,
                "calls_s": old_left / (done / t),
                "tok_per_s_all": every_token / t,
                "tok_per_s_worked": estimate.tokens_per_second(),
            }
        )

    for r in records:
        if pending is not None and r["kind"].startswith("llm."):
            show(*pending)
        now[0] = at(r)
        if r["kind"] == "monitor.clusters":
            distinct = r["payload"]["distinct_conclusions"]
        elif r["kind"] == "engine.checkpoint":
            p = r["payload"]
            estimate.reached(p["phase"], p["round"], distinct)
        elif r["kind"].startswith("llm."):
            kind = r["kind"].removeprefix("llm.")
            for response in r["payload"]["responses"]:
                u = response["usage"]
                every_token += u["prompt_tokens"] + u["completion_tokens"]
                estimate.finished(
                    CallRecord(
                        kind if kind in KINDS else None,  # type: ignore[arg-type]
                        u["prompt_tokens"] - u.get("cached_prompt_tokens", 0),
                        u["completion_tokens"],
                        u.get("cached_prompt_tokens", 0),
                    )
                )
            pending = (kind, now[0])
    if pending is not None:
        show(*pending)
    return rows


def main() -> None:
    rows = replay(Path(sys.argv[1]))
    print("call                 true left  token estimate  calls/s estimate  tok/s all  worked")
    for row in rows:
        print(
            f"{row['call']:<20} {row['true_s']:>8.0f} s {row['tokens_s']:>12.0f} s "
            f"{row['calls_s']:>14.0f} s {row['tok_per_s_all']:>10.1f} {row['tok_per_s_worked']:>7.1f}"
        )


if __name__ == "__main__":
    main()
