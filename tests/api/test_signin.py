"""Sign-in with an OIDC provider (contract §10): the whole flow over HTTP against a fake provider, every
refusal of the callback, the session cookie, and answering with it."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from gateway.people.signin import SESSION_COOKIE
from gateway.store import keys
from tests.api.conftest import AGENT_AUTH, OPERATOR_AUTH, Served, served_gateway, start_run
from tests.fakes.oidc import FakeOidcProvider
from tests.support.api_calls import raise_prompt


@dataclass(frozen=True)
class DirectoryPerson:
    person: str
    name: str | None
    email: str | None
    identities: list[str] = field(default_factory=list)
    groups: list[str] = field(default_factory=list)


class FakeDirectory:
    """The people directory, as sign-in reads it."""

    def __init__(self, *people: DirectoryPerson) -> None:
        self.people = {person.person: person for person in people}

    async def by_email(self, email: str) -> DirectoryPerson | None:
        return next((p for p in self.people.values() if (p.email or "").lower() == email.lower()), None)

    async def get(self, person_id: str) -> DirectoryPerson | None:
        return self.people.get(person_id)


ALICE = DirectoryPerson("alice", "Alice A.", "alice@example.com", ["slack:U0ALICE"], ["ops"])


@pytest.fixture
def idp() -> Iterator[FakeOidcProvider]:
    provider = FakeOidcProvider().start()
    yield provider
    provider.stop()


@contextlib.asynccontextmanager
async def signin_gateway(
    real_redis: str, idp: FakeOidcProvider, directory: FakeDirectory | None = None, **extra: Any
) -> AsyncIterator[Served]:
    async with served_gateway(real_redis, **idp.gateway_settings(**extra)) as served:
        signin = served.app.state.signin
        signin.directory = directory or FakeDirectory(ALICE)
        idp.redirect_uris = {f"{served.base_url}/auth/callback"}
        yield served


@pytest.fixture
async def gateway(real_redis: str, idp: FakeOidcProvider) -> AsyncIterator[Served]:
    async with signin_gateway(real_redis, idp) as served:
        yield served


@pytest.fixture
async def browser(gateway: Served) -> AsyncIterator[httpx.AsyncClient]:
    """A client that keeps cookies and follows nothing by itself, like a browser tab driven by hand."""
    async with httpx.AsyncClient(base_url=gateway.base_url, timeout=10) as client:
        yield client


async def begin(browser: httpx.AsyncClient, next_page: str | None = "/inbox") -> str:
    """``/auth/login``: the authorize URL it redirects to."""
    params = {"next": next_page} if next_page is not None else {}
    response = await browser.get("/auth/login", params=params)
    assert response.status_code == 302, response.text
    return response.headers["location"]


async def at_provider(authorize_url: str) -> str:
    """The provider signs the person in: the callback URL it sends the browser back to."""
    async with httpx.AsyncClient(timeout=10) as client:
        response = await client.get(authorize_url)
    assert response.status_code == 302, response.text
    return response.headers["location"]


async def sign_in(browser: httpx.AsyncClient, next_page: str | None = "/inbox") -> httpx.Response:
    """The whole dance; the callback's response."""
    callback = await at_provider(await begin(browser, next_page))
    return await browser.get(callback)


def query_of(url: str) -> dict[str, str]:
    return {name: values[0] for name, values in parse_qs(urlsplit(url).query).items()}


# The flow --------------------------------------------------------------------------------------------


async def test_login_redirects_to_authorize_with_state_nonce_and_s256_challenge(
    browser: httpx.AsyncClient, idp: FakeOidcProvider
) -> None:
    url = await begin(browser)
    assert url.startswith(f"{idp.issuer}/authorize?")
    query = query_of(url)
    assert query["response_type"] == "code"
    assert query["client_id"] == idp.client_id
    assert query["code_challenge_method"] == "S256"
    assert len(query["code_challenge"]) == 43
    assert len(query["state"]) >= 32 and len(query["nonce"]) >= 32
    assert query["scope"] == "openid email profile"
    assert query["redirect_uri"].endswith("/auth/callback")


