"""Prompt prefix reuse: the same local deliberation before and after, side by side in one run.

Before is the code at ``--before`` (default 2d0ef92: the prompt layout with the call's
instructions first and no slot pinning), after the code at ``--after`` (default HEAD), each run
from a temporary git worktree (committed code only). ``--sides`` may add ``no-cache``: the after
code on a server started with ``--no-cache-prompt``, so every request reads its whole prompt.
Its prompts and replies are the after side's, so it isolates what the reuse saves; the before
code also differs in what it asks for (its score replies carry no concerns, for one), so its
generated tokens and wall time are not the after side's. Both run the same command on the same llama-server binary and the bundled SmolLM2-135M
model: the sample problem, two theory agents (density 20,000), the legal and financial
constraint agents, one round, two slots. Runs alternate (the order swapped every other pair,
the machine being shared) and the table gives each run and the medians; with ``--lock FILE``
each deliberation holds an exclusive lock on FILE while it runs, not the whole benchmark.

What the server read is taken from its own log, the same way for both: every request's
``prompt eval time = … / N tokens`` line counts the N prompt tokens it processed (the rest of
the prompt came from the slot's cache). The after run's result also records what the endpoint
said it reused (``usage.cached_prompt_tokens``), and each side's audit log gives the prompt,
reused and generated tokens by kind of call (propose, critique, revise, score, synthesize).

``--default-run`` then runs a default deliberation on the sample problem with ``--backend local``
(the after code) and reports how it ended, its calls and its wall time.

Set up with `make llama`. Run: .venv/bin/python benchmarks/prefix_reuse.py [--pairs 3]
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, NamedTuple

from hivemind_lab.llm.local import find_binary, server_version

REPO = Path(__file__).resolve().parents[1]
PROBLEM = REPO / "data/problems/regional-grocer-discounter-price-war.toml"
BEFORE = "2d0ef92"
SMALL = [
    "--density",
    "20000",
    "--profile",
    "legal,financial",
    "--sufficiency",
    "1",
    "--similarity",
    "0.99",
    "--max-rounds",
    "1",
    "--max-regenerations",
    "0",
    "--concurrency",
    "2",
]
"""The deliberation of benchmarks/local_llm.py: two theory agents, two constraint agents."""
SHAPES: dict[str, list[str]] = {
    "small": SMALL,
    "two-rounds": [*SMALL, "--max-rounds", "2"],
    "four-rounds": [*SMALL, "--max-rounds", "4"],
}
"""``small`` is one round; ``two-rounds`` and ``four-rounds`` the same agents for up to two or
four rounds (the last ``--max-rounds`` wins; the code at 2d0ef92 has no ``--min-rounds``; the
monitor halts earlier only if both solutions fall in one cluster at similarity 0.99): each
further round adds a critique and a revision per agent, nearer a default deliberation. In this
two-agent shape the first calls (two proposals on empty slots, each constraint agent's first
score) cost the same whatever the rounds, so the ratio grows with the rounds."""
_PROMPT_EVAL = re.compile(r"prompt eval time =\s*([\d.]+) ms /\s*(\d+) tokens")
_EVAL = re.compile(r"\|\s+eval time =\s*([\d.]+) ms /\s*(\d+) tokens")
_PATIENT_CLIENT = """\
import hivemind_lab.llm.openai_backend as backend

_init = backend.OpenAIConfig.__init__


def _patient(self, **data):
    data.setdefault("timeout_s", 3600.0)
    _init(self, **data)


backend.OpenAIConfig.__init__ = _patient
"""
"""A sitecustomize for both sides: a one-hour client timeout instead of 120 s, so that a slow
call on a loaded machine is waited for, not cancelled and sent again (a cancelled request's
prompt work goes unlogged and its retry reuses what it left in the slot)."""

Side = Literal["before", "no-cache", "after"]
SIDES: tuple[Side, ...] = ("before", "no-cache", "after")
SERVER_FLAGS: dict[Side, list[str]] = {"no-cache": ["--no-cache-prompt"]}
"""Extra llama-server flags per side: the no-cache side's server reads every prompt whole."""


