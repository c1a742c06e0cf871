"""Crashes and concurrent writers leave whole files: kill -9 at controlled points, two writers of
one run, two writers of one file."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from hivemind_lab.errors import InputError
from hivemind_lab.runs import events
from hivemind_lab.runs.audit import AuditLog, verify_log
from hivemind_lab.runs.rundir import write_json_atomic
from tests.support import KNOWLEDGE, PRACTICALITY, PROBLEMS, child_env

# A deliberation whose process kills itself (SIGKILL: no cleanup, no finally) when model call
# number ``kill_at`` starts: a crash at a chosen point, with no clock involved.
KILLED_RUN = textwrap.dedent(
    """
    import os, signal, sys
    from hivemind_lab import Calibrations, Limits
    from hivemind_lab.agents.testing import TestModel
    from hivemind_lab.deliberation import deliberate
    from hivemind_lab.inputs import request_for
    from hivemind_lab.problems import load_problem

    problem, knowledge, practicality, out, kill_at = sys.argv[1:]

    class Killer:
        backend = "test"

        def __init__(self):
            self.inner = TestModel()
            self.model = self.inner.model
            self.calls = 0

        async def complete(self, request):
            self.calls += 1
            if self.calls >= int(kill_at):
                os.kill(os.getpid(), signal.SIGKILL)
            return await self.inner.complete(request)

    request = request_for(load_problem(problem), sufficiency=1, feasibility=60, density=4000)
    deliberate(
        request, Calibrations(), Limits(concurrency=1), model=Killer(), run_dir=out,
        knowledge_base=knowledge, practicality_kb=practicality,
    )
    """
)


def killed_run(tmp_path: Path, kill_at: int) -> Path:
    out = tmp_path / "victim"
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            KILLED_RUN,
            str(PROBLEMS / "regional-grocer-discounter-price-war.toml"),
            str(KNOWLEDGE),
            str(PRACTICALITY),
            str(out),
            str(kill_at),
        ],
        env=child_env(tmp_path),
        capture_output=True,
        timeout=120,
    )
    assert proc.returncode == -9, proc.stderr.decode()[-2000:]
    assert not (out / "result.json").exists()
    return out


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-c", "from hivemind_lab.cli import main; main()", *args]


def test_a_run_killed_before_its_first_checkpoint_leaves_an_audit_trail_that_verifies(tmp_path):
    # Call 3 of the first proposals: no checkpoint has anchored the log yet.
    victim = killed_run(tmp_path, kill_at=3)
    assert not (victim / "checkpoint.json").exists()
    report = verify_log(victim / "audit.jsonl")
    assert report.ok, report.reason
    assert report.records >= 1


@pytest.mark.slow
def test_a_second_writer_of_a_run_is_refused_and_the_trail_stays_whole(tmp_path):
    victim = killed_run(tmp_path, kill_at=10)
    before = (victim / "audit.jsonl").read_bytes()
    # This test process plays the first resumer: it holds the run's audit log open.
    with AuditLog(victim / "audit.jsonl", anchor_every=0):
        second = subprocess.run(
            _cli("deliberate", "--resume", str(victim)),
            env=child_env(tmp_path, COLUMNS="200"),
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert second.returncode == 2, second.stderr
    assert "in use" in second.stderr and str(victim) in second.stderr
    assert "resumable" not in second.stderr  # the error says what to do; no "resume it" loop
    assert (victim / "audit.jsonl").read_bytes() == before
    assert not (victim / "result.json").exists()
    # Once the first writer is gone, the run resumes and its trail verifies.
    subprocess.run(
        _cli("deliberate", "--resume", str(victim)),
        env=child_env(tmp_path),
        check=True,
        capture_output=True,
        timeout=120,
    )
    assert verify_log(victim / "audit.jsonl").ok


def test_an_audit_log_has_one_writer_at_a_time(tmp_path):
    path = tmp_path / "run" / "audit.jsonl"
    with AuditLog(path) as first:
        first.append("a", events.Abstained(agents=["a"]))
        with pytest.raises(InputError, match="in use") as caught:
            AuditLog(path)
        assert caught.value.field == "run_dir"
        first.append("a", events.Abstained(agents=["a"]))
    with AuditLog(path) as again:
        again.append("a", events.Abstained(agents=["a"]))
    assert verify_log(path).ok and verify_log(path).records == 3


# Two processes replacing one file as fast as they can: every rename installs a whole file.
WRITER = textwrap.dedent(
    """
    import sys
    from hivemind_lab.runs.rundir import write_json_atomic
    path, tag = sys.argv[1:]
    for i in range(300):
        write_json_atomic(path, {"tag": tag, "i": i, "pad": [tag * 50] * 400})
    """
)


def test_two_processes_writing_one_json_file_never_collide(tmp_path):
    target = tmp_path / "result.json"
    write_json_atomic(target, {"tag": "start"})
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(target), tag],
            env=child_env(tmp_path),
            stderr=subprocess.PIPE,
        )
        for tag in ("a", "b")
    ]
    seen = 0
    while any(w.poll() is None for w in writers):
        value = json.loads(target.read_text("utf-8"))  # never half a file
        assert value["tag"] in {"start", "a", "b"}
        seen += 1
    errors = [w.stderr.read().decode() for w in writers]
    assert [w.returncode for w in writers] == [0, 0], errors
    assert json.loads(target.read_text("utf-8"))["i"] == 299
    assert sorted(p.name for p in tmp_path.iterdir()) == ["result.json"]


def test_a_temporary_file_left_by_a_killed_writer_is_removed_by_the_next_write(tmp_path):
    target = tmp_path / "checkpoint.json"
    # A pid that cannot be running: beyond the kernel's pid_max.
    leftover = tmp_path / ".checkpoint.json.99999999.0a0b0c0d.tmp"
    leftover.write_text('{"half": ')
    write_json_atomic(target, {"phase": "revise"})
    assert not leftover.exists()
    assert json.loads(target.read_text()) == {"phase": "revise"}


def test_a_report_write_that_fails_midway_leaves_the_previous_report_whole(
    tmp_path, grocer, monkeypatch
):
    import hivemind_lab.reports as reports
    from tests.support import run_free

    run_dir = tmp_path / "run"
    run_free(run_dir, grocer, density=4000)
    reports.write_report(run_dir)
    html, md = (run_dir / "report.html").read_bytes(), (run_dir / "report.md").read_bytes()
    # Text that cannot be encoded fails inside the write, after a plain write had truncated.
    monkeypatch.setattr(reports, "render_run_html", lambda *a, **k: "<html>" + "\ud800")
    monkeypatch.setattr(reports, "render_run_markdown", lambda *a, **k: "# report" + "\ud800")
    with pytest.raises(UnicodeEncodeError):
        reports.write_report(run_dir)
    assert (run_dir / "report.html").read_bytes() == html
    assert (run_dir / "report.md").read_bytes() == md


def test_the_notebooks_find_the_sample_data_from_any_folder(tmp_path, monkeypatch):
    from hivemind_lab.workbench import project_root
    from tests.support import REPO

    monkeypatch.chdir(tmp_path)  # a folder with no data/ above it, as under `cd /tmp && pytest`
    assert project_root() == REPO
    assert project_root(REPO / "notebooks") == REPO


def test_a_second_sweep_on_one_experiment_folder_is_refused_naming_it(tmp_path):
    import fcntl

    from hivemind_lab.experiments import ExperimentSpec, run

    spec = ExperimentSpec.model_validate(
        {
            "name": "t",
            "backend": "test",
            "problems": ["data/problems/regional-grocer-discounter-price-war.toml"],
            "inputs": {"sufficiency": 1, "feasibility": 55, "density": 8000},
            "limits": {"max_rounds": 1, "max_regenerations": 0},
            "space": {"kind": "grid", "stubbornness": [0.1]},
        }
    )
    from tests.support import REPO

    root = tmp_path / "runs" / "t"
    root.mkdir(parents=True)
    # This test process plays the first sweep: it holds the experiment folder.
    with (root / ".sweep.lock").open("a") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(InputError, match="in use by another sweep") as caught:
            run(spec, project=REPO, root=root)
        assert caught.value.field == "experiment" and str(root) in str(caught.value)
    assert sorted(p.name for p in root.iterdir()) == [".sweep.lock"]  # nothing started
    # Once the first sweep is gone, the folder is free again.
    assert len(run(spec, project=REPO, root=root).runs) == 1
    # A sweep whose points are all finished only reads: it runs beside another (notebooks).
    with (root / ".sweep.lock").open("a") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        (summary,) = run(spec, project=REPO, root=root).runs
        assert summary.skipped


# Two `mcp token add` at once: each reads the file, adds its token and writes the file back.
ADDER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from hivemind_lab.mcp_server.tokens import add_token
    for i in range(40):
        add_token(Path(sys.argv[1]), f"{sys.argv[2]}{i}")
    """
)


