"""``threadgate serve`` says it listens only once it does: a taken address and a store that does not answer
each stop it with one plain line and their own exit code, and settings that cannot work are named at start."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from gateway.base.settings import REDIS_SCHEMES, Settings
from gateway.cli import main
from gateway.process.commands import Exit
from gateway.store import connect
from tests.support.redis_server import free_port
from tests.support.serve import REPO, serve_env

TOKENS = "robot:agent:agent-token-1,desk:operator:operator-token-1"


def one_line(text: str) -> str:
    assert text.count("\n") == 1 and text.endswith("\n"), text
    return text.strip()


@pytest.mark.parametrize("host", ["127.0.0.1", "10.9.8.7"])  # a busy port; an address not on this machine
def test_serve_on_an_address_it_cannot_take_says_so_in_one_line(
    clean_env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], host: str
) -> None:
    clean_env.setenv("THREADGATE_API_TOKENS", TOKENS)
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        clean_env.setenv("THREADGATE_PORT", str(port))
        code = main(["serve", "--host", host])
    out, err = capsys.readouterr()
    assert code == Exit.CANNOT_LISTEN == 7
    line = one_line(err)
    assert line.startswith(f"threadgate: cannot listen on {host}:{port}: ")
    assert line.endswith("; pass --port or set THREADGATE_PORT") and "Errno" not in line
    assert "listening" not in out


@pytest.mark.parametrize("password", ["", ":s3cret-pass@"])
def test_serve_refuses_a_store_that_does_not_answer_before_it_listens(
    clean_env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], password: str
) -> None:
    port = free_port()  # nothing listens there
    clean_env.setenv("THREADGATE_API_TOKENS", TOKENS)
    clean_env.setenv("REDIS_URL", f"redis://{password}127.0.0.1:{port}/0")
    code = main(["serve", "--port", "0"])
    out, err = capsys.readouterr()
    assert code == Exit.STORE_UNREACHABLE == 8
    shown = f"redis://{':***@' if password else ''}127.0.0.1:{port}/0"
    assert one_line(err) == (
        f"threadgate: Redis at {shown} did not answer (connection refused); check REDIS_URL"
    )
    assert "listening" not in out and "s3cret" not in err


def test_listening_is_said_once_it_accepts_and_the_banner_comes_in_order(tmp_path: Path) -> None:
    port = free_port()
    command = [sys.executable, "-m", "gateway.cli", "serve", "--port", str(port)]
    process = subprocess.Popen(
        command, cwd=tmp_path, env=serve_env(PYTHONPATH=str(REPO)), stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        first = process.stdout.readline()
        # The moment it says so, it answers: no retry, no wait.
        assert httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=5).status_code == 200
        lines = [first] + [process.stdout.readline() for _ in range(4)]
    finally:
        process.terminate()
        process.wait(timeout=15)
    assert lines[0].startswith("Threadgate ") and f"listening on http://127.0.0.1:{port}" in lines[0]
    assert lines[1].startswith("Store: embedded")
    assert lines[2].startswith("Warning: REDIS_URL is unset")
    assert lines[3].startswith("Warning: THREADGATE_API_TOKENS is unset, so every API call will be refused")
    assert lines[4] == "Channels: none configured\n"


def test_port_0_reports_the_port_it_got(
    clean_env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The banner names the port the system picked, not 0 (the recorded server announces at once)."""
    from gateway.process import serving

    announced: list[str] = []

    class Announcing:
        def __init__(self, config: object, runtime: object, announce: object) -> None:
            self.announce = announce

        def run(self, sockets: list[socket.socket]) -> None:
            announced.append(str(sockets[0].getsockname()[1]))
            self.announce()  # type: ignore[operator]

    clean_env.setattr(serving, "DrainingServer", Announcing)
    clean_env.setenv("THREADGATE_API_TOKENS", TOKENS)
    assert main(["serve", "--port", "0"]) == 0
    out = capsys.readouterr().out
    assert f"listening on http://127.0.0.1:{announced[0]}\n" in out and ":0\n" not in out
    assert "THREADGATE_API_TOKENS" not in out  # tokens are set: no warning


@pytest.mark.parametrize("url", ["localhost:6379", "127.0.0.1:6379/0", "http://127.0.0.1:6379", "redis:/x"])
def test_a_redis_url_without_a_known_scheme_names_the_variable_and_every_scheme(
    clean_env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], url: str
) -> None:
    clean_env.setenv("REDIS_URL", url)
    assert main(["serve", "--port", "0"]) == Exit.USAGE
    line = one_line(capsys.readouterr().err)
    assert line.startswith("threadgate: bad settings: REDIS_URL must start with one of ")
    assert all(scheme in line for scheme in REDIS_SCHEMES)


@pytest.mark.parametrize("scheme", REDIS_SCHEMES)
async def test_every_scheme_the_settings_accept_is_one_the_store_opens(scheme: str) -> None:
    url = f"{scheme}/tmp/redis.sock" if scheme == "unix://" else f"{scheme}127.0.0.1:{free_port()}/0"
    assert Settings(_env_file=None, redis_url=url).redis_url == url
    connection = connect(url, max_connections=2)  # would raise for a scheme redis-py does not know
    await connection.client.aclose()


async def test_the_store_check_gives_up_in_bounded_time_on_a_silent_server() -> None:
    """A server that accepts but never answers is reported, not waited on forever."""
    from gateway.process import preflight

    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(1 << 16)
        await asyncio.Event().wait()

    server = await asyncio.start_server(silent, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    preflight_timeout = preflight.REDIS_TIMEOUT_S
    try:
        preflight.REDIS_TIMEOUT_S = 0.2
        problem = await preflight.store_problem(f"redis://127.0.0.1:{port}/0")
    finally:
        preflight.REDIS_TIMEOUT_S = preflight_timeout
        server.close()
    assert problem == f"Redis at redis://127.0.0.1:{port}/0 did not answer (timed out); check REDIS_URL"