async def test_sign_in_sets_a_session_cookie_and_goes_to_next(browser: httpx.AsyncClient) -> None:
    response = await sign_in(browser, "/inbox?view=history")
    assert response.status_code == 302
    assert response.headers["location"] == "/inbox?view=history"
    cookie = next(h for h in response.headers.get_list("set-cookie") if h.startswith(f"{SESSION_COOKIE}="))
    flags = {part.strip().lower() for part in cookie.split(";")}
    assert "httponly" in flags and "samesite=lax" in flags and "path=/" in flags
    assert "secure" not in flags  # plain http here; https sets it (test_cookie_is_secure_on_https)
    value = cookie.split(";")[0].split("=", 1)[1]
    assert len(value) >= 22  # at least 128 random bits


async def test_me_is_the_directory_person_with_the_verified_email(browser: httpx.AsyncClient) -> None:
    await sign_in(browser)
    response = await browser.get("/v1/me")
    assert response.status_code == 200, response.text
    assert response.json() == {
        "person": "alice",
        "name": "Alice A.",
        "email": "alice@example.com",
        "identities": ["slack:U0ALICE"],
        "groups": ["ops", "sre"],  # the directory's, then the token's groups claim
    }


async def test_unverified_email_is_not_the_directory_person(
    browser: httpx.AsyncClient, idp: FakeOidcProvider
) -> None:
    idp.user = {**idp.user, "email_verified": False, "sub": "u-42"}
    await sign_in(browser)
    me = (await browser.get("/v1/me")).json()
    assert me["person"] == "u-42"
    assert me["identities"] == []


async def test_a_person_not_in_the_directory_is_a_slug_of_sub(
    browser: httpx.AsyncClient, idp: FakeOidcProvider
) -> None:
    idp.user = {"sub": "Zoë|00u1ab", "email": "zoe@example.com", "email_verified": True, "name": "Zoë"}
    await sign_in(browser)
    me = (await browser.get("/v1/me")).json()
    assert me["person"].startswith("zo-00u1ab-")
    assert me["name"] == "Zoë" and me["email"] == "zoe@example.com" and me["identities"] == []


async def test_a_sub_naming_a_directory_person_does_not_become_them(
    browser: httpx.AsyncClient, idp: FakeOidcProvider
) -> None:
    idp.user = {"sub": "alice", "email": "mallory@example.com", "email_verified": True}
    await sign_in(browser)
    me = (await browser.get("/v1/me")).json()
    assert me["person"] != "alice" and me["person"].startswith("alice-")


async def test_me_without_a_session_is_401(browser: httpx.AsyncClient) -> None:
    response = await browser.get("/v1/me")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "UNAUTHORIZED"
    operator = await browser.get("/v1/me", headers=OPERATOR_AUTH)
    assert operator.status_code == 401


@pytest.mark.parametrize(
    "next_page",
    [
        "https://evil.example/",
        "//evil.example/x",
        "/\\evil.example",
        "javascript:alert(1)",
        "evil",
        "/\x00x",
        "",
    ],
)
async def test_next_off_this_gateway_goes_to_the_inbox(browser: httpx.AsyncClient, next_page: str) -> None:
    response = await sign_in(browser, next_page)
    assert response.status_code == 302
    assert response.headers["location"] == "/inbox"


async def test_discovery_is_cached(browser: httpx.AsyncClient, idp: FakeOidcProvider) -> None:
    await sign_in(browser)
    await sign_in(browser)
    assert idp.count("/.well-known/openid-configuration") == 1


async def test_rotated_keys_are_fetched_again(
    browser: httpx.AsyncClient, idp: FakeOidcProvider, gateway: Served
) -> None:
    await sign_in(browser)
    before = idp.count("/jwks")
    idp.rotate()
    response = await sign_in(browser)
    assert response.status_code == 302, response.text
    assert idp.count("/jwks") == before + 1