def test_tokens_added_at_the_same_time_are_all_kept(tmp_path):
    from hivemind_lab.mcp_server.tokens import load_token_file

    path = tmp_path / "tokens.json"
    adders = [
        subprocess.Popen(
            [sys.executable, "-c", ADDER, str(path), model],
            env=child_env(tmp_path),
            stderr=subprocess.PIPE,
        )
        for model in ("claude", "grok", "gemini")
    ]
    errors = [a.communicate(timeout=60)[1].decode() for a in adders]
    assert [a.returncode for a in adders] == [0, 0, 0], errors
    assert len(load_token_file(path)) == 120  # no token issued and then lost
    assert path.stat().st_mode & 0o777 == 0o600
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("tokens")) == [
        "tokens.json"
    ]


def test_resume_refuses_a_rescore_run_with_no_deliberation_to_continue(tmp_path, grocer):
    from hivemind_lab.agents.testing import TestModel
    from hivemind_lab.compliance import rescore
    from hivemind_lab.deliberation import deliberate
    from tests.support import make_request, run_free

    run_free(tmp_path / "run", grocer, density=4000)
    rescored = tmp_path / "rescored"
    rescore(tmp_path / "run", practicality_kb=PRACTICALITY, out=rescored, model=TestModel())
    before = {p.name: p.read_bytes() for p in rescored.iterdir()}
    # `--resume` on it (the hint a killed rescore's 'already holds files' gives) used to run a
    # whole new deliberation into the rescore's directory and audit trail.
    with pytest.raises(InputError, match="rescore") as caught:
        deliberate(make_request(grocer), model=TestModel(), run_dir=rescored, resume=True)
    assert caught.value.field == "resume"
    assert {p.name: p.read_bytes() for p in rescored.iterdir()} == before


