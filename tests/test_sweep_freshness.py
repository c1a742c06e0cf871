"""Reusing finished sweep runs only while they are current: a change of prompt version, problem
file, knowledge or offline model code sets the old run aside (kept whole) and runs the point
again; results never mix old and new runs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from hivemind_lab.agents import prompts
from hivemind_lab.agents.policy import identity
from hivemind_lab.deliberation import rules
from hivemind_lab.experiments import ExperimentSpec, load, run
from hivemind_lab.experiments import runner as sweep_runner
from hivemind_lab.reports.sweep import render_sweep_html
from hivemind_lab.runs.rundir import read_manifest
from tests.support import REPO

GROCER = "data/problems/regional-grocer-discounter-price-war.toml"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project of its own: the grocer problem and copies of both knowledge bases."""
    root = tmp_path / "project"
    (root / "data" / "problems").mkdir(parents=True)
    shutil.copy(REPO / GROCER, root / GROCER)
    for folder in ("knowledge", "practicality"):
        shutil.copytree(REPO / "data" / folder, root / "data" / folder)
    return root


def spec(backend: str = "test") -> ExperimentSpec:
    """A two-point sweep on the content-free model (freshness is machinery); the stand-in only
    where its own code's fingerprint is the input that changes."""
    return ExperimentSpec.model_validate(
        {
            "name": "fresh",
            "backend": backend,
            "problems": [GROCER],
            "inputs": {"sufficiency": 1, "feasibility": 55, "density": 8000},
            "limits": {"max_rounds": 2, "max_regenerations": 0},
            "space": {"stubbornness": [0.1, 0.6]},
        }
    )


def no_model(*args: object, **kwargs: object) -> None:
    raise AssertionError("a current finished run was run again")


def test_an_unchanged_sweep_reuses_every_run_with_no_model_call(project, monkeypatch):
    root = project / "runs"
    first = run(spec(), project=project, root=root)
    assert first.new_runs == 2 and first.reused_runs == 0 and not first.stale_runs
    monkeypatch.setattr(sweep_runner, "make_model", no_model)
    again = run(spec(), project=project, root=root)
    assert all(r.skipped for r in again.runs) and again.model_calls == 0
    assert again.reuse_line() == "2 reused, 0 re-run because stale, 0 new"
    assert not (root / "stale").exists()
    note = json.loads((root / "last-sweep.json").read_text())
    assert note["reused"] == 2 and note["new"] == 0
    assert "last sweep: 2 reused, 0 re-run because stale, 0 new" in render_sweep_html(root)


