"""Bad inputs are refused with the field's name and its allowed range, and nothing is written."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from hivemind_lab.cli import app
from hivemind_lab.deliberation.practicality import resolve_constraints
from hivemind_lab.errors import InputError
from hivemind_lab.inputs import Calibrations, DeliberationRequest, Limits, build
from tests.support import PRACTICALITY, PROBLEMS

GOOD = {"problem": "Should we enter Brazil?", "sufficiency": 2, "feasibility": 50, "density": 5000}


@pytest.mark.parametrize(
    ("field", "value", "allowed"),
    [
        ("problem", "   ", "non-empty"),
        ("problem", "", "non-empty"),
        ("sufficiency", 0, ">= 1"),
        ("feasibility", 0, "1-100"),
        ("feasibility", 101, "1-100"),
        ("density", 0, "> 0"),
        ("density", -3, "> 0"),
        ("density", "lots", "> 0"),
        ("critique_mode", "shouting", "pairwise or batched"),
    ],
)
def test_request_rejects_bad_values(field, value, allowed):
    with pytest.raises(InputError) as info:
        build(DeliberationRequest, **{**GOOD, field: value})
    assert info.value.field == field
    assert allowed in str(info.value)


@pytest.mark.parametrize("field", ["stubbornness", "similarity_threshold", "severity"])
@pytest.mark.parametrize("value", [-0.01, 1.5])
def test_calibrations_must_be_in_unit_interval(field, value):
    with pytest.raises(InputError) as info:
        build(Calibrations, **{field: value})
    assert info.value.field == field
    assert "0.0-1.0" in str(info.value)


@pytest.mark.parametrize(
    ("field", "value"), [("max_rounds", 0), ("max_regenerations", -1), ("concurrency", 0)]
)
def test_limits_reject_bad_values(field, value):
    with pytest.raises(InputError, match=field):
        build(Limits, **{field: value})


def test_unknown_profile_and_constraint_are_named():
    with pytest.raises(InputError, match=r"profile.*'bank'.*enterprise"):
        resolve_constraints(PRACTICALITY, "bank")
    with pytest.raises(InputError, match="'astrology'"):
        resolve_constraints(PRACTICALITY, ("legal", "astrology"))
    assert resolve_constraints(PRACTICALITY, "individual") == (
        "social",
        "occupational",
        "reputational",
    )


def test_a_constraint_corpus_without_profiles_uses_every_constraint_folder(tmp_path):
    for name in ("water", "labour"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "rules.md").write_text(f"# {name}\n\nRules about {name}.\n")
    assert resolve_constraints(tmp_path, "enterprise") == ("labour", "water")
    assert resolve_constraints(tmp_path, ("water",)) == ("water",)
    with pytest.raises(InputError, match=r"practicality_kb.*no constraint folders"):
        resolve_constraints(tmp_path / "water" / "rules.md", "enterprise")


@pytest.mark.parametrize(
    "text",
    ["[enterprise]\ndescription = 'x'\n", "[enterprise]\nconstraints = []\n", "enterprise = 3\n"],
)
def test_a_profile_without_constraints_is_refused_by_file_and_profile(tmp_path, text):
    (tmp_path / "legal").mkdir()
    (tmp_path / "profiles.toml").write_text(text)
    with pytest.raises(
        InputError, match=r"practicality_kb.*profiles.toml.*'enterprise'.*constraints"
    ):
        resolve_constraints(tmp_path, "enterprise")


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (["--feasibility", "101"], "feasibility"),
        (["--sufficiency", "0"], "sufficiency"),
        (["--density", "0"], "density"),
        (["--stubbornness", "2"], "stubbornness"),
        (["--profile", "astrology"], "profile"),
    ],
)
def test_cli_refuses_bad_input_and_writes_nothing(tmp_path, args, field):
    out = tmp_path / "run"
    problem = str(PROBLEMS / "regional-grocer-discounter-price-war.toml")
    result = CliRunner().invoke(app, ["deliberate", "--problem", problem, "--out", str(out), *args])
    assert result.exit_code == 2
    assert field in result.output
    assert not out.exists()


def test_cli_refuses_missing_problem_file(tmp_path):
    result = CliRunner().invoke(app, ["deliberate", "--problem", str(tmp_path / "nope.toml")])
    assert result.exit_code == 2
    assert "nope.toml" in result.output


def test_a_named_profile_with_stray_commas_is_still_the_named_profile():
    from hivemind_lab.inputs import parse_profile

    assert parse_profile("enterprise, ,") == "enterprise"
    assert parse_profile(" individual ") == "individual"
    assert parse_profile("legal, financial") == ("legal", "financial")


def test_a_validator_message_has_no_pydantic_prefix():
    from hivemind_lab.errors import InputError
    from hivemind_lab.inputs import DeliberationRequest, build

    with pytest.raises(InputError) as caught:
        build(
            DeliberationRequest,
            problem="x",
            sufficiency=1,
            feasibility=50,
            density=10,
            options=("A", "A"),
        )
    assert "value error" not in str(caught.value).lower()


def test_calibration_names_and_ranges_are_the_models():
    from hivemind_lab import calibrations
    from hivemind_lab.inputs import ALLOWED

    assert tuple(Calibrations.model_fields) == calibrations.CALIBRATIONS
    for name in calibrations.CALIBRATIONS:
        low, high = calibrations.bounds(name)
        assert ALLOWED[name] == f"{low}-{high}"
        with pytest.raises(InputError):
            build(Calibrations, **{name: high + 0.5})
