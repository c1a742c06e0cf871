"""`make test` runs two pytest-xdist workers and relies on ``--dist loadgroup`` to keep the tests
of one service on one worker (tests/conftest.py tags them): the Neo4j tests wipe the one
database. pytest 9 broke that silently (every test ran wherever), so the pairing is checked."""

from __future__ import annotations

import subprocess
import sys

from tests.support import child_env

GROUPED = """
import os
import pytest

@pytest.mark.xdist_group("service")
@pytest.mark.parametrize("n", range(6))
def test_grouped(n):
    with open(os.environ["WORKERS_LOG"], "a") as f:
        f.write(os.environ["PYTEST_XDIST_WORKER"] + "\\n")

@pytest.mark.parametrize("n", range(6))
def test_free(n):
    pass
"""


def test_tests_of_one_group_run_on_one_worker(tmp_path):
    (tmp_path / "test_grouped.py").write_text(GROUPED)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "xdist.plugin",  # the one plugin under test: the others only cost start-up
            "-p",
            "no:cacheprovider",
            "-n",
            "2",
            "--dist",
            "loadgroup",
            "--rootdir",
            str(tmp_path),
            str(tmp_path / "test_grouped.py"),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=child_env(
            tmp_path, WORKERS_LOG=str(tmp_path / "workers.txt"), PYTEST_DISABLE_PLUGIN_AUTOLOAD="1"
        ),
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    workers = (tmp_path / "workers.txt").read_text().split()
    assert len(workers) == 6
    assert len(set(workers)) == 1, workers