# Refusals of the callback -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "spoil",
    [
        {"aud": "another-client"},
        {"nonce": "not-this-login"},
        {"iss": "https://evil.example"},
        {"expired": True},
        {"unsigned": True},
        {"unknown_key": True},
    ],
    ids=["wrong-aud", "wrong-nonce", "wrong-iss", "expired", "alg-none", "unknown-key"],
)
async def test_a_bad_id_token_opens_no_session(
    browser: httpx.AsyncClient, idp: FakeOidcProvider, spoil: dict[str, Any]
) -> None:
    idp.spoil_next(**spoil)
    response = await sign_in(browser)
    assert response.status_code == 401, response.text
    assert response.json()["error"]["code"] == "SIGN_IN_FAILED"
    assert SESSION_COOKIE not in response.headers.get("set-cookie", "")
    assert (await browser.get("/v1/me")).status_code == 401


async def test_an_unknown_state_is_refused(browser: httpx.AsyncClient) -> None:
    callback = await at_provider(await begin(browser))
    query = query_of(callback)
    response = await browser.get("/auth/callback", params={"code": query["code"], "state": "forged"})
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "SIGN_IN_FAILED"


async def test_a_state_is_good_for_one_callback(browser: httpx.AsyncClient) -> None:
    callback = await at_provider(await begin(browser))
    assert (await browser.get(callback)).status_code == 302
    assert (await browser.get(callback)).status_code == 400


async def test_a_callback_in_another_browser_is_refused(gateway: Served) -> None:
    async with (
        httpx.AsyncClient(base_url=gateway.base_url) as victim,
        httpx.AsyncClient(base_url=gateway.base_url) as attacker,
    ):
        callback = await at_provider(await begin(attacker))
        response = await victim.get(callback)  # login CSRF: the attacker's code in the victim's browser
    assert response.status_code == 400
    assert SESSION_COOKIE not in response.headers.get("set-cookie", "")


async def test_a_code_with_the_wrong_verifier_is_refused(
    browser: httpx.AsyncClient, idp: FakeOidcProvider
) -> None:
    callback = await at_provider(await begin(browser))
    code = query_of(callback)["code"]
    idp.codes[code].challenge = "not-the-challenge-of-this-verifier"
    response = await browser.get(callback)
    assert response.status_code == 401
    assert "refused the code" in response.json()["error"]["message"]


async def test_a_provider_error_is_refused(browser: httpx.AsyncClient) -> None:
    await begin(browser)
    response = await browser.get("/auth/callback", params={"error": "access_denied", "state": "x"})
    assert response.status_code == 400


# Sessions ---------------------------------------------------------------------------------------------


async def test_logout_ends_the_session_server_side(browser: httpx.AsyncClient) -> None:
    await sign_in(browser)
    session_id = browser.cookies[SESSION_COOKIE]
    response = await browser.post("/auth/logout")
    assert response.status_code == 200
    assert (
        f'{SESSION_COOKIE}=""' in response.headers["set-cookie"]
        or "Max-Age=0" in response.headers["set-cookie"]
    )
    # The cookie kept by someone who copied it does not work either.
    async with httpx.AsyncClient(
        base_url=str(browser.base_url), cookies={SESSION_COOKIE: session_id}
    ) as thief:
        assert (await thief.get("/v1/me")).status_code == 401


async def test_redis_keeps_a_hash_of_the_session_id_with_its_expiry(
    browser: httpx.AsyncClient, gateway: Served
) -> None:
    await sign_in(browser)
    session_id = browser.cookies[SESSION_COOKIE]
    redis = gateway.runtime.store.redis
    found = [key async for key in redis.scan_iter(match="tg:signin:session:*")]
    assert len(found) == 1
    assert session_id not in found[0]
    ttl = await redis.ttl(found[0])
    assert 12 * 3600 - 60 < ttl <= 12 * 3600


async def test_an_expired_session_is_refused(browser: httpx.AsyncClient, gateway: Served) -> None:
    await sign_in(browser)
    redis = gateway.runtime.store.redis
    for key in [key async for key in redis.scan_iter(match="tg:signin:session:*")]:
        await redis.pexpire(key, 1)
    await _sleep(0.05)
    assert (await browser.get("/v1/me")).status_code == 401


