"""``threadgate serve`` checks before it listens: webhook targets (never Redis; private ranges warned
about), which proxies' forwarded headers it believes, and the bound address as an allowed host."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
import uvicorn

from gateway.cli import main
from gateway.process import preflight, serving
from tests.support.redis_server import free_port

real_bind = preflight.bind
TOKENS = "robot:agent:agent-token-1,desk:operator:operator-token-1"


class RecordedServer:
    """Stands in for the server ``serve`` runs: records the app and the options it starts it with."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, dict[str, Any]]] = []

    def __call__(self, config: uvicorn.Config, runtime: Any, announce: Any = None) -> RecordedServer:
        options = {
            "host": config.host,
            "proxy_headers": config.proxy_headers,
            "forwarded_allow_ips": config.forwarded_allow_ips,
        }
        self.calls.append((config.app, options))
        return self

    def run(self, sockets: Any = None) -> None:
        """Serving is not under test here: return at once, as a server stopped by a signal does."""


@pytest.fixture
def server(clean_env: pytest.MonkeyPatch) -> RecordedServer:
    recorded = RecordedServer()
    clean_env.setattr(serving, "DrainingServer", recorded)
    clean_env.setenv("THREADGATE_API_TOKENS", TOKENS)
    clean_env.setenv("THREADGATE_WEBHOOK_SECRET", "whsec-test")
    return recorded


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:{port}/",
        "http://localhost:{port}/x?k=v",
        "http://[::1]:{port}/",
        "http://[::]:{port}/",
    ],
)
def test_serve_refuses_a_webhook_aimed_at_redis_in_one_line(
    server: RecordedServer, clean_env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], url: str
) -> None:
    port = free_port()
    clean_env.setenv("REDIS_URL", f"redis://localhost:{port}/0")
    clean_env.setenv("THREADGATE_WEBHOOKS", url.format(port=port))
    code = main(["serve", "--port", "0"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and server.calls == []
    assert err.startswith("threadgate: THREADGATE_WEBHOOKS entry http") and "\n" not in err
    assert f":{port}/" in err and "REDIS_URL" in err and "k=v" not in err


def test_serve_warns_about_a_private_target_and_starts(
    server: RecordedServer, clean_env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    clean_env.setenv("THREADGATE_WEBHOOKS", "http://10.0.0.5/hook")
    assert main(["serve", "--port", "0"]) == 0
    warned = capsys.readouterr().err
    clean_env.setenv("THREADGATE_WEBHOOKS_ALLOW_PRIVATE", "true")
    assert main(["serve", "--port", "0"]) == 0
    allowed = capsys.readouterr().err
    assert len(server.calls) == 2
    assert '"webhooks.private_target"' in warned and "http://10.0.0.5/hook" in warned
    assert "webhooks.private_target" not in allowed


def test_serve_believes_forwarded_headers_only_from_the_proxies_named(
    server: RecordedServer, clean_env: pytest.MonkeyPatch
) -> None:
    main(["serve", "--port", "0"])
    clean_env.setenv("THREADGATE_TRUSTED_PROXIES", "10.0.0.0/8,::1")
    main(["serve", "--port", "0"])
    (_, default), (_, named) = server.calls
    assert (default["proxy_headers"], default["forwarded_allow_ips"]) == (False, [])
    assert (named["proxy_headers"], named["forwarded_allow_ips"]) == (True, ["10.0.0.0/8", "::1"])


async def test_the_address_serve_is_bound_to_is_an_allowed_host(
    server: RecordedServer, clean_env: pytest.MonkeyPatch
) -> None:
    # 10.9.8.7 is no address of this machine: listen on loopback instead, as if it were.
    clean_env.setattr(preflight, "bind", lambda host, port: real_bind("127.0.0.1", 0))
    assert main(["serve", "--host", "10.9.8.7", "--port", "0"]) == 0
    [(app, options)] = server.calls
    assert options["host"] == "10.9.8.7"
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://10.9.8.7:8787"
    ) as client:
        bound = await client.get("/v1/messages")
        other = await client.get("/v1/messages", headers={"Host": "10.9.8.8:8787"})
    assert bound.status_code == 401  # past the host check, stopped at the token
    assert other.status_code == 421