def _change_prompt(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(prompts, "PROMPT_VERSION", "test-next")


def _change_problem(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = project / GROCER
    path.write_text(path.read_text().replace("64 mid-priced", "65 mid-priced"))


def _change_knowledge(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    doc = next(iter(sorted((project / "data" / "knowledge").glob("*.md"))))
    doc.write_text(doc.read_text() + "\nPrice wars are rarely won by the incumbent.\n")


def _change_engine(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rules, "engine_fingerprint", lambda: "sha256:" + "1" * 64)


def _change_model_code(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(identity, "code_fingerprint", lambda: "sha256:" + "0" * 64)


@pytest.mark.parametrize(
    ("change", "reason", "backend"),
    [
        (_change_prompt, "prompt", "test"),
        (_change_problem, "problem", "test"),
        (_change_knowledge, "knowledge", "test"),
        (_change_model_code, "model", "offline"),  # the stand-in's code, recorded per run
        (_change_engine, "engine", "test"),
    ],
)
def test_a_stale_run_is_set_aside_and_its_point_run_again(
    project, monkeypatch, change, reason, backend
):
    root = project / "runs"
    first = run(spec(backend), project=project, root=root)
    before = {r.run_id: read_manifest(root / r.run_id) for r in first.runs}
    if backend == "offline":
        assert all(m.model_info["code"] == identity.code_fingerprint() for m in before.values())
    change(project, monkeypatch)
    again = run(spec(backend), project=project, root=root)
    assert [r.stale for r in again.runs] == [(reason,), (reason,)]
    assert not any(r.skipped for r in again.runs)
    assert again.stale_runs == {reason: 2} and again.new_runs == 0
    assert f"2 re-run because stale (2 {reason};" in again.reuse_line()
    # Same ids; the old runs kept whole under stale/, the new ones made by the current inputs.
    assert {r.run_id for r in again.runs} == set(before)
    kept = sorted(p for p in (root / "stale").iterdir() if p.is_dir())
    assert len(kept) == 2
    for old in kept:
        run_id = old.name.rsplit("-", 1)[0]
        assert read_manifest(old) == before[run_id]
        for name in ("result.json", "metrics.parquet", "audit.jsonl", "cache.sqlite"):
            assert (old / name).exists(), name
        assert read_manifest(root / run_id).created_at >= before[run_id].created_at
    moved = [json.loads(line) for line in (root / "stale" / "moved.jsonl").read_text().splitlines()]
    assert sorted(m["moved_to"] for m in moved) == [p.name for p in kept]
    assert all(m["reasons"] == [reason] for m in moved)
    # Results read only the current runs.
    frame = load(root)
    assert frame.height == 2 and set(frame["run_id"]) == set(before)
    # Once run again, the points are current: reused with no model call.
    monkeypatch.setattr(sweep_runner, "make_model", no_model)
    third = run(spec(backend), project=project, root=root)
    assert all(r.skipped for r in third.runs) and third.model_calls == 0


def test_a_stale_interrupted_run_is_not_resumed(project, monkeypatch):
    root = project / "runs"
    first = run(spec(), project=project, root=root)
    killed = root / first.runs[0].run_id
    for name in ("result.json", "metrics.parquet"):  # as if killed mid-run
        (killed / name).unlink()
    _change_prompt(project, monkeypatch)
    again = run(spec(), project=project, root=root)
    assert sorted(r.stale for r in again.runs) == [("prompt",), ("prompt",)]
    assert read_manifest(killed).prompt_version == "test-next"
    assert len([p for p in (root / "stale").iterdir() if p.is_dir()]) == 2


def test_the_offline_fingerprint_covers_the_code_the_model_reasons_with():
    names = {p.relative_to(identity.PACKAGE).as_posix() for p in identity._sources()}
    assert {
        "agents/policy/theory.py",
        "problems/decision.py",
        "problems/reading/options.py",
        "agents/prompts.py",
    } <= names
    assert identity.code_fingerprint() == identity.code_fingerprint()


def test_a_sweep_folder_lists_its_runs_and_reads_its_notes(tmp_path, grocer):
    """Only run directories are runs (not stale/, the lock or the shared cache); a missing or
    garbled note reads as none; a moved run keeps its files and says why."""
    from hivemind_lab.runs.sweepdir import LastSweep, SweepDir

    sweep = SweepDir(tmp_path)
    assert sweep.runs() == [] and sweep.read_last_sweep() is None
    for name in ("b-run", "a-run"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "manifest.json").write_text("{}")
    (tmp_path / "half-made").mkdir()  # killed before its manifest
    sweep.lock_path.touch()
    sweep.shared_cache_path("shared-cache.sqlite").touch()
    sweep.last_sweep_path.write_text("{not json")
    assert [r.path.name for r in sweep.runs()] == ["a-run", "b-run"]
    assert sweep.read_last_sweep() is None
    note = LastSweep(reused=1, stale={"prompt": 1}, new=0, summary="1 reused")
    sweep.write_last_sweep(note)
    assert sweep.read_last_sweep() == note
    moved = sweep.move_aside(
        sweep.run("a-run"), created_at="2026-12-01T10:00:00+00:00", reasons=["prompt"]
    )
    assert (moved.path / "manifest.json").exists() and moved.path.parent == sweep.stale_path
    assert [r.path.name for r in sweep.runs()] == ["b-run"]
    assert [(m.run_id, m.moved_to, m.reasons) for m in sweep.read_moved()] == [
        ("a-run", moved.path.name, ("prompt",))
    ]