async def test_a_person_removed_from_the_directory_loses_their_session(
    browser: httpx.AsyncClient, gateway: Served
) -> None:
    await sign_in(browser)
    assert (await browser.get("/v1/me")).status_code == 200
    del gateway.app.state.signin.directory.people["alice"]
    assert (await browser.get("/v1/me")).status_code == 401
    gateway.app.state.signin.directory.people["alice"] = ALICE
    assert (await browser.get("/v1/me")).status_code == 401  # ended for good: sign in again


async def test_session_hours_setting_sets_the_expiry(real_redis: str, idp: FakeOidcProvider) -> None:
    async with (
        signin_gateway(real_redis, idp, threadgate_session_hours=2) as served,
        httpx.AsyncClient(base_url=served.base_url) as client,
    ):
        response = await sign_in(client)
        cookie = response.headers["set-cookie"]
        assert "Max-Age=7200" in cookie


async def test_cookie_is_secure_on_https(real_redis: str, idp: FakeOidcProvider) -> None:
    async with (
        signin_gateway(real_redis, idp, threadgate_public_url="https://gw.example.com") as served,
        httpx.AsyncClient(base_url=served.base_url) as client,
    ):
        client.headers["host"] = "gw.example.com"
        idp.redirect_uris = {"https://gw.example.com/auth/callback"}
        response = await client.get("/auth/login")
        login_cookie = response.headers["set-cookie"]
        assert "secure" in {part.strip().lower() for part in login_cookie.split(";")}
        assert (
            query_of(response.headers["location"])["redirect_uri"] == "https://gw.example.com/auth/callback"
        )
        callback = urlsplit(await at_provider(response.headers["location"]))
        binder = login_cookie.split(";")[0].split("=", 1)[1]  # httpx keeps Secure cookies off http
        response = await client.get(
            f"{callback.path}?{callback.query}", headers={"cookie": f"tg_login={binder}"}
        )
        assert response.status_code == 302, response.text
        cookie = next(
            h for h in response.headers.get_list("set-cookie") if h.startswith(f"{SESSION_COOKIE}=")
        )
        assert "secure" in {part.strip().lower() for part in cookie.split(";")}


async def test_inbox_without_a_session_goes_to_sign_in(browser: httpx.AsyncClient) -> None:
    response = await browser.get("/inbox")
    assert response.status_code == 302
    assert response.headers["location"] == "/auth/login?next=/inbox"
    await sign_in(browser)
    assert (await browser.get("/inbox")).status_code == 200


async def test_without_an_issuer_there_is_no_sign_in(served: Served) -> None:
    async with served.client() as client:
        assert (await client.get("/auth/login")).status_code == 404
        assert (await client.get("/inbox")).status_code == 200  # token sign-in, as before
        assert (await client.get("/.well-known/oauth-protected-resource")).status_code == 404


# Answering with the session ---------------------------------------------------------------------------


