"""Sign-in against an OIDC provider that is not ours: the ``oidc-provider-mock`` package (Authlib on Flask).

The provider requires its clients to be registered, so the gateway's client id and secret, and the
redirect URI made of ``THREADGATE_PUBLIC_URL``, are checked by someone else's code. A browser is stood in
for by one httpx client that follows redirects and keeps cookies: login → the provider's authorize page
→ the callback → ``/v1/me`` → an answer as the signed-in person (allowed by the groups claim the provider
puts in the ID token) → logout. Everything runs on 127.0.0.1 / localhost: no internet.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest

from gateway.people.signin import LOGIN_COOKIE, SESSION_COOKIE
from tests.api.conftest import AGENT_AUTH, OPERATOR_AUTH, Served, served_gateway, start_run
from tests.support.api_calls import raise_prompt
from tests.support.redis_server import free_port

try:
    import oidc_provider_mock
except ImportError:  # pragma: no cover - the [dev] extra installs it
    if os.environ.get("CI", "").lower() == "true":
        raise
    pytest.skip("oidc-provider-mock is not installed (pip install -e '.[dev]')", allow_module_level=True)

SECRET = "session-secret-for-tests-0123456789"
ALICE_SUB = "00u-alice-7f3a"
ALICE_CLAIMS = {
    "email": "alice@example.com",
    "email_verified": True,
    "name": "Alice Example",
    "groups": ["sre", "oncall"],
}


@pytest.fixture
def issuer() -> Iterator[str]:
    """The provider on a free localhost port, taking only registered clients and requiring a nonce."""
    with oidc_provider_mock.run_server_in_thread(
        require_client_registration=True, require_nonce=True
    ) as server:
        yield f"http://localhost:{server.server_port}"


def register_client(issuer: str, redirect_uri: str) -> dict[str, Any]:
    """Dynamic client registration (RFC 7591): the provider picks the client id and secret."""
    response = httpx.post(f"{issuer}/oauth2/clients", json={"redirect_uris": [redirect_uri]}, timeout=10)
    assert response.status_code == 201, response.text
    registered: dict[str, Any] = response.json()
    assert registered["token_endpoint_auth_method"] == "client_secret_basic"
    return registered


def set_user(issuer: str, sub: str, claims: dict[str, Any]) -> None:
    """The claims the provider will put in the ID token of ``sub``'s next sign-in."""
    response = httpx.put(f"{issuer}/users/{sub}", json=claims, timeout=10)
    assert response.status_code == 204, response.text


@contextlib.asynccontextmanager
async def gateway_at(real_redis: str, issuer: str, **extra: Any) -> AsyncIterator[Served]:
    """A gateway registered at the provider with the redirect URI its public URL makes."""
    port = free_port()
    public_url = f"http://127.0.0.1:{port}"
    client = register_client(issuer, f"{public_url}/auth/callback")
    settings = {
        "threadgate_oidc_issuer": issuer,
        "threadgate_oidc_client_id": client["client_id"],
        "threadgate_oidc_client_secret": client["client_secret"],
        "threadgate_session_secret": SECRET,
        "threadgate_public_url": public_url,
        **extra,
    }
    async with served_gateway(real_redis, port=port, **settings) as served:
        assert served.base_url == public_url
        yield served


@pytest.fixture
async def gateway(real_redis: str, issuer: str) -> AsyncIterator[Served]:
    async with gateway_at(real_redis, issuer) as served:
        yield served


@pytest.fixture
async def browser() -> AsyncIterator[httpx.AsyncClient]:
    """One client for every site, as a browser: it follows redirects and keeps each host's cookies."""
    async with httpx.AsyncClient(follow_redirects=True, timeout=10) as client:
        yield client


async def sign_in_at_provider(
    browser: httpx.AsyncClient, gateway: Served, issuer: str, sub: str, next_page: str
) -> httpx.Response:
    """``/auth/login`` to the provider's authorize page, the person picks ``sub``: the final response."""
    page = await browser.get(f"{gateway.base_url}/auth/login", params={"next": next_page})
    assert page.status_code == 200, page.text
    assert str(page.url).startswith(f"{issuer}/oauth2/authorize?"), page.url
    assert 'name="sub"' in page.text  # the provider's own sign-in form
    assert page.url.params["code_challenge_method"] == "S256" and page.url.params["nonce"]
    return await browser.post(str(page.url), data={"sub": sub})