class KindTokens(NamedTuple):
    """One kind of call's totals in a run's audit log."""

    calls: int
    prompt: int
    reused: int
    generated: int


class Run(NamedTuple):
    side: Side
    ok: bool
    status: str
    calls: int
    prompt_tokens: int
    """Prompt tokens of every request, as the client counted them."""
    processed: int
    """Prompt tokens the server processed (its log)."""
    reused: int | None
    """Prompt tokens the client recorded as reused (None: the code did not count them)."""
    prompt_s: float
    """Seconds the server spent processing prompts (its log)."""
    generated: int
    wall_s: float
    """The command's wall time (server start, deliberation, report)."""
    deliberating_s: float
    load: float
    """1-minute load average when the run ended."""
    kinds: dict[str, KindTokens]
    """Per kind of call, from the run's audit log (reused 0 where the code did not count it)."""


def _wrapper(binary: Path, log: Path, folder: Path, flags: list[str]) -> Path:
    """A llama-server that also writes its log to ``log`` and takes ``flags`` (the same binary,
    same PID)."""
    script = folder / "llama-server"
    extra = "".join(f" {flag}" for flag in flags)
    script.write_text(
        "#!/bin/sh\n"
        f'if [ "$1" = "--version" ]; then exec "{binary}" "$@"; fi\n'
        f'exec "{binary}" "$@"{extra} --log-file "{log}"\n'
    )
    script.chmod(0o755)
    return script


def per_request(log: Path) -> list[int]:
    """Prompt tokens each request processed, in the server's order (its log)."""
    text = log.read_text(errors="replace") if log.exists() else ""
    return [int(n) for _, n in _PROMPT_EVAL.findall(text)]


def by_kind(audit: Path) -> dict[str, KindTokens]:
    """Prompt, reused and generated tokens per kind of call (``llm.<kind>`` events)."""
    totals: dict[str, KindTokens] = {}
    lines = audit.read_text().splitlines() if audit.exists() else []
    for line in lines:
        event = json.loads(line)
        kind = str(event.get("kind", ""))
        if not kind.startswith("llm."):
            continue
        for response in event.get("payload", {}).get("responses", []):
            usage = response.get("usage") or {}
            old = totals.get(kind[4:], KindTokens(0, 0, 0, 0))
            totals[kind[4:]] = KindTokens(
                old.calls + 1,
                old.prompt + int(usage.get("prompt_tokens", 0)),
                old.reused + int(usage.get("cached_prompt_tokens") or 0),
                old.generated + int(usage.get("completion_tokens", 0)),
            )
    return totals


@contextlib.contextmanager
def _held(lock: Path | None) -> Iterator[None]:
    """An exclusive lock on ``lock`` while the block runs (flock(1)'s lock; none if None)."""
    if lock is None:
        yield
        return
    with lock.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _server_log(log: Path) -> tuple[int, float, int]:
    """Prompt tokens processed, seconds on prompts and tokens generated, from the log."""
    text = log.read_text(errors="replace") if log.exists() else ""
    prompts = [(float(ms), int(n)) for ms, n in _PROMPT_EVAL.findall(text)]
    generated = sum(int(n) for _, n in _EVAL.findall(text))
    return sum(n for _, n in prompts), sum(ms for ms, _ in prompts) / 1000, generated


