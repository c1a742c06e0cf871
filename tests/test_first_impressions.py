"""What a new user meets first: the README's opening, a quiet `deliberate` (progress on stderr,
the outcome in one line and the report's path on stdout), every mistake of a problem file at
once in the author's words, and flag errors before anything is printed."""

from __future__ import annotations

from typer.testing import CliRunner

from hivemind_lab.cli import app
from tests.support import PROBLEMS, REPO

GROCER = str(PROBLEMS / "regional-grocer-discounter-price-war.toml")


def test_the_readme_says_what_for_whom_and_the_two_commands_in_three_lines():
    title, blank, *lines = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    assert title == "# hivemind_lab" and blank == ""
    what, whom, commands, after = lines[:4]
    assert after == "" and all(len(line.split()) <= 40 for line in (what, whom, commands))
    assert "agents" in what and whom.startswith("For ")
    assert "`make demo`" in commands and "`make test`" in commands
    assert "make test" in (REPO / ".ci" / "run").read_text()  # CI runs the test command


def test_deliberate_prints_the_outcome_in_one_line_and_the_report(tmp_path):
    out = tmp_path / "run"
    result = CliRunner().invoke(
        app, ["deliberate", "--problem", GROCER, "--out", str(out)], env={"COLUMNS": "100"}
    )
    assert result.exit_code == 0, result.output
    outcome, report = result.stdout.splitlines()  # no decision card, no 30 lines of intake
    assert outcome.startswith("Converged: Pursue “Reposition towards fresh food and service”")
    assert report == f"report: {out / 'report.html'}"
    assert (out / "report.html").exists()


def test_verbose_prints_the_card_only_after_every_flag_is_checked(tmp_path):
    used = tmp_path / "used"
    used.mkdir()
    (used / "notes.txt").write_text("mine\n")
    for flags in (["--out", str(used)], ["--backend", "tset", "--out", str(tmp_path / "new")]):
        result = CliRunner().invoke(
            app, ["deliberate", "--problem", GROCER, "--verbose", *flags], env={"COLUMNS": "200"}
        )
        assert result.exit_code == 2, result.output
        assert result.stdout == "", "the decision card came before the flag's error"
        assert result.stderr.startswith("error: ")
    shown = CliRunner().invoke(
        app,
        ["deliberate", "--problem", GROCER, "--verbose", "--out", str(tmp_path / "run")],
        env={"COLUMNS": "200"},
    )
    assert shown.exit_code == 0, shown.output
    assert shown.stdout.startswith("Options (the problem file):") and "Facts (21):" in shown.stdout
    assert "(status converged)" in shown.stdout


def test_every_mistake_of_a_problem_file_is_named_at_once_in_the_authors_words(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text(
        'id = "Bad Id"\ntitle = "A bad problem"\nquestion = "Should we?"\ncolour = "red"\n'
        '[suggested]\nfeasibility = 150\ndensity = "lots"\n',
        encoding="utf-8",
    )
    result = CliRunner().invoke(app, ["deliberate", "--problem", str(path)])
    assert result.exit_code == 2 and result.stdout == ""
    error = result.stderr
    assert error.startswith(f"error: {path}: 4 fields need fixing:")
    lines = [line.strip() for line in error.splitlines()[1:]]
    assert [line.split(":")[0] for line in lines] == [
        "id",
        "suggested.feasibility",
        "suggested.density",
        "colour",
    ]
    assert "must be at most 100, got 150" in lines[1]
    assert "is not a whole number, got 'lots'" in lines[2]
    assert "is not a field of a problem" in lines[3]
    assert "Input should" not in error and "Extra inputs" not in error  # pydantic's wording