async def _approval(gateway: Served, approvers: list[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A pending approval of agent ``ops`` that ``approvers`` may answer."""
    platform = [name for name in approvers if not name.startswith("person:")]
    async with gateway.client(AGENT_AUTH) as agent, gateway.client(OPERATOR_AUTH) as operator:
        put = await operator.put("/v1/agents/ops", json={"human_input": {"approvers": platform}})
        assert put.status_code == 200, put.text
        # Approver lists name people (person:<id>) once the directory resolves them (§10); until then the
        # session's own identity is added where the store keeps the approvers.
        for name in set(approvers) - set(platform):
            await gateway.runtime.store.redis.sadd(keys.approvers("ops"), name)
        run = await start_run(agent)
        prompt = await raise_prompt(agent, run["run_id"])
    return run, prompt


def _same_origin(gateway: Served) -> dict[str, str]:
    return {"origin": gateway.base_url}


async def test_a_session_answers_as_its_person(browser: httpx.AsyncClient, gateway: Served) -> None:
    _, prompt = await _approval(gateway, ["person:alice"])
    await sign_in(browser)
    response = await browser.post(
        f"/v1/agents/ops/inputs/{prompt['prompt_id']}",
        json={"action": "accept", "from": "slack:U0123ABC"},  # not taken: the session is who answers
        headers=_same_origin(gateway),
    )
    assert response.status_code == 200, response.text
    assert response.json()["answered_by"] == "person:alice"


async def test_a_session_not_allowed_to_answer_is_403(browser: httpx.AsyncClient, gateway: Served) -> None:
    _, prompt = await _approval(gateway, ["person:bob"])
    await sign_in(browser)
    response = await browser.post(
        f"/v1/agents/ops/inputs/{prompt['prompt_id']}",
        json={"action": "accept"},
        headers=_same_origin(gateway),
    )
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "FORBIDDEN"


async def test_a_session_responds_as_its_person(browser: httpx.AsyncClient, gateway: Served) -> None:
    run, prompt = await _approval(gateway, ["person:alice"])
    await sign_in(browser)
    path = (
        f"/v1/agent-runs/{run['run_id']}/threads/{run['thread_id']}/user-inputs/{prompt['prompt_id']}/respond"
    )
    response = await browser.post(
        path,
        json={"answers": [{"questionId": "q1", "selected": ["Approve"]}]},
        headers={**_same_origin(gateway), "X-Threadgate-From": "slack:U0123ABC"},
    )
    assert response.status_code == 200, response.text
    async with gateway.client(OPERATOR_AUTH) as operator:
        settled = (await operator.get(f"/v1/prompts/{prompt['prompt_id']}")).json()
    assert settled["answered_by"] == "person:alice"


@pytest.mark.parametrize(
    ("headers", "body"),
    [
        ({}, {"action": "accept"}),  # no Origin
        ({"origin": "https://evil.example"}, {"action": "accept"}),  # a foreign Origin
        ({"origin": "null"}, {"action": "accept"}),
        ("form", None),  # a form's content type, from this origin
        ("text", None),  # text/plain, from this origin
    ],
    ids=["no-origin", "foreign-origin", "null-origin", "form", "text-plain"],
)
async def test_cookie_writes_need_json_from_this_origin(
    browser: httpx.AsyncClient, gateway: Served, headers: Any, body: Any
) -> None:
    _, prompt = await _approval(gateway, ["person:alice"])
    await sign_in(browser)
    path = f"/v1/agents/ops/inputs/{prompt['prompt_id']}"
    if headers == "form":
        response = await browser.post(path, data={"action": "accept"}, headers=_same_origin(gateway))
    elif headers == "text":
        response = await browser.post(
            path,
            content=b'{"action": "accept"}',
            headers={**_same_origin(gateway), "content-type": "text/plain"},
        )
    else:
        response = await browser.post(path, json=body, headers=headers)
    assert response.status_code == 403, response.text
    async with gateway.client(OPERATOR_AUTH) as operator:
        still = (await operator.get(f"/v1/prompts/{prompt['prompt_id']}")).json()
    assert still["prompt_state"] == "pending"


async def test_a_session_cannot_act_as_an_agent_or_manage_approvers(
    browser: httpx.AsyncClient, gateway: Served
) -> None:
    await sign_in(browser)
    put = await browser.put(
        "/v1/agents/ops", json={"human_input": {"approvers": ["web:mallory"]}}, headers=_same_origin(gateway)
    )
    assert put.status_code == 403
    run = await browser.post(
        "/v1/runs", json={"thread_id": "web:x", "agent": "ops"}, headers=_same_origin(gateway)
    )
    assert run.status_code == 403


async def test_tokens_keep_working_beside_sign_in(gateway: Served) -> None:
    _, prompt = await _approval(gateway, ["slack:U0BOB"])
    async with gateway.client(OPERATOR_AUTH) as operator:
        response = await operator.post(
            f"/v1/agents/ops/inputs/{prompt['prompt_id']}", json={"action": "accept", "from": "slack:U0BOB"}
        )
    assert response.status_code == 200, response.text
    assert response.json()["answered_by"] == "slack:U0BOB"


async def _sleep(seconds: float) -> None:
    import asyncio

    await asyncio.sleep(seconds)


async def test_a_session_revokes_grants_only_as_a_person_allowed_to(
    browser: httpx.AsyncClient, gateway: Served
) -> None:
    run, _ = await _approval(gateway, ["slack:U0BOB"])
    await sign_in(browser)
    response = await browser.delete(
        f"/v1/runs/{run['run_id']}/grants/grt_01JAAAAAAAAAAAAAAAAAAAAAAA",
        headers={**_same_origin(gateway), "content-type": "application/json"},
    )
    assert response.status_code == 403, response.text


async def test_logout_from_another_site_is_refused(browser: httpx.AsyncClient) -> None:
    await sign_in(browser)
    response = await browser.post("/auth/logout", headers={"origin": "https://evil.example"})
    assert response.status_code == 403
    assert (await browser.get("/v1/me")).status_code == 200


async def test_sign_ins_started_are_rate_limited_per_address(browser: httpx.AsyncClient) -> None:
    statuses = [(await browser.get("/auth/login")).status_code for _ in range(31)]
    assert statuses[:30] == [302] * 30
    assert statuses[30] == 429


async def test_a_callback_naming_another_issuer_is_refused(browser: httpx.AsyncClient) -> None:
    callback = await at_provider(await begin(browser))
    response = await browser.get(callback + "&iss=https%3A%2F%2Fevil.example")
    assert response.status_code == 400


async def test_an_issuer_set_with_a_trailing_slash_still_signs_in(
    real_redis: str, idp: FakeOidcProvider
) -> None:
    slashed = signin_gateway(real_redis, idp, threadgate_oidc_issuer=idp.issuer + "/")
    async with slashed as served, httpx.AsyncClient(base_url=served.base_url) as client:
        assert (await sign_in(client)).status_code == 302
        assert (await client.get("/v1/me")).status_code == 200


async def test_an_unreachable_provider_is_502_not_a_crash(
    browser: httpx.AsyncClient, idp: FakeOidcProvider
) -> None:
    idp.stop()
    response = await browser.get("/auth/login")
    assert response.status_code == 502
    assert response.json()["error"]["code"] == "IDP_UNAVAILABLE"


async def test_unknown_keys_fetch_the_jwks_a_bounded_number_of_times(
    browser: httpx.AsyncClient, idp: FakeOidcProvider
) -> None:
    await sign_in(browser)
    before = idp.count("/jwks")
    for _ in range(12):
        idp.spoil_next(unknown_key=True)
        assert (await sign_in(browser)).status_code == 401
    assert idp.count("/jwks") == before + 10


# Groups of the identity provider's groups claim -------------------------------------------------------

SAM = {
    "sub": "sam",
    "email": "sam@example.com",
    "email_verified": True,
    "name": "Sam",
}  # not in the directory


async def _prompts_for(
    gateway: Served, approver: str, count: int
) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """``count`` pending approvals of agent ``ops``, each in a run of its own thread; ``approver`` answers."""
    pending = []
    async with gateway.client(AGENT_AUTH) as agent, gateway.client(OPERATOR_AUTH) as operator:
        put = await operator.put("/v1/agents/ops", json={"human_input": {"approvers": [approver]}})
        assert put.status_code == 200, put.text
        for index in range(count):
            run = await start_run(agent, thread_id=f"web:claim-{index}", started_by=None)
            pending.append((run, await raise_prompt(agent, run["run_id"])))
    return pending


def _respond_path(run: dict[str, Any], prompt: dict[str, Any]) -> str:
    return (
        f"/v1/agent-runs/{run['run_id']}/threads/{run['thread_id']}/user-inputs/{prompt['prompt_id']}/respond"
    )


APPROVE = {"answers": [{"questionId": "q1", "selected": ["Approve"]}]}
NO_GRANT = "grt_01JAAAAAAAAAAAAAAAAAAAAAAA"


async def _answer_every_way(
    browser: httpx.AsyncClient, gateway: Served, extra: dict[str, str], named: str | None = None
) -> list[httpx.Response]:
    """Answer one prompt through the inputs route, another through respond, and revoke a grant of a
    third run: the three routes a session answers through (``extra`` headers, ``named`` as ``from``)."""
    (_, prompt1), (run2, prompt2), (run3, _) = await _prompts_for(gateway, "group:sre", 3)
    headers = {**_same_origin(gateway), **extra}
    body: dict[str, Any] = {"action": "accept", **({"from": named} if named else {})}
    accepted = await browser.post(f"/v1/agents/ops/inputs/{prompt1['prompt_id']}", json=body, headers=headers)
    responded = await browser.post(
        _respond_path(run2, prompt2),
        json=APPROVE,
        headers={**headers, **({"X-Threadgate-From": named} if named else {})},
    )
    revoked = await browser.delete(
        f"/v1/runs/{run3['run_id']}/grants/{NO_GRANT}",
        params={"from": named} if named else {},
        headers={**headers, "content-type": "application/json"},
    )
    return [accepted, responded, revoked]


async def test_a_session_answers_for_a_group_its_token_claims(
    browser: httpx.AsyncClient, gateway: Served, idp: FakeOidcProvider
) -> None:
    idp.user = {**SAM, "groups": ["sre"]}
    await sign_in(browser)
    accepted, responded, revoked = await _answer_every_way(browser, gateway, {})
    assert accepted.status_code == 200, accepted.text
    assert accepted.json()["answered_by"] == "person:sam"
    assert responded.status_code == 200, responded.text
    assert revoked.status_code == 404, revoked.text  # allowed to revoke: there is just no such grant
    assert revoked.json()["error"]["code"] == "GRANT_NOT_FOUND"


async def test_an_entra_groups_overage_signs_in_without_groups_and_says_why(
    browser: httpx.AsyncClient, idp: FakeOidcProvider, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="threadgate")
    idp.user = {
        **SAM,
        "_claim_names": {"groups": "src1"},
        "_claim_sources": {
            "src1": {"endpoint": "https://graph.microsoft.com/v1.0/users/sam/getMemberObjects"}
        },
    }
    await sign_in(browser)
    me = (await browser.get("/v1/me")).json()
    assert me["person"] == "sam" and me["groups"] == []
    [warning] = [record for record in caplog.records if record.getMessage() == "signin.groups_overage"]
    assert warning.levelno == logging.WARNING
    assert warning.fields == {"person": "sam", "claim": "groups"}  # type: ignore[attr-defined]


async def test_a_token_with_its_groups_claim_logs_no_overage(
    browser: httpx.AsyncClient, idp: FakeOidcProvider, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="threadgate")
    idp.user = {**SAM, "groups": ["sre"], "_claim_names": {"roles": "src1"}}
    await sign_in(browser)
    assert (await browser.get("/v1/me")).json()["groups"] == ["sre"]
    assert "signin.groups_overage" not in caplog.text


async def test_a_session_whose_token_claims_other_groups_is_403(
    browser: httpx.AsyncClient, gateway: Served, idp: FakeOidcProvider
) -> None:
    idp.user = {**SAM, "groups": ["dev"]}
    await sign_in(browser)
    answers = await _answer_every_way(browser, gateway, {})
    assert [response.status_code for response in answers] == [403, 403, 403]
    assert {response.json()["error"]["code"] for response in answers} == {"FORBIDDEN"}


async def test_an_operator_token_naming_a_person_brings_no_claim_groups(
    browser: httpx.AsyncClient, gateway: Served, idp: FakeOidcProvider
) -> None:
    idp.user = {**SAM, "groups": ["sre"]}
    await sign_in(browser)  # sam's session has the claim, and its cookie goes along: the token wins
    assert "sre" in (await browser.get("/v1/me")).json()["groups"]
    accepted, responded, revoked = await _answer_every_way(
        browser, gateway, OPERATOR_AUTH, named="person:sam"
    )
    # every route takes only platform identities in from (X-Threadgate-From too): no claim groups pass
    assert (responded.status_code, responded.json()["error"]["code"]) == (422, "INVALID_PARAMS")
    assert accepted.status_code == 400 and revoked.status_code == 422
