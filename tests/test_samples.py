"""Sample-data defaults work from any folder; paths the user gives are never replaced."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from hivemind_lab.samples import KNOWLEDGE, PRACTICALITY, PROJECT, sample_path
from tests.support import child_env


def test_a_default_absent_here_names_the_projects_copy(tmp_path):
    assert sample_path(KNOWLEDGE, KNOWLEDGE, cwd=tmp_path) == PROJECT / KNOWLEDGE
    assert sample_path(Path(PRACTICALITY), PRACTICALITY, cwd=tmp_path) == PROJECT / PRACTICALITY


def test_a_default_present_here_and_any_given_path_are_kept(tmp_path):
    (tmp_path / KNOWLEDGE).mkdir(parents=True)
    assert sample_path(KNOWLEDGE, KNOWLEDGE, cwd=tmp_path) == Path(KNOWLEDGE)
    assert sample_path("mine/kb", KNOWLEDGE, cwd=tmp_path) == Path("mine/kb")
    assert sample_path(tmp_path / "none", KNOWLEDGE, cwd=tmp_path) == tmp_path / "none"


def test_kb_check_and_deliberate_run_from_another_folder(tmp_path):
    cli = [sys.executable, "-m", "hivemind_lab"]
    env = child_env(tmp_path)
    check = subprocess.run(
        [*cli, "kb", "check"], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert check.returncode == 0, check.stderr
    assert "documents" in check.stdout
    problem = tmp_path / "p.txt"
    problem.write_text("A regional bakery's options:\n- Open a second shop\n- Start wholesale\n")
    run = subprocess.run(
        [
            *cli,
            "deliberate",
            "--problem",
            str(problem),
            "--out",
            str(tmp_path / "run"),
            "--backend",  # the sample folders are the point, not the stand-in's reasoning
            "test",
            "--max-rounds",
            "1",
            "--max-regenerations",
            "0",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "run" / "result.json").exists()
