"""Prompt prefix reuse: the same local deliberation before and after, side by side in one run.

Before is the code at ``--before`` (default 2d0ef92: the prompt layout with the call's
instructions first and no slot pinning), after the code at ``--after`` (default HEAD), each run
from a temporary git worktree (committed code only). Both run the same command on the same llama-server binary and the bundled SmolLM2-135M
model: the sample problem, two theory agents (density 20,000), the legal and financial
constraint agents, one round, two slots. Runs alternate before/after (the order swapped every
other pair, the machine being shared) and the table gives each run and the medians.

What the server read is taken from its own log, the same way for both: every request's
``prompt eval time = … / N tokens`` line counts the N prompt tokens it processed (the rest of
the prompt came from the slot's cache). The after run's result also records what the endpoint
said it reused (``usage.cached_prompt_tokens``).

``--default-run`` then runs a default deliberation on the sample problem with ``--backend local``
(the after code) and reports how it ended, its calls and its wall time.

Set up with `make llama`. Run: .venv/bin/python benchmarks/prefix_reuse.py [--pairs 3]
"""

from __future__ import annotations

import argparse
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
}
"""``small`` is one round; ``two-rounds`` the same agents for up to two rounds (the last
``--max-rounds`` wins; the code at 2d0ef92 has no ``--min-rounds``): each further round adds a
critique and a revision per agent and the scores, nearer a default deliberation."""
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

Side = Literal["before", "after"]


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


def _wrapper(binary: Path, log: Path, folder: Path) -> Path:
    """A llama-server that also writes its log to ``log`` (the same binary, same PID)."""
    script = folder / "llama-server"
    script.write_text(
        "#!/bin/sh\n"
        f'if [ "$1" = "--version" ]; then exec "{binary}" "$@"; fi\n'
        f'exec "{binary}" "$@" --log-file "{log}"\n'
    )
    script.chmod(0o755)
    return script


def per_request(log: Path) -> list[int]:
    """Prompt tokens each request processed, in the server's order (its log)."""
    text = log.read_text(errors="replace") if log.exists() else ""
    return [int(n) for _, n in _PROMPT_EVAL.findall(text)]


def _server_log(log: Path) -> tuple[int, float, int]:
    """Prompt tokens processed, seconds on prompts and tokens generated, from the log."""
    text = log.read_text(errors="replace") if log.exists() else ""
    prompts = [(float(ms), int(n)) for ms, n in _PROMPT_EVAL.findall(text)]
    generated = sum(int(n) for _, n in _EVAL.findall(text))
    return sum(n for _, n in prompts), sum(ms for ms, _ in prompts) / 1000, generated


def deliberate(
    side: Side, tree: Path, binary: Path, work: Path, args: list[str], keep: Path | None = None
) -> Run:
    """One ``deliberate --backend local`` run of the code in ``tree``, timed from outside.

    Its standard error is rendered as on a terminal (the progress bar's frames), and with
    ``keep`` the run's folder (run directory, server log, output) is copied there."""
    folder = Path(tempfile.mkdtemp(prefix=f"{side}-", dir=work))
    log = folder / "server.log"
    (folder / "sitecustomize.py").write_text(_PATIENT_CLIENT)
    env = {
        **os.environ,
        "HIVEMIND_LLAMA_SERVER": str(_wrapper(binary, log, folder)),
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
    started = time.perf_counter()
    done = subprocess.run(command, cwd=tree, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
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
        load=os.getloadavg()[0],
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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", type=int, default=3, help="before/after pairs")
    parser.add_argument("--before", default=BEFORE, help="the commit measured as before")
    parser.add_argument("--after", default="HEAD", help="the commit measured as after")
    parser.add_argument("--binary", type=Path, default=None, help="llama-server to use")
    parser.add_argument("--default-run", action="store_true", help="also a default local run")
    parser.add_argument("--shape", choices=sorted(SHAPES), default="small", help="deliberation")
    parser.add_argument("--keep", type=Path, default=None, help="copy each run's folder here")
    args = parser.parse_args()
    binary = args.binary or find_binary()
    print(f"date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC")
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, {_cpu()}; {platform.platform()}")
    print(f"server: {binary} ({server_version(binary)})")
    print(f"shape: {args.shape} ({' '.join(SHAPES[args.shape])})")
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    runs: list[Run] = []
    with tempfile.TemporaryDirectory(prefix="prefix-reuse-") as tmp:
        work = Path(tmp)
        trees: dict[Side, Path] = {"before": work / "before", "after": work / "after"}
        default: Run | None = None
        for side, commit in (("before", args.before), ("after", args.after)):
            subprocess.run(
                ["git", "worktree", "add", "--detach", str(trees[side]), commit],
                cwd=REPO,
                check=True,
                capture_output=True,
            )
        try:
            for pair in range(args.pairs):
                order: tuple[Side, Side] = (
                    ("before", "after") if pair % 2 == 0 else ("after", "before")
                )
                for side in order:
                    run = deliberate(side, trees[side], binary, work, SHAPES[args.shape], args.keep)
                    runs.append(run)
                    print(_row(run), flush=True)
            if args.default_run:
                default = deliberate("after", trees["after"], binary, work, [], args.keep)
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
        for side in ("before", "after"):
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
        if len(medians) == 2:
            b, a = medians["before"], medians["after"]
            print(
                f"after/before: prompt tokens processed {b['processed'] / a['processed']:.2f}x "
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
