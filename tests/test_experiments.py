"""Calibration sweeps: spec validation, artifacts, resume, replay, reuse, baselines, Ray, graph."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest

from hivemind_lab.errors import InputError
from hivemind_lab.experiments import ExperimentSpec, load, load_spec, replay, run
from hivemind_lab.experiments.compare import compare, compute_table
from hivemind_lab.runs.rundir import read_manifest
from tests.support import REPO, child_env

GROCER = "data/problems/regional-grocer-discounter-price-war.toml"


def spec(**overrides) -> ExperimentSpec:
    values = {
        "name": "t",
        "backend": "test",  # the content-free model: sweeps are machinery, not the stand-in
        "problems": [GROCER],
        "inputs": {"sufficiency": 1, "feasibility": 55, "density": 8000},
        "limits": {"max_rounds": 3, "max_regenerations": 1},
        "space": {
            "kind": "grid",
            "stubbornness": [0.1, 0.6],
            "similarity_threshold": [0.35],
            "severity": [0.5],
        },
        "seeds": [0],
    }
    values.update(overrides)
    return ExperimentSpec.model_validate(values)


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "exp.toml"
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ('problems = ["p.toml"]\n', "inputs"),
        ("problems = []\n[inputs]\nsufficiency=1\nfeasibility=50\ndensity=100\n", "problems"),
        (
            'problems = ["p"]\n[inputs]\nsufficiency=1\nfeasibility=500\ndensity=100\n',
            "inputs.feasibility",
        ),
        (
            'problems = ["p"]\n[inputs]\nsufficiency=1\nfeasibility=50\ndensity=100\n[space]\nseverity=[1.5]\n',
            "space",
        ),
        (
            'problems = ["p"]\n[inputs]\nsufficiency=1\nfeasibility=50\ndensity=100\n[space]\nkind="random"\nseverity=[0.1]\n',
            "space",
        ),
        (
            'problems = ["p"]\n[inputs]\nsufficiency=1\nfeasibility=50\ndensity=100\nbaselines=["debate"]\n',
            "inputs.baselines",
        ),
        ("problems = [", "spec"),
    ],
)
def test_bad_specs_name_the_file_and_field(tmp_path, text, field):
    with pytest.raises(InputError) as info:
        load_spec(write(tmp_path, text))
    assert field in str(info.value)


def test_shipped_experiments_are_valid():
    for path in sorted((REPO / "experiments").glob("*.toml")):
        assert load_spec(path).problems


def test_grid_sweep_writes_artifacts_reuses_work_and_resumes(tmp_path):
    root = tmp_path / "runs"
    first = run(spec(), project=REPO, root=root)
    assert len(first.runs) == 2
    run_dir = root / first.runs[0].run_id
    for name in ("manifest.json", "result.json", "audit.jsonl", "metrics.parquet", "cache.sqlite"):
        assert (run_dir / name).exists(), name
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["experiment"]["spec_hash"] == spec().digest
    assert manifest["token_counter"] and manifest["packages"]["polars"]
    assert "commit" in manifest["git"] and "dirty" in manifest["git"]
    # Round-0 proposals do not depend on stubbornness: the second point reuses them.
    agents = json.loads((run_dir / "result.json").read_text())["n_agents"]
    assert sum(r.reused_calls for r in first.runs) >= agents
    again = run(spec(), project=REPO, root=root)
    assert all(r.skipped for r in again.runs)
    assert again.model_calls == 0
    frame = load(root)
    assert frame.height == 2
    assert {
        "stubbornness",
        "status",
        "total_rounds",
        "mean_feasibility",
        "vetoes",
        "run_calls",
    } <= set(frame.columns)
    per_round = load(root, per_round=True)
    assert per_round.height > frame.height
    assert set(per_round["round"].to_list()) >= {0, 1}


def test_replay_is_identical_with_zero_network_calls_and_names_a_difference(tmp_path):
    root = tmp_path / "runs"
    report = run(
        spec(
            space={
                "kind": "grid",
                "stubbornness": [0.3],
                "similarity_threshold": [0.35],
                "severity": [0.5],
            }
        ),
        project=REPO,
        root=root,
    )
    run_dir = root / report.runs[0].run_id
    result = replay(run_dir)
    assert result.identical
    assert result.network_calls == 0
    # Change one recorded reply: the replay now differs, and says where.
    with sqlite3.connect(run_dir / "cache.sqlite") as conn:
        key, response = conn.execute(
            'SELECT key, response FROM responses WHERE request LIKE \'%\\"task\\": \\"score\\"%\' LIMIT 1'
        ).fetchone()
        data = json.loads(response)
        content = json.loads(data["content"])
        content["score"] = 0 if content["score"] > 50 else 100
        data["content"] = json.dumps(content)
        conn.execute("UPDATE responses SET response = ? WHERE key = ?", (json.dumps(data), key))
    tampered = replay(run_dir)
    assert not tampered.identical
    assert tampered.first_difference


def test_baselines_run_at_equal_compute_replay_and_compare_with_t_intervals(tmp_path):
    root = tmp_path / "runs"
    report = run(
        spec(
            seeds=[0, 1],
            baselines=["vote", "single_agent"],
            space={
                "kind": "grid",
                "stubbornness": [0.3],
                "similarity_threshold": [0.35],
                "severity": [0.5],
            },
        ),
        project=REPO,
        root=root,
    )
    by_strategy: dict[str, list] = {}
    for summary in report.runs:
        by_strategy.setdefault(summary.point.strategy, []).append(summary)
    assert set(by_strategy) == {"deliberation", "vote", "single_agent"}
    for base in by_strategy["vote"] + by_strategy["single_agent"]:
        manifest = read_manifest(root / base.run_id)
        delib = next(r for r in by_strategy["deliberation"] if r.point.seed == base.point.seed)
        assert manifest.strategy == base.point.strategy
        assert manifest.budget is not None and manifest.budget.calls == delib.calls
        assert manifest.budget.tokens == delib.tokens
        # Baselines are runs like any other: they replay exactly from their own cache.
        again = replay(root / base.run_id)
        assert again.identical and again.network_calls == 0
    single = json.loads((root / by_strategy["single_agent"][0].run_id / "result.json").read_text())
    assert single["n_agents"] == 1
    table = compare(load(root))
    assert table["strategy"].to_list() == ["deliberation", "single_agent", "vote"]
    assert {"mean_feasibility_mean", "mean_feasibility_ci95", "vetoes_n"} <= set(table.columns)
    assert (table["runs"] == 2).all()
    side = compute_table(load(root))
    assert side.height == 4
    assert {"deliberation_calls", "run_calls", "deliberation_tokens", "run_tokens"} <= set(
        side.columns
    )
    for row in side.iter_rows(named=True):
        gap = abs(row["run_calls"] - row["deliberation_calls"]) / row["deliberation_calls"]
        tokens = abs(row["run_tokens"] - row["deliberation_tokens"]) / row["deliberation_tokens"]
        assert row["mismatch"] == (gap > 0.1 or tokens > 0.1)


def test_the_vote_reports_ties_as_ties():
    from hivemind_lab.deliberation.strategies.baseline import vote
    from hivemind_lab.runs.results import Cluster

    def cluster(index: int, size: int) -> Cluster:
        ids = tuple(f"s{index}.{k}" for k in range(size))
        return Cluster(
            index=index, solution_ids=ids, agent_ids=ids, representative_id=ids[0], cohesion=1.0
        )

    winners, tie = vote((cluster(0, 1), cluster(1, 2), cluster(2, 2), cluster(3, 3)), 2)
    assert [c.index for c in winners] == [3, 1, 2] and tie
    winners, tie = vote((cluster(0, 1), cluster(1, 2), cluster(2, 3)), 2)
    assert [c.index for c in winners] == [2, 1] and not tie


def test_manifest_is_typed_versioned_and_old_versions_stay_readable(tmp_path):
    root = tmp_path / "runs"
    report = run(spec(space={"kind": "grid", "stubbornness": [0.3]}), project=REPO, root=root)
    run_dir = root / report.runs[0].run_id
    text = (run_dir / "manifest.json").read_text()
    assert text.lstrip("{\n ").startswith('"schema_version": 3')
    manifest = read_manifest(run_dir)
    assert manifest.strategy == "deliberation"
    assert manifest.embedder.name and manifest.embedder.version not in ("", "unknown")
    assert isinstance(manifest.model_info, dict)
    # A version-1 manifest (untyped: embedder as a string, baselines under "baseline").
    old = json.loads(text)
    old["schema_version"] = 1
    old["embedder"] = old["embedder"]["name"]
    for key in ("strategy", "model_info", "budget"):
        old.pop(key)
    old["baseline"] = {"strategy": "vote", "budget": 40}
    (run_dir / "manifest.json").write_text(json.dumps(old))
    upgraded = read_manifest(run_dir)
    assert upgraded.schema_version == 3 and upgraded.embedder.version == "unknown"
    assert upgraded.strategy == "vote" and upgraded.budget and upgraded.budget.calls == 40
    (run_dir / "manifest.json").write_text(json.dumps({**old, "schema_version": 9}))
    with pytest.raises(InputError, match="schema_version"):
        read_manifest(run_dir)


def test_random_and_optuna_spaces(tmp_path):
    random_spec = spec(
        space={
            "kind": "random",
            "samples": 3,
            "stubbornness": [0.0, 0.9],
            "similarity_threshold": [0.2, 0.5],
            "severity": [0.3, 0.7],
            "seed": 4,
        }
    )
    points = random_spec.calibration_points()
    assert len(points) == 3
    assert points == random_spec.calibration_points()  # seeded
    optuna_spec = spec(
        limits={"max_rounds": 2, "max_regenerations": 0},
        space={
            "kind": "optuna",
            "samples": 2,
            "stubbornness": [0.0, 0.9],
            "similarity_threshold": [0.2, 0.5],
            "severity": [0.3, 0.7],
        },
    )
    report = run(optuna_spec, project=REPO, root=tmp_path / "opt")
    assert len(report.runs) == 2
    best = json.loads((tmp_path / "opt" / "optuna.json").read_text())
    assert set(best["best_params"]) == {"stubbornness", "similarity_threshold", "severity"}


@pytest.mark.slow
def test_interrupted_sweep_resumes_without_redoing_finished_points(tmp_path):
    exp = tmp_path / "exp.toml"
    name = f"kill-{os.getpid()}"  # two test runs at once (two engineers) use two folders
    exp.write_text(
        f'name = "{name}"\nbackend = "test"\nproblems = ["{GROCER}"]\nseeds = [0, 1]\n'
        "[inputs]\nsufficiency = 2\nfeasibility = 55\ndensity = 8000\n"
        "[limits]\nmax_rounds = 2\nmax_regenerations = 1\n"
        "[space]\nstubbornness = [0.1, 0.5, 0.8]\n"
    )
    runs = REPO / "experiments" / "runs" / name
    if runs.exists():
        import shutil

        shutil.rmtree(runs)
    cmd = [sys.executable, "-m", "hivemind_lab", "sweep", str(exp)]
    env = child_env(tmp_path)
    proc = subprocess.Popen(
        cmd, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and len(list(runs.glob("*/metrics.parquet"))) < 2:
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        finished = {p.parent.name for p in runs.glob("*/metrics.parquet")}
        assert 2 <= len(finished) < 6
        done = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        assert f"({len(finished)} reused, 0 re-run" in done.stdout.replace("\n", " ")
        assert len(list(runs.glob("*/metrics.parquet"))) == 6
    finally:
        import shutil

        shutil.rmtree(runs, ignore_errors=True)


@pytest.mark.slow
@pytest.mark.ray
def test_sweep_on_a_local_ray_instance(tmp_path):
    import ray

    # One retry of a start that timed out: Ray waits a fixed 30 s for its raylet to register,
    # which a loaded 2-core machine can miss (the same upstream race as in test_ray_cluster.py);
    # a second failure fails the test.
    for attempt in (1, 2):
        try:
            report = run(
                spec(),
                project=REPO,
                root=tmp_path / f"ray{attempt}",
                ray_address="local",
                workers=2,
            )
            break
        except Exception as exc:
            if attempt == 2 or "timed out during startup" not in str(exc):
                raise
        finally:
            ray.shutdown()
    root = tmp_path / f"ray{attempt}"
    assert len(report.runs) == 2
    assert all(r.status for r in report.runs)
    assert pl.read_parquet(next(root.glob("*/metrics.parquet"))).height >= 1


@pytest.mark.slow
def test_process_workers_give_the_same_results_as_one_process(tmp_path):
    one = run(spec(), project=REPO, root=tmp_path / "one")
    two = run(spec(), project=REPO, root=tmp_path / "two", workers=2)
    key = lambda r: (r.run_id, r.status, r.rounds, r.mean_feasibility)  # noqa: E731
    assert sorted(map(key, one.runs)) == sorted(map(key, two.runs))


def test_runs_go_into_the_graph_on_both_stores(tmp_path, graph_factory):
    from hivemind_lab.experiments.graph_export import EXPORT_PREDICATES, export_runs

    graph = graph_factory(predicates=EXPORT_PREDICATES)
    root = tmp_path / "runs"
    run(spec(), project=REPO, root=root)
    written = export_runs(graph, root).assertions
    assert written > 0
    models = set(graph.models())
    assert len(models) >= 4
    patterns = graph.store.read("MATCH (p:Pattern) RETURN count(p) AS n")[0]["n"]
    assert patterns == 2
    a, b = sorted(m for m in models if m.endswith("theory-00") or m.endswith("theory-01"))[:2]
    report = graph.divergence(a, b, "strategy")
    assert report.unique_to_a or report.agreements or report.direct_conflicts


def test_load_reports_the_final_generation_not_the_latest_round_number(tmp_path):
    # Generation 0 went three rounds with 3 conclusions, was vetoed; generation 1 halted at
    # round 0 with 2: the run's final state is generation 1 with 2 conclusions.
    run_dir = tmp_path / "deliberation-abc"
    run_dir.mkdir()
    rows = [
        {
            "run_id": "deliberation-abc",
            "strategy": "deliberation",
            "regeneration": g,
            "round": r,
            "distinct_conclusions": d,
            "revision_magnitude": 0.1,
        }
        for g, r, d in [(0, 0, 4), (0, 1, 3), (0, 2, 3), (1, 0, 2)]
    ]
    pl.DataFrame(rows).write_parquet(run_dir / "metrics.parquet")
    frame = load(tmp_path)
    assert frame.height == 1
    assert frame["regeneration"][0] == 1
    assert frame["distinct_conclusions"][0] == 2
    assert frame["initial_conclusions"][0] == 4


def test_intervals_use_student_t_and_carry_n():
    runs = pl.DataFrame(
        {"strategy": ["deliberation"] * 3, "vetoes": [1.0, 2.0, 3.0], "run_calls": [10, 10, 10]}
    )
    table = compare(runs)
    # sd 1, n 3: t(0.975, 2) = 4.303 → half-width 2.484 (a normal approximation gives 1.132).
    assert table["vetoes_ci95"][0] == pytest.approx(2.484, abs=1e-3)
    assert table["vetoes_n"][0] == 3
    single = compare(runs.head(1))
    assert single["vetoes_ci95"][0] is None  # no interval from one run


def test_a_finished_sweep_resumes_without_starting_workers(tmp_path, monkeypatch):
    from hivemind_lab.experiments import runner, sweep

    root = tmp_path / "runs"
    run(spec(), project=REPO, root=root)

    def no_pool(*args, **kwargs):
        raise AssertionError("a worker pool was started for a finished sweep")

    monkeypatch.setattr(sweep, "ProcessPoolExecutor", no_pool)
    monkeypatch.setattr(runner, "make_model", no_pool)
    again = run(spec(), project=REPO, root=root, workers=2)
    assert len(again.runs) == 2 and all(r.skipped for r in again.runs)
