"""Tests never read the caller's environment: the suite passes with hostile variables exported."""

from __future__ import annotations

import subprocess
import sys

from tests.support import REPO, child_env

HOSTILE = {
    "OPENAI_API_KEY": "bogus",
    "OPENAI_BASE_URL": "http://127.0.0.1:9",
    "HIVEMIND_MODEL": "nonexistent",
    "HIVEMIND_MODEL_FILE": "/nonexistent.gguf",
    "HIVEMIND_STORE": "bogus",
    "HIVEMIND_DB_PATH": "/nonexistent/dir/x.lbdb",
    "NEO4J_URI": "bolt://127.0.0.1:9",
    "NEO4J_PASSWORD": "wrong",
    "SOURCE_MODEL": "bad model!",
    "CONFLICT_THRESHOLD": "-1",
    "XDG_DATA_HOME": "/nonexistent/xdg",
    "COLUMNS": "40",
    "FORCE_COLOR": "1",
    "TZ": "Pacific/Kiritimati",
}
SAMPLE = [
    "tests/test_cli.py::test_arguments_render_as_upper_case_names",
    "tests/test_cli.py::test_deliberate_help_shows_defaults_of_sliders_and_calibrations",
    "tests/test_cli.py::test_kb_check_and_slice_accept_a_mixed_corpus",
    "tests/test_audit.py::test_cli_verify_intact_log",
    "tests/test_knowledge_documents.py::test_kb_check_passes_on_the_sample_kb",
    "tests/test_compliance.py::test_kb_diff_command_json_table_and_exit_code",
]


def test_cli_tests_pass_with_a_hostile_environment_from_another_folder(tmp_path):
    """A narrow terminal, forced colours and bad settings exported by the caller, and pytest
    started outside the project: in-process CLI tests render as in CI."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            *(str(REPO / t) for t in SAMPLE),
        ],
        cwd=tmp_path,
        env=child_env(tmp_path, **HOSTILE),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-4000:]
    assert f"{len(SAMPLE)} passed" in done.stdout
