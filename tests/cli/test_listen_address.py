"""`threadgate serve` and `threadgate demo` listen where THREADGATE_HOST/THREADGATE_PORT say; flags win."""

from __future__ import annotations

import socket

import pytest

from gateway.base.settings import Settings
from gateway.cli import listen_address, main, parse


def _settings(**values: object) -> Settings:
    return Settings(_env_file=None, **values)  # type: ignore[call-arg]


@pytest.mark.parametrize("command", ["serve", "demo"])
def test_without_flags_the_address_comes_from_the_settings(command: str) -> None:
    settings = _settings(threadgate_host="0.0.0.0", threadgate_port=9100)
    assert listen_address(parse([command]), settings) == ("0.0.0.0", 9100)


@pytest.mark.parametrize("command", ["serve", "demo"])
def test_flags_override_the_settings_and_port_0_means_any_free_port(command: str) -> None:
    settings = _settings(threadgate_host="0.0.0.0", threadgate_port=9100)
    args = parse([command, "--host", "127.0.0.2", "--port", "0"])
    assert listen_address(args, settings) == ("127.0.0.2", 0)


def test_demo_listens_on_threadgate_port(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        monkeypatch.setenv("THREADGATE_HOST", "127.0.0.1")
        monkeypatch.setenv("THREADGATE_PORT", str(port))
        assert main(["demo"]) == 7  # it tried the busy port named by the environment
    assert f"cannot listen on 127.0.0.1:{port}" in capsys.readouterr().err
