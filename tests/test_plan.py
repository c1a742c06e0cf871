"""A plan before the first call (#35.3): ``deliberate --plan`` and ``sweep --plan`` print the
expected calls, tokens and cost and call no model; on every recorded capable-model run the plan
is within 25 % of the calls and tokens the run made."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from hivemind_lab.agents.plan import plan_run
from hivemind_lab.deliberation.runner import knowledge_for
from hivemind_lab.experiments.spec import ExperimentSpec
from hivemind_lab.llm.endpoint import Prices
from hivemind_lab.runs.rundir import RunDir
from tests.recorded import manifest, recorded_runs
from tests.support import KNOWLEDGE, PRACTICALITY, PROBLEMS, child_env

TOLERANCE = 0.25


@pytest.mark.parametrize("run", recorded_runs(), ids=lambda p: p.name)
def test_the_plan_is_within_a_quarter_of_the_recorded_run(run: Path):
    """The plan is one attempt with no veto: a run regenerated after a veto made its attempts
    (the last one vetoed out synthesises nothing), so the plan counts once per attempt.
    Completion tokens alone, the model's to decide, are off by up to 30 % (mba-veto)."""
    recorded = manifest(run)
    result = RunDir(run).read_result()
    # The plan cannot know when the monitor halts: it plans the minimum rounds (where every run
    # of one model recorded so far halted). A run that went on is planned at the rounds it ran.
    ran = recorded.limits.model_copy(
        update={"min_rounds": max(result.total_rounds, recorded.limits.min_rounds)}
    )
    plan = plan_run(recorded.request, ran, knowledge_for(recorded))
    attempts = 1 + result.regenerations
    actual = result.usage
    for name, planned, made in (
        ("calls", plan.calls, actual.calls),
        ("tokens", plan.tokens, actual.tokens),
        ("prompt tokens", plan.prompt_tokens, actual.prompt_tokens),
    ):
        error = planned * attempts / made - 1
        assert abs(error) <= TOLERANCE, (
            f"{run.name}: {name} planned {planned} × {attempts}, made {made}"
        )
    assert plan.most_calls >= actual.calls


def test_the_plan_prices_its_tokens():
    run = recorded_runs()[0]
    recorded = manifest(run)
    prices = Prices(input_usd_per_mtok=3.0, output_usd_per_mtok=15.0)
    plan = plan_run(recorded.request, recorded.limits, knowledge_for(recorded), prices=prices)
    expected = (plan.prompt_tokens * 3.0 + plan.completion_tokens * 15.0) / 1e6
    assert plan.cost_usd == pytest.approx(expected, abs=1e-4)
    assert plan_run(recorded.request, recorded.limits, knowledge_for(recorded)).cost_usd is None


def _cli(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hivemind_lab", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=child_env(cwd, **env),
        timeout=300,
    )


def test_deliberate_plan_calls_no_model_and_writes_nothing(tmp_path):
    # An endpoint nobody listens on: a call would fail the command.
    done = _cli(
        [
            "deliberate",
            "--problem",
            str(PROBLEMS / "engineer-startup-decision.toml"),
            "--backend",
            "openai",
            "--model",
            "m",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--plan",
            "--input-usd-per-mtok",
            "3",
        ],
        tmp_path,
        HIVEMIND_OUTPUT_USD_PER_MTOK="15",
    )
    assert done.returncode == 0, done.stderr
    out = " ".join(done.stdout.split())
    assert "plan: " in out and " calls, " in out and "$" in out, out
    assert "critique_batch" in out and "batched critique" in out  # a model backend's default
    assert not (tmp_path / "runs").exists()


def test_the_offline_stand_in_keeps_pairwise_critique_by_default(tmp_path):
    problem = str(PROBLEMS / "engineer-startup-decision.toml")
    done = _cli(["deliberate", "--problem", problem, "--plan"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert "pairwise critique" in " ".join(done.stdout.split())


@pytest.mark.parametrize(
    ("backend", "given", "mode"),
    [
        ("openai", None, "batched"),
        ("local", None, "batched"),
        ("offline", None, "pairwise"),
        ("test", None, "pairwise"),
        ("openai", "pairwise", "pairwise"),
        ("offline", "batched", "batched"),
    ],
)
def test_a_sweep_critiques_as_its_backend_does_unless_told(backend, given, mode):
    inputs: dict[str, object] = {"sufficiency": 1, "feasibility": 50, "density": 100}
    if given:
        inputs["critique_mode"] = given
    spec = ExperimentSpec.model_validate(
        {"name": "x", "problems": ["a.toml"], "backend": backend, "inputs": inputs}
    )
    assert spec.inputs.critique_mode == mode


def test_sweep_plan_calls_no_model(tmp_path):
    spec = tmp_path / "spec.toml"
    spec.write_text(
        f'name = "p"\nproblems = ["{PROBLEMS / "engineer-startup-decision.toml"}"]\n'
        f'knowledge_base = "{KNOWLEDGE}"\npracticality_kb = "{PRACTICALITY}"\n'
        'backend = "openai"\nmodel = "m"\nseeds = [0, 1]\n'
        "[inputs]\nsufficiency = 2\nfeasibility = 50\ndensity = 12000\n"
        '[space]\nkind = "grid"\nstubbornness = [0.2, 0.8]\n'
    )
    done = _cli(["sweep", "spec.toml", "--plan"], tmp_path, OPENAI_BASE_URL="http://127.0.0.1:9/v1")
    assert done.returncode == 0, done.stderr
    out = " ".join(done.stdout.split())
    assert "plan: 4 runs" in out and "(no price given)" in out, out
    assert not (tmp_path / "experiments").exists()
