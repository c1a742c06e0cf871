"""Every script in ``benchmarks/`` runs, at its smallest size, so a change that breaks one (an
import gone, an API renamed) fails here instead of on the next person who measures something.

Each script's entry says how it runs smallest; a script without an entry fails the first test.
Scripts that need ``../shared`` or an outside service carry that service's marker (and get it
from its fixture), so `make check` leaves them out as it leaves out the service's own tests.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import pytest

from tests.support import REPO, SHARED, child_env

BENCHMARKS = REPO / "benchmarks"


class Smallest(NamedTuple):
    args: tuple[str, ...] = ()
    needs: tuple[str, ...] = ()
    """Markers: ``shared`` (../shared), ``neo4j`` (the project's server), ``local_llm``,
    ``ray`` (starts Ray nodes)."""


SMALLEST: dict[str, Smallest] = {
    "call_floor.py": Smallest(("--smoke",)),
    "calibration_curves.py": Smallest(
        (
            "--workers=1",
            "--values=0.5",
            "--problems=1",
            "--seeds=0",
            "--only=stubbornness",
            "--max-rounds=1",
            "--max-regenerations=0",
            "--out={tmp}/curves.md",
        )
    ),
    "cli_startup.py": Smallest(("--runs=1",)),
    "compliance_loops.py": Smallest(("--runs=1",)),
    "consensus_truth.py": Smallest(("--estimator-only", "--no-ds"), needs=("shared",)),
    "corpus_scale.py": Smallest(needs=("shared",)),
    "decision_reading.py": Smallest(("--split=dev", "--limit=1"), needs=("shared",)),
    "deliberation_compare.py": Smallest(("--smoke",)),
    "deliberation_speed.py": Smallest(("--smoke",)),
    "graph_bulk_loaders.py": Smallest(
        ("--rows=100", "--repeats=1", "--warmup=0", "--use-running"), needs=("neo4j",)
    ),
    "graph_pagerank.py": Smallest(("--edges=1000", "--nodes=200")),
    "graph_store.py": Smallest(("--max=1000", "--stores=ladybug", "--samples=5")),
    "local_llm.py": Smallest(("--rounds=1",), needs=("local_llm",)),
    "mcp_latency.py": Smallest(("--calls=5", "--starts=1")),
    "monitor_ari.py": Smallest(("--sample=20",), needs=("shared",)),
    "prefix_reuse.py": Smallest(("--pairs=1", "--sides=after"), needs=("local_llm",)),
    "progress_estimate.py": Smallest(("tests/fixtures/recorded/2026-12-03.1/bakery",)),
    "ray_sweep.py": Smallest(("--stubbornness=0.1", "--workers=1"), needs=("ray",)),
    "recorded_runs.py": Smallest(),
    "slicing_10k.py": Smallest(("--n=200", "--densities", "4000", "--shared-densities", "8000")),
    "standin_judgements.py": Smallest(needs=("shared",)),
    "sweep_speed.py": Smallest(("--points=2", "--skip-resume")),
}


def test_every_benchmark_has_a_smallest_size() -> None:
    scripts = {p.name for p in BENCHMARKS.glob("*.py")}
    assert scripts == set(SMALLEST), "add each new benchmark to SMALLEST (and drop gone ones)"


def _param(name: str, entry: Smallest) -> object:
    marks = [getattr(pytest.mark, need) for need in entry.needs]
    return pytest.param(name, entry, marks=[*marks, pytest.mark.slow], id=name.removesuffix(".py"))


@pytest.mark.parametrize(("script", "entry"), [_param(n, e) for n, e in SMALLEST.items()])
def test_benchmark_runs_at_its_smallest_size(
    script: str, entry: Smallest, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    env = child_env(tmp_path)
    if "shared" in entry.needs and not SHARED.is_dir():
        pytest.skip("../shared is absent")
    if "neo4j" in entry.needs:  # the benchmark measures the server it is pointed at
        neo4j = request.getfixturevalue("neo4j_settings")
        env |= {k: neo4j[k] for k in ("NEO4J_URI", "NEO4J_USER", "NEO4J_PASSWORD")}
    args = [a.format(tmp=tmp_path) for a in entry.args]
    if "local_llm" in entry.needs:
        # Even its smallest size is minutes of SmolLM2 generation on two cores (a timed-out
        # run also left its deliberation and llama-server running): CI checks that the script
        # starts and parses its arguments; the local backend itself is tested end to end in
        # tests/test_local_llm.py, and the figures come from `python benchmarks/<script>`.
        env["HIVEMIND_LLAMA_SERVER"] = str(request.getfixturevalue("llama_binary"))
        args = ["--help"]
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / script), *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, (done.stdout[-2000:], done.stderr[-4000:])
    assert done.stdout.strip(), "a benchmark prints its figures"


@pytest.fixture(scope="module")
def llama_binary() -> Path:
    """The server build (scripts/llama-server build reuses a cached one)."""
    script = REPO / "scripts" / "llama-server"
    done = subprocess.run([str(script), "build"], capture_output=True, text=True, timeout=3600)
    assert done.returncode == 0, done.stderr[-3000:]
    found = subprocess.run([str(script), "path"], capture_output=True, text=True, check=True)
    return Path(found.stdout.strip())