def deliberate(
    side: Side,
    tree: Path,
    binary: Path,
    work: Path,
    args: list[str],
    keep: Path | None = None,
    lock: Path | None = None,
) -> Run:
    """One ``deliberate --backend local`` run of the code in ``tree``, timed from outside.

    Its standard error is rendered as on a terminal (the progress bar's frames), and with
    ``keep`` the run's folder (run directory, server log, output) is copied there."""
    folder = Path(tempfile.mkdtemp(prefix=f"{side}-", dir=work))
    log = folder / "server.log"
    (folder / "sitecustomize.py").write_text(_PATIENT_CLIENT)
    env = {
        **os.environ,
        "HIVEMIND_LLAMA_SERVER": str(_wrapper(binary, log, folder, SERVER_FLAGS.get(side, []))),
        "PYTHONPATH": f"{tree}{os.pathsep}{folder}",
        "TTY_COMPATIBLE": "1",
        "COLUMNS": "160",
    }
    env.pop("HIVEMIND_MODEL_FILE", None)
    run_dir = folder / "run"
    command = [
        sys.executable,
        "-m",
        "hivemind_lab",
        "deliberate",
        "--problem",
        str(PROBLEM),
        "--backend",
        "local",
        "--kb",
        str(REPO / "data/knowledge"),
        "--practicality-kb",
        str(REPO / "data/practicality"),
        *args,
        "--out",
        str(run_dir),
    ]
    with _held(lock):
        print(f"{side}: started {datetime.now(UTC):%H:%M:%S} UTC", flush=True)
        started = time.perf_counter()
        done = subprocess.run(command, cwd=tree, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - started
        load = os.getloadavg()[0]
    (folder / "stdout.txt").write_text(done.stdout)
    (folder / "stderr.txt").write_text(done.stderr)
    if keep is not None:
        shutil.copytree(folder, keep / folder.name, dirs_exist_ok=True)
    result: dict[str, Any] = {}
    if (run_dir / "result.json").exists():
        result = json.loads((run_dir / "result.json").read_text())
    if done.returncode != 0 or not result:
        print(f"{side}: exit {done.returncode}\n{done.stderr[-2000:]}", file=sys.stderr)
    print(f"{side}: processed per request {per_request(log)}", flush=True)
    usage = result.get("usage", {})
    processed, prompt_s, generated = _server_log(log)
    return Run(
        side=side,
        ok=done.returncode == 0 and bool(result),
        status=str(result.get("status", "failed")),
        calls=int(usage.get("calls", 0)),
        prompt_tokens=int(usage.get("prompt_tokens", 0)),
        processed=processed,
        reused=usage.get("cached_prompt_tokens"),
        prompt_s=prompt_s,
        generated=generated,
        wall_s=wall,
        deliberating_s=float(result.get("wall_time_s", 0.0)),
        load=load,
        kinds=by_kind(run_dir / "audit.jsonl"),
    )


def _cpu() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def _row(r: Run) -> str:
    reused = "—" if r.reused is None else f"{r.reused:,}"
    return (
        f"| {r.side} | {r.status} | {r.calls} | {r.prompt_tokens:,} | {r.processed:,} | "
        f"{reused} | {r.prompt_s:.0f} | {r.generated:,} | {r.wall_s:.0f} | "
        f"{r.deliberating_s:.0f} | {r.load:.1f} |"
    )


def _kinds(r: Run) -> str:
    """Processed (prompt minus reused) and generated tokens per kind of call, one line."""
    parts = [
        f"{kind} {k.calls}× {k.prompt - k.reused:,} processed ({k.prompt:,} prompt, "
        f"{k.reused:,} reused), {k.generated:,} generated"
        for kind, k in sorted(r.kinds.items())
    ]
    return f"{r.side} by kind: " + "; ".join(parts)


def _sides(text: str) -> list[Side]:
    """The sides in the order given (the first pair runs them so, the next in reverse). One side
    alone is measured without ratios (e.g. a side the lock's time left no room for)."""
    sides = [side for name in text.split(",") for side in SIDES if side == name]
    if not sides or len(set(sides)) != len(text.split(",")):
        raise argparse.ArgumentTypeError(f"{text!r}: one or more of before, no-cache, after")
    return sides


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", type=int, default=3, help="rounds of every side")
    parser.add_argument("--before", default=BEFORE, help="the commit measured as before")
    parser.add_argument("--after", default="HEAD", help="the commit measured as after")
    parser.add_argument(
        "--sides", type=_sides, default=["before", "after"], help="e.g. no-cache,after,before"
    )
    parser.add_argument("--binary", type=Path, default=None, help="llama-server to use")
    parser.add_argument("--default-run", action="store_true", help="also a default local run")
    parser.add_argument("--shape", choices=sorted(SHAPES), default="small", help="deliberation")
    parser.add_argument("--keep", type=Path, default=None, help="copy each run's folder here")
    parser.add_argument("--lock", type=Path, default=None, help="held by each deliberation")
    args = parser.parse_args()
    sides: list[Side] = args.sides
    binary = args.binary or find_binary()
    print(f"date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC")
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, {_cpu()}; {platform.platform()}")
    print(f"server: {binary} ({server_version(binary)})")
    print(f"shape: {args.shape} ({' '.join(SHAPES[args.shape])})")
    print(f"sides: {', '.join(sides)}; before {args.before}, after {args.after}")
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    runs: list[Run] = []
    with tempfile.TemporaryDirectory(prefix="prefix-reuse-") as tmp:
        work = Path(tmp)
        commits = {"before": args.before, "after": args.after}
        needs = {"before" if side == "before" else "after" for side in sides}
        if args.default_run:
            needs.add("after")
        trees = {name: work / name for name in commits if name in needs}
        default: Run | None = None
        for name, tree in trees.items():
            subprocess.run(
                ["git", "worktree", "add", "--detach", str(tree), commits[name]],
                cwd=REPO,
                check=True,
                capture_output=True,
            )
        try:
            for pair in range(args.pairs):
                for side in sides if pair % 2 == 0 else sides[::-1]:
                    tree = trees["before" if side == "before" else "after"]
                    shape = SHAPES[args.shape]
                    run = deliberate(side, tree, binary, work, shape, args.keep, args.lock)
                    runs.append(run)
                    print(_row(run), flush=True)
                    print(_kinds(run), flush=True)
            if args.default_run:
                default = deliberate(
                    "after", trees["after"], binary, work, [], args.keep, args.lock
                )
        finally:
            for tree in trees.values():
                subprocess.run(
                    ["git", "worktree", "remove", "--force", str(tree)],
                    cwd=REPO,
                    check=False,
                    capture_output=True,
                )
        print(
            "\n| side | status | calls | prompt tok | processed tok | reused tok | prompt s "
            "| generated tok | wall s | deliberating s | load |"
        )
        print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for run in runs:
            print(_row(run))
        ok = [r for r in runs if r.ok]
        medians: dict[Side, dict[str, float]] = {}
        for side in sides:
            mine = [r for r in ok if r.side == side]
            if not mine:
                continue
            medians[side] = {
                "processed": statistics.median(r.processed for r in mine),
                "prompt_s": statistics.median(r.prompt_s for r in mine),
                "wall_s": statistics.median(r.wall_s for r in mine),
                "deliberating_s": statistics.median(r.deliberating_s for r in mine),
                "calls": statistics.median(r.calls for r in mine),
            }
            m = medians[side]
            print(
                f"median {side} ({len(mine)} runs): {m['calls']:.0f} calls, "
                f"{m['processed']:,.0f} prompt tokens processed in {m['prompt_s']:.0f} s, "
                f"wall {m['wall_s']:.0f} s ({m['deliberating_s']:.0f} s deliberating)"
            )
        for base in ("before", "no-cache"):
            if base not in medians or "after" not in medians:
                continue
            b, a = medians[base], medians["after"]
            print(
                f"after/{base}: prompt tokens processed {b['processed'] / a['processed']:.2f}x "
                f"fewer, prompt time {b['prompt_s'] / a['prompt_s']:.2f}x shorter, wall time "
                f"{b['wall_s'] / a['wall_s']:.2f}x shorter "
                f"(deliberating {b['deliberating_s'] / a['deliberating_s']:.2f}x)"
            )
        if default is not None:
            print(
                f"default deliberation, --backend local: {default.status} (exit ok: "
                f"{default.ok}), {default.calls} calls, {default.prompt_tokens:,} prompt tokens "
                f"of which {default.reused or 0:,} reused, {default.processed:,} processed; "
                f"wall {default.wall_s:.0f} s; load {default.load:.1f}"
            )
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
