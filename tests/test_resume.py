"""A killed run resumes to the same result without repeating any completed model call."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hivemind_lab import Calibrations, Limits
from hivemind_lab.agents.testing import TestModel
from hivemind_lab.deliberation import deliberate
from hivemind_lab.llm.base import ChatRequest, ChatResponse
from hivemind_lab.runs.audit import verify_log
from tests.support import KNOWLEDGE, PRACTICALITY, PROBLEMS, child_env, make_request, run_free


class Crash(Exception):
    pass


class CrashingModel:
    """The content-free test model, until call number ``crash_at`` fails as a process crash
    would."""

    backend = "test"

    def __init__(self, crash_at: int) -> None:
        self.inner = TestModel()
        self.model = self.inner.model
        self.crash_at = crash_at
        self.calls = 0

    async def complete(self, request: ChatRequest) -> ChatResponse:
        self.calls += 1
        if self.calls >= self.crash_at:
            raise Crash(f"crash at call {self.calls}")
        return await self.inner.complete(request)


def comparable(result) -> dict:
    data = result.model_dump(mode="json")
    usage = data.pop("usage")
    for key in ("wall_time_s", "audit_head", "audit_records"):
        data.pop(key)
    return {**data, "calls": usage["calls"], "tokens": usage["tokens"]}


def cached_calls(run_dir: Path) -> int:
    with sqlite3.connect(run_dir / "cache.sqlite") as conn:
        return conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0]


@pytest.mark.parametrize("crash_at", [5, 30, 80])
def test_resume_after_crash_matches_uninterrupted_run(tmp_path, grocer, crash_at):
    settings = {"feasibility": 60, "sufficiency": 1, "density": 4000}
    limits = Limits(max_regenerations=2)
    reference = run_free(tmp_path / "ref", grocer, limits=limits, **settings)

    crashed = tmp_path / "crashed"
    with pytest.raises(Crash):
        deliberate(
            make_request(grocer, **settings),
            Calibrations(),
            limits,
            model=CrashingModel(crash_at),
            run_dir=crashed,
            knowledge_base=KNOWLEDGE,
            practicality_kb=PRACTICALITY,
        )
    done_before = cached_calls(crashed)
    assert 0 < done_before < reference.usage.calls

    counting = TestModel()
    resumed = deliberate(
        make_request(grocer, **settings),
        Calibrations(),
        limits,
        model=counting,
        run_dir=crashed,
        knowledge_base=KNOWLEDGE,
        practicality_kb=PRACTICALITY,
        resume=True,
    )
    assert comparable(resumed) == comparable(reference)
    # No completed call is repeated: the resumed process makes only the missing ones.
    assert counting.calls == reference.usage.model_calls - done_before
    assert verify_log(crashed / "audit.jsonl").ok


def test_a_baseline_killed_while_scoring_resumes_from_its_last_phase(tmp_path, grocer):
    from hivemind_lab.asyncrun import run_sync
    from hivemind_lab.deliberation import new_run, run_manifest
    from hivemind_lab.runs.audit import read_records
    from hivemind_lab.runs.events import Resume
    from hivemind_lab.runs.manifest import Budget

    # feasibility 1: the test model's seeded scores never veto, so the vote ends in scoring
    request = make_request(grocer, feasibility=1, sufficiency=2, density=6000)
    beside = run_free(tmp_path / "deliberation", grocer, feasibility=1, sufficiency=2, density=6000)
    fresh = new_run(
        request, model=TestModel(), knowledge_base=KNOWLEDGE, practicality_kb=PRACTICALITY
    )
    budget = Budget(calls=beside.usage.calls, tokens=beside.usage.tokens, tokens_per_score=400)
    manifest = fresh.manifest.model_copy(update={"strategy": "vote", "budget": budget})
    reference = run_sync(run_manifest(manifest, tmp_path / "ref", model=TestModel()))
    assert reference.status == "converged" and reference.metrics[0].calls > 2

    crashed = tmp_path / "crashed"
    with pytest.raises(Crash):  # among the last calls: the winners' scores
        run_sync(run_manifest(manifest, crashed, model=CrashingModel(reference.usage.calls - 1)))
    counting = CrashingModel(10**9)
    resumed = run_sync(run_manifest(manifest, crashed, model=counting, resume=True))
    assert comparable(resumed) == comparable(reference)
    # The waves were checkpointed: the resumed run scored again and proposed nothing again.
    (resume,) = [
        r.event for r in read_records(crashed / "audit.jsonl") if r.kind == "engine.resume"
    ]
    assert isinstance(resume, Resume) and resume.phase == "score"
    assert 0 < counting.calls <= reference.usage.calls - reference.metrics[0].calls
    assert verify_log(crashed / "audit.jsonl").ok


def test_resume_refuses_a_directory_without_a_run(tmp_path, grocer):
    from hivemind_lab.errors import InputError

    with pytest.raises(InputError, match="resume"):
        deliberate(make_request(grocer), model=TestModel(), run_dir=tmp_path, resume=True)


def test_new_run_refuses_a_used_directory(tmp_path, grocer):
    from hivemind_lab.errors import InputError

    (tmp_path / "x").write_text("keep me")
    with pytest.raises(InputError, match="already holds files"):
        deliberate(make_request(grocer), model=TestModel(), run_dir=tmp_path)
    assert (tmp_path / "x").read_text() == "keep me"


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-c", "from hivemind_lab.cli import main; main()", *args]


@pytest.mark.slow
def test_kill_minus_nine_mid_round_then_resume_from_the_cli(tmp_path):
    problem = str(PROBLEMS / "regional-grocer-discounter-price-war.toml")
    common = [
        "--backend",
        "test",
        "--feasibility",
        "60",
        "--sufficiency",
        "1",
        "--density",
        "4000",
        "--kb",
        str(KNOWLEDGE),
        "--practicality-kb",
        str(PRACTICALITY),
    ]
    ref = tmp_path / "ref"
    subprocess.run(
        _cli("deliberate", "--problem", problem, "--out", str(ref), *common),
        env=child_env(tmp_path),
        check=True,
        capture_output=True,
        timeout=300,
    )

    victim = tmp_path / "victim"
    proc = subprocess.Popen(
        _cli(
            "deliberate", "--problem", problem, "--out", str(victim), "--latency", "0.02", *common
        ),
        env=child_env(tmp_path),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    # Kill once a critique round is under way: the first checkpoint after proposals exists.
    while time.monotonic() < deadline:
        checkpoint = victim / "checkpoint.json"
        if checkpoint.exists() and json.loads(checkpoint.read_text())["phase"] == "revise":
            break
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    assert not (victim / "result.json").exists()

    subprocess.run(
        _cli("deliberate", "--resume", str(victim)),
        env=child_env(tmp_path),
        check=True,
        capture_output=True,
        timeout=300,
    )
    a = json.loads((ref / "result.json").read_text())
    b = json.loads((victim / "result.json").read_text())
    for key in ("status", "rounds", "regenerations", "conclusions", "vetoes", "metrics"):
        assert a[key] == b[key], key
    assert a["usage"]["calls"] == b["usage"]["calls"]
    assert verify_log(victim / "audit.jsonl").ok


@pytest.mark.slow
def test_cli_resume_reads_an_older_manifest_as_it_was_recorded(tmp_path):
    """A run recorded before requests carried ``exclusive`` ran its options as combinable; the
    CLI's resume reads the typed, upgraded manifest, so re-reading a yes/no question cannot
    make the resumed run exclusive."""
    run = tmp_path / "run"
    common = ["--kb", str(KNOWLEDGE), "--practicality-kb", str(PRACTICALITY), "--max-rounds", "2"]
    common += ["--backend", "test"]
    question = "Should a small bakery open a second shop?"
    one = ("--option", "Open a second shop")  # weighed against declining it: a yes/no decision
    subprocess.run(
        _cli("deliberate", "--problem", question, *one, "--out", str(run), *common),
        env=child_env(tmp_path),
        check=True,
        capture_output=True,
        timeout=300,
    )
    manifest = json.loads((run / "manifest.json").read_text())
    decision = manifest.pop("decision")  # a version-2 manifest from before decisions were
    assert decision["exclusive"] is True  # a yes/no decision, by construction
    # recorded, and before exclusivity was: its request held only the options
    manifest["request"]["options"] = [o["label"] for o in decision["options"]]
    manifest["request"]["options_source"] = "given"
    manifest["schema_version"] = 2
    for path in run.iterdir():  # as if killed right after the manifest was written
        path.unlink()
    (run / "manifest.json").write_text(json.dumps(manifest))
    subprocess.run(
        _cli("deliberate", "--resume", str(run)),
        env=child_env(tmp_path),
        check=True,
        capture_output=True,
        timeout=300,
    )
    result = json.loads((run / "result.json").read_text())
    assert result["exclusive"] is False