def _descendants(pid: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(ppid, []).append(int(entry.name))
    found, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.slow
def test_killing_a_sweep_stops_its_worker_processes_and_the_sweep_resumes(tmp_path):
    import os
    import signal
    import time

    (tmp_path / "experiments").mkdir()
    (tmp_path / "experiments" / "w.toml").write_text(
        'name = "w"\n'
        f'problems = ["{PROBLEMS / "regional-grocer-discounter-price-war.toml"}"]\n'
        f'knowledge_base = "{KNOWLEDGE}"\npracticality_kb = "{PRACTICALITY}"\n'
        'seeds = [0, 1]\nlatency_s = 0.2\nbackend = "test"\n'
        "[inputs]\nsufficiency = 2\nfeasibility = 55\ndensity = 8000\n"
        "[space]\nstubbornness = [0.1]\n"
    )
    command = [sys.executable, "-m", "hivemind_lab", "sweep", "experiments/w.toml"]
    sweep = subprocess.Popen(
        [*command, "--workers", "2"],
        cwd=tmp_path,
        env=child_env(tmp_path),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    runs = tmp_path / "experiments" / "runs" / "w"
    workers: set[int] = set()
    try:
        deadline = time.monotonic() + 90
        # Both points under way: one in the sweep's own process, one in a worker process.
        while time.monotonic() < deadline and len(list(runs.glob("*/audit.jsonl"))) < 2:
            time.sleep(0.02)
        workers = _descendants(sweep.pid)
        assert workers, "no worker process started"
        os.kill(sweep.pid, signal.SIGKILL)  # the sweep's process only, as a crash would
        sweep.wait(timeout=30)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(_alive(p) for p in workers):
            time.sleep(0.1)
        assert not [p for p in workers if _alive(p)], "worker processes outlived their sweep"
    finally:
        for pid in workers:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
    done = subprocess.run(
        command, cwd=tmp_path, env=child_env(tmp_path), capture_output=True, timeout=120
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    assert len(list(runs.glob("*/result.json"))) == 2
    for run_dir in runs.glob("deliberation-*"):
        assert verify_log(run_dir / "audit.jsonl").ok


def test_two_runs_started_in_one_directory_at_once_leave_the_first_ones_manifest(
    tmp_path, grocer, monkeypatch
):
    from hivemind_lab.agents.testing import TestModel
    from hivemind_lab.deliberation import deliberate, runner
    from tests.support import make_request, run_free

    out = tmp_path / "run"
    run_free(out, grocer, density=4000)
    manifest, audit = (out / "manifest.json").read_bytes(), (out / "audit.jsonl").read_bytes()
    # The second process checked the directory while it was still empty: replay that race.
    monkeypatch.setattr(runner, "check_run_dir", lambda *a, **k: None)
    with pytest.raises(InputError, match="already holds a run") as caught:
        deliberate(
            make_request(grocer, density=6000),
            model=TestModel(),
            run_dir=out,
            knowledge_base=KNOWLEDGE,
            practicality_kb=PRACTICALITY,
        )
    assert caught.value.field == "out"
    assert (out / "manifest.json").read_bytes() == manifest
    assert (out / "audit.jsonl").read_bytes() == audit


EXPORTER = textwrap.dedent(
    """
    import sys
    from hivemind_lab.runs.audit import export_log
    for i in range(60):
        export_log(sys.argv[1], sys.argv[2], format="jsonl")
    """
)


def test_exports_of_one_audit_trail_to_one_file_at_once_all_succeed(tmp_path):
    log = tmp_path / "run" / "audit.jsonl"
    with AuditLog(log) as audit:
        for i in range(200):
            audit.append("agent", events.RepeatRefused(solution=f"{i} " + "x" * 200))
    out = tmp_path / "out" / "audit.jsonl"
    exporters = [
        subprocess.Popen(
            [sys.executable, "-c", EXPORTER, str(log), str(out)],
            env=child_env(tmp_path),
            stderr=subprocess.PIPE,
        )
        for _ in range(3)
    ]
    errors = [e.communicate(timeout=60)[1].decode() for e in exporters]
    assert [e.returncode for e in exporters] == [0, 0, 0], errors
    assert out.read_bytes() == log.read_bytes()
    assert sorted(p.name for p in out.parent.iterdir()) == ["audit.jsonl"]