async def test_sign_in_answer_and_sign_out_against_oidc_provider_mock(
    browser: httpx.AsyncClient, gateway: Served, issuer: str
) -> None:
    async with gateway.client(OPERATOR_AUTH) as operator, gateway.client(AGENT_AUTH) as agent:
        put = await operator.put("/v1/people/alice", json={"name": "Alice A.", "email": "alice@example.com"})
        assert put.status_code in (200, 201), put.text
        # Nobody in the directory is in sre: only the provider's groups claim lets alice answer.
        approvers = await operator.put("/v1/agents/ops", json={"human_input": {"approvers": ["group:sre"]}})
        assert approvers.status_code == 200, approvers.text
        run = await start_run(agent, thread_id="web:provider-mock", started_by=None)
        prompt = await raise_prompt(agent, run["run_id"])
    set_user(issuer, ALICE_SUB, ALICE_CLAIMS)

    landed = await sign_in_at_provider(browser, gateway, issuer, ALICE_SUB, "/v1/me")

    assert landed.status_code == 200, landed.text
    assert str(landed.url) == f"{gateway.base_url}/v1/me"
    hops = [str(response.url).split("?")[0] for response in landed.history]
    assert hops == [f"{issuer}/oauth2/authorize", f"{gateway.base_url}/auth/callback"]
    assert browser.cookies.get(SESSION_COOKIE, domain="127.0.0.1")
    assert browser.cookies.get(LOGIN_COOKIE, domain="127.0.0.1") is None  # one login, one callback
    me = {
        "person": "alice",
        "name": "Alice A.",
        "email": "alice@example.com",
        "identities": [],
        "groups": ["sre", "oncall"],  # the ID token's groups claim
    }
    assert landed.json() == me
    assert (await browser.get(f"{gateway.base_url}/v1/me")).json() == me

    answer = await browser.post(
        f"{gateway.base_url}/v1/agents/ops/inputs/{prompt['prompt_id']}",
        json={"action": "accept"},
        headers={"origin": gateway.base_url},
    )
    assert answer.status_code == 200, answer.text
    assert answer.json()["answered_by"] == "person:alice"
    async with gateway.client(OPERATOR_AUTH) as operator:
        settled = (await operator.get(f"/v1/prompts/{prompt['prompt_id']}")).json()
    assert settled["answered_by"] == "person:alice"
    assert settled.get("asserted_by") is None

    out = await browser.post(f"{gateway.base_url}/auth/logout", headers={"origin": gateway.base_url})
    assert out.status_code == 200 and out.json() == {"signed_in": False}
    assert browser.cookies.get(SESSION_COOKIE, domain="127.0.0.1") is None
    after = await browser.get(f"{gateway.base_url}/v1/me")
    assert after.status_code == 401
    assert after.json()["error"]["code"] == "UNAUTHORIZED"


async def test_a_person_the_provider_puts_in_no_group_may_not_answer(
    browser: httpx.AsyncClient, gateway: Served, issuer: str
) -> None:
    async with gateway.client(OPERATOR_AUTH) as operator, gateway.client(AGENT_AUTH) as agent:
        approvers = await operator.put("/v1/agents/ops", json={"human_input": {"approvers": ["group:sre"]}})
        assert approvers.status_code == 200, approvers.text
        run = await start_run(agent, thread_id="web:provider-mock-2", started_by=None)
        prompt = await raise_prompt(agent, run["run_id"])
    set_user(issuer, "bob-sub", {"email": "bob@example.com", "email_verified": True, "name": "Bob"})

    landed = await sign_in_at_provider(browser, gateway, issuer, "bob-sub", "/v1/me")

    assert landed.status_code == 200, landed.text
    me = landed.json()
    assert me["person"].startswith("bob-sub") and me["groups"] == []  # not in the directory: a slug of sub
    answer = await browser.post(
        f"{gateway.base_url}/v1/agents/ops/inputs/{prompt['prompt_id']}",
        json={"action": "accept"},
        headers={"origin": gateway.base_url},
    )
    assert answer.status_code == 403
    assert answer.json()["error"]["code"] == "FORBIDDEN"


async def test_a_client_secret_the_provider_did_not_issue_opens_no_session(
    browser: httpx.AsyncClient, real_redis: str, issuer: str
) -> None:
    async with gateway_at(real_redis, issuer, threadgate_oidc_client_secret="not-the-registered-one") as gw:
        set_user(issuer, ALICE_SUB, ALICE_CLAIMS)
        landed = await sign_in_at_provider(browser, gw, issuer, ALICE_SUB, "/v1/me")
        assert landed.status_code == 401, landed.text
        assert landed.json()["error"]["code"] == "SIGN_IN_FAILED"
        assert browser.cookies.get(SESSION_COOKIE, domain="127.0.0.1") is None
        assert (await browser.get(f"{gw.base_url}/v1/me")).status_code == 401
