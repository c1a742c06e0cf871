"""Settings from environment variables: each test passes its own mapping (never the caller's
environment), and a bad value is named as the user wrote it, with what is allowed."""

from __future__ import annotations

import pytest
from pydantic import Field

from hivemind_lab.envconfig import EnvSettings
from hivemind_lab.errors import InputError
from hivemind_lab.graph.config import GraphConfig
from hivemind_lab.mcp_server.settings import ServerSettings


class Credentials(EnvSettings):
    user: str = Field(validation_alias="APP_USER")
    password: str = Field(repr=False, validation_alias="APP_PASSWORD")
    retries: int = Field(default=3, ge=0, le=10, validation_alias="APP_RETRIES")
    verbose: bool = False
    """Named by no variable: set in code only."""


@pytest.mark.parametrize(
    ("env", "variable", "allowed"),
    [
        ({"APP_RETRIES": "11"}, "APP_RETRIES", "a whole number >= 0 and <= 10"),
        ({"APP_RETRIES": "many"}, "APP_RETRIES", "a whole number >= 0 and <= 10"),
    ],
)
def test_a_bad_variable_is_named_as_written_with_the_allowed_values(env, variable, allowed):
    with pytest.raises(InputError) as info:
        Credentials.from_env({"APP_USER": "u", "APP_PASSWORD": "p", **env})
    assert info.value.field == variable
    assert info.value.allowed == allowed
    assert repr(env[variable]) in info.value.message


def test_a_keyword_wins_over_its_variable_and_is_named_as_a_keyword():
    env = {"APP_USER": "from-env", "APP_PASSWORD": "p", "APP_RETRIES": "2"}
    assert Credentials.from_env(env, user="from-flag", retries=None).user == "from-flag"
    assert Credentials.from_env(env, retries=None).retries == 2  # None: the flag was not given
    with pytest.raises(InputError) as info:
        Credentials.from_env(env, retries=50)
    assert info.value.field == "retries"


def test_only_named_variables_are_read_and_an_empty_one_is_unset():
    env = {"APP_USER": "u", "APP_PASSWORD": "p", "APP_RETRIES": "", "verbose": "true"}
    settings = Credentials.from_env(env)
    assert settings.retries == 3 and settings.verbose is False


def test_a_missing_value_names_its_field_and_variable_and_echoes_no_other_value():
    with pytest.raises(InputError) as info:
        Credentials.from_env({"APP_PASSWORD": "s3cret"})
    assert info.value.field == "user"
    assert "APP_USER" in str(info.value)
    assert "s3cret" not in str(info.value)


def test_settings_built_in_code_or_from_a_mapping_never_read_the_process_environment(
    monkeypatch,
):
    monkeypatch.setenv("CONSENSUS_PHI", "0.9")
    monkeypatch.setenv("APP_USER", "process")
    assert GraphConfig().consensus_phi == pytest.approx(0.618)
    assert GraphConfig.from_env({}).consensus_phi == pytest.approx(0.618)
    assert Credentials.from_env({"APP_USER": "given", "APP_PASSWORD": "p"}).user == "given"


def test_the_default_database_is_under_the_given_data_folder(tmp_path):
    config = GraphConfig.from_env({"XDG_DATA_HOME": str(tmp_path)})
    assert config.db_path == tmp_path / "hivemind_lab" / "hivemind.lbdb"
    chosen = GraphConfig.from_env({"XDG_DATA_HOME": str(tmp_path), "HIVEMIND_DB_PATH": "/g.lbdb"})
    assert str(chosen.db_path) == "/g.lbdb"


@pytest.mark.parametrize(
    ("env", "variable", "allowed"),
    [
        ({"HIVEMIND_STORE": "mysql"}, "HIVEMIND_STORE", "'ladybug' or 'neo4j'"),
        ({"CONSENSUS_QUORUM": "0"}, "CONSENSUS_QUORUM", "a number > 0.0 and <= 1.0"),
        ({"VOTING_WINDOW_HOURS": "soon"}, "VOTING_WINDOW_HOURS", "a number > 0"),
    ],
)
def test_graph_variables_are_named_with_what_they_allow(env, variable, allowed):
    with pytest.raises(InputError) as info:
        GraphConfig.from_env(env)
    assert (info.value.field, info.value.allowed) == (variable, allowed)


def test_server_lists_split_on_commas_and_spaces_and_a_flag_replaces_the_variable():
    env = {"SOURCE_MODEL": "claude", "HIVEMIND_ALLOWED_ORIGINS": "https://a.example, https://b"}
    settings = ServerSettings.from_env(env, transport="http")
    assert settings.allowed_origins == ("https://a.example", "https://b")
    flagged = ServerSettings.from_env(env, transport="http", allowed_origins=("https://c",))
    assert flagged.allowed_origins == ("https://c",)
    with pytest.raises(InputError) as info:
        ServerSettings.from_env({**env, "HIVEMIND_IDLE_TIMEOUT_S": "0"}, transport="http")
    assert (info.value.field, info.value.allowed) == (
        "HIVEMIND_IDLE_TIMEOUT_S",
        "a whole number >= 1 and <= 3600",
    )
