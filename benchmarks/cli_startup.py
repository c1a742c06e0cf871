"""CLI start-up: wall clock of `--help` and of a validation error, and the import time of the CLI.

Prints the best and median of N runs (other jobs share the machine). Target: under 1 s each.
Usage: .venv/bin/python benchmarks/cli_startup.py [--runs 7]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PROBLEM = REPO / "data" / "problems" / "regional-grocer-discounter-price-war.toml"
CASES = {
    "hivemind-lab --help": ["--help"],
    "deliberate --sufficiency 0 (validation error)": [
        "deliberate",
        "--problem",
        str(PROBLEM),
        "--sufficiency",
        "0",
    ],
    "kb slice --density 0 (validation error)": ["kb", "slice", "--density", "0"],
}


def wall(args: list[str], runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "hivemind_lab", *args], capture_output=True, cwd=REPO)
        times.append(time.perf_counter() - started)
    return times


def import_ms() -> float:
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import hivemind_lab.cli"],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    line = [x for x in done.stderr.splitlines() if x.rstrip().endswith("| hivemind_lab.cli")][-1]
    return int(line.split("|")[1]) / 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    runs = parser.parse_args().runs
    print(f"import hivemind_lab.cli: {import_ms():.0f} ms (cumulative, -X importtime)")
    for name, args in CASES.items():
        times = wall(args, runs)
        print(f"{name}: best {min(times):.2f} s, median {statistics.median(times):.2f} s")


if __name__ == "__main__":
    main()
