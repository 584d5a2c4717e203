"""``/mcp`` as an OAuth 2.1 protected resource (MCP 2025-11-25, RFC 9728; contract §10): its metadata,
the 401 that points to it, and the issuer's access tokens for mapped clients acting as agent tokens."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest

from tests.api.conftest import AGENT_AUTH, Served, served_gateway
from tests.fakes.oidc import FakeOidcProvider

PUBLIC_URL = "https://gw.example.com"
RESOURCE = f"{PUBLIC_URL}/mcp"
METADATA_URL = f"{PUBLIC_URL}/.well-known/oauth-protected-resource"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}
MCP_HEADERS = {"accept": "application/json, text/event-stream", "host": "gw.example.com"}


@pytest.fixture
def idp() -> Iterator[FakeOidcProvider]:
    provider = FakeOidcProvider().start()
    yield provider
    provider.stop()


@contextlib.asynccontextmanager
async def resource_gateway(real_redis: str, idp: FakeOidcProvider, **extra: Any) -> AsyncIterator[Served]:
    settings = {
        "threadgate_oidc_issuer": idp.issuer,
        "threadgate_session_secret": "a-session-secret-for-tests",
        "threadgate_public_url": PUBLIC_URL,
        "threadgate_oauth_clients": "claude-desktop:ops|deploy,inspector:deploy",
        **extra,
    }
    async with served_gateway(real_redis, **settings) as served:
        yield served


@pytest.fixture
async def gateway(real_redis: str, idp: FakeOidcProvider) -> AsyncIterator[Served]:
    async with resource_gateway(real_redis, idp) as served:
        yield served


async def initialize(gateway: Served, headers: dict[str, str]) -> httpx.Response:
    async with gateway.client() as client:
        return await client.post("/mcp", json=INITIALIZE, headers={**MCP_HEADERS, **headers})


def bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


async def test_resource_metadata_names_the_resource_and_the_issuer(
    gateway: Served, idp: FakeOidcProvider
) -> None:
    async with gateway.client() as client:
        for path in ("/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"):
            response = await client.get(path, headers={"host": "gw.example.com"})
            assert response.status_code == 200, response.text
            assert response.json() == {
                "resource": RESOURCE,
                "authorization_servers": [idp.issuer],
                "bearer_methods_supported": ["header"],
            }


async def test_a_401_from_mcp_points_to_the_resource_metadata(gateway: Served) -> None:
    response = await initialize(gateway, {})
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == f'Bearer resource_metadata="{METADATA_URL}"'
    bad = await initialize(gateway, bearer("not-a-token"))
    assert bad.headers["www-authenticate"] == f'Bearer resource_metadata="{METADATA_URL}"'


async def test_an_access_token_for_a_mapped_client_opens_a_session(
    gateway: Served, idp: FakeOidcProvider
) -> None:
    token = idp.access_token(client_id="claude-desktop", audience=RESOURCE)
    response = await initialize(gateway, {**bearer(token), "x-threadgate-agent": "deploy"})
    assert response.status_code == 200, response.text
    assert response.headers["mcp-session-id"]


async def test_client_id_claim_names_the_client_too(gateway: Served, idp: FakeOidcProvider) -> None:
    token = idp.sign({**_claims(idp, audience=RESOURCE), "client_id": "inspector"})
    response = await initialize(gateway, bearer(token))
    assert response.status_code == 200, response.text


async def test_the_token_acts_only_for_its_clients_agents(gateway: Served, idp: FakeOidcProvider) -> None:
    token = idp.access_token(client_id="inspector", audience=RESOURCE)
    response = await initialize(gateway, {**bearer(token), "x-threadgate-agent": "ops"})
    assert response.status_code == 403


@pytest.mark.parametrize(
    "case",
    ["wrong-aud", "unmapped-client", "expired", "other-issuer", "unknown-key", "unsigned"],
)
async def test_a_bad_access_token_is_401(gateway: Served, idp: FakeOidcProvider, case: str) -> None:
    if case == "wrong-aud":
        token = idp.access_token(client_id="claude-desktop", audience="https://other.example/mcp")
    elif case == "unmapped-client":
        token = idp.access_token(client_id="stranger", audience=RESOURCE)
    elif case == "expired":
        token = idp.access_token(client_id="claude-desktop", audience=RESOURCE, expired=True)
    elif case == "other-issuer":
        token = idp.access_token(client_id="claude-desktop", audience=RESOURCE, iss="https://evil.example")
    elif case == "unknown-key":
        idp_other = FakeOidcProvider()
        idp_other.issuer = idp.issuer
        token = idp_other.access_token(client_id="claude-desktop", audience=RESOURCE)
    else:
        token = idp.sign(_claims(idp, audience=RESOURCE, azp="claude-desktop"), unsigned=True)
    response = await initialize(gateway, {**bearer(token), "x-threadgate-agent": "ops"})
    assert response.status_code == 401, response.text
    assert response.json()["error"]["code"] == "UNAUTHORIZED"
    assert "resource_metadata=" in response.headers["www-authenticate"]


async def test_an_access_token_is_no_operator(gateway: Served, idp: FakeOidcProvider) -> None:
    token = idp.access_token(client_id="claude-desktop", audience=RESOURCE)
    async with gateway.client(bearer(token)) as client:
        response = await client.put(
            "/v1/agents/ops", json={"human_input": {"approvers": []}}, headers={"host": "gw.example.com"}
        )
    assert response.status_code == 403


async def test_static_tokens_keep_working(gateway: Served) -> None:
    response = await initialize(gateway, {**AGENT_AUTH, "x-threadgate-agent": "ops"})
    assert response.status_code == 200, response.text


async def test_without_an_issuer_mcp_401_is_a_plain_bearer_challenge(served: Served) -> None:
    async with served.client() as client:
        response = await client.post("/mcp", json=INITIALIZE, headers={"accept": MCP_HEADERS["accept"]})
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == "Bearer"


def _claims(idp: FakeOidcProvider, *, audience: str, **extra: Any) -> dict[str, Any]:
    import time

    now = int(time.time())
    claims = {"iss": idp.issuer, "aud": audience, "sub": "client", "iat": now, "exp": now + 300, **extra}
    return {name: value for name, value in claims.items() if value is not None}


async def test_a_verified_token_serves_the_in_process_api_calls(
    gateway: Served, idp: FakeOidcProvider
) -> None:
    token = idp.access_token(client_id="claude-desktop", audience=RESOURCE)
    assert (await initialize(gateway, {**bearer(token), "x-threadgate-agent": "ops"})).status_code == 200
    async with gateway.client(bearer(token)) as client:  # as the MCP tools call the API, at localhost
        response = await client.get("/v1/agents/ops", headers={"host": "localhost"})
    assert response.status_code == 200, response.text
