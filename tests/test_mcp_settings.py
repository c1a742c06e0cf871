"""Server settings and the names an HTTP server answers to (pure: no sockets opened)."""

from __future__ import annotations

import pytest

from hivemind_lab.errors import InputError
from hivemind_lab.mcp_server.exposure import exposure
from hivemind_lab.mcp_server.settings import ServerSettings


def settings(**values) -> ServerSettings:
    env = {"SOURCE_MODEL": "claude", **values.pop("env", {})}
    return ServerSettings.from_env(env, transport="http", **values)


def test_loopback_server_answers_to_its_loopback_names_only():
    names = exposure(settings(port=8765))
    assert names.base_url == "http://127.0.0.1:8765"
    assert set(names.allowed_hosts) == {"127.0.0.1:8765", "localhost:8765", "[::1]:8765"}
    assert "http://localhost:8765" in names.allowed_origins


def test_every_interface_uses_the_machine_names_and_never_advertises_the_wildcard(tmp_path):
    tokens = tmp_path / "t.json"
    tokens.write_text('{"tokens": []}')
    machine = ["hive-7.lan", "10.1.2.3", "fe80::1"]
    for wildcard in ("0.0.0.0", "::"):
        names = exposure(settings(host=wildcard, port=9000, token_file=tokens), names=machine)
        assert names.base_url == "http://hive-7.lan:9000"
        assert names.resource_url == "http://hive-7.lan:9000/mcp"
        assert {"hive-7.lan:9000", "10.1.2.3:9000", "[fe80::1]:9000"} <= set(names.allowed_hosts)
        assert "http://10.1.2.3:9000" in names.allowed_origins
        assert not any(wildcard in h for h in names.allowed_hosts if not h.startswith("["))
        assert "0.0.0.0" not in names.base_url


def test_public_url_and_extra_names_from_flags_or_environment(tmp_path):
    env = {
        "HIVEMIND_PUBLIC_URL": "https://hive.example.org",
        "HIVEMIND_ALLOWED_HOSTS": "relay.lan, proxy.lan:8443 other.lan:*",
        "HIVEMIND_ALLOWED_ORIGINS": "https://chat.example.org",
    }
    names = exposure(settings(port=8765, env=env))
    assert names.resource_url == "https://hive.example.org/mcp"
    assert {"hive.example.org", "hive.example.org:443"} <= set(names.allowed_hosts)
    assert {"relay.lan", "relay.lan:8765", "proxy.lan:8443", "other.lan:*"} <= set(
        names.allowed_hosts
    )
    assert {"https://hive.example.org", "https://chat.example.org"} <= set(names.allowed_origins)
    flags = settings(
        port=8765, env=env, public_url="http://flag.lan:9999", allowed_hosts=("x.lan",)
    )
    assert exposure(flags).base_url == "http://flag.lan:9999"
    assert "relay.lan" not in exposure(flags).allowed_hosts  # a flag replaces the variable


@pytest.mark.parametrize(
    ("env", "variable"),
    [
        ({"HIVEMIND_PUBLIC_URL": "hive.example.org"}, "HIVEMIND_PUBLIC_URL"),
        ({"HIVEMIND_PUBLIC_URL": "https://hive.example.org/mcp"}, "HIVEMIND_PUBLIC_URL"),
        ({"HIVEMIND_MAX_REQUEST_BYTES": "12"}, "HIVEMIND_MAX_REQUEST_BYTES"),
    ],
)
def test_bad_values_name_their_variable(env, variable):
    with pytest.raises(InputError, match=variable):
        settings(port=8765, env=env)
