"""Web Push over HTTP (contract §11): a signed-in person's ``/v1/me/push``, and a raise reaching a
subscribed browser through the webhook queue's ``push:`` target in the serving process."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import httpx
import pytest

from tests.api.conftest import AGENT_AUTH, OPERATOR_AUTH, served_gateway, start_run
from tests.api.test_signin import ALICE, FakeDirectory, sign_in, signin_gateway
from tests.fakes.oidc import FakeOidcProvider
from tests.fakes.push import FakePushService
from tests.integration.test_push import PRIVATE, PUBLIC, SECRET_ARGS, SUBJECT, directory
from tests.support.api_calls import raise_prompt

VAPID = {
    "threadgate_vapid_private_key": PRIVATE,
    "threadgate_vapid_subject": SUBJECT,
    "threadgate_push_hosts": "127.0.0.1",  # the push-service fake, on loopback
}


@pytest.fixture
def push_service() -> Iterator[FakePushService]:
    service = FakePushService().start()
    yield service
    service.stop()


@pytest.fixture
def idp() -> Iterator[FakeOidcProvider]:
    provider = FakeOidcProvider().start()
    yield provider
    provider.stop()


async def test_a_raise_reaches_a_subscribed_browser_through_the_webhook_queue(
    real_redis: str, push_service: FakePushService
) -> None:
    """The whole path: VAPID keys set, a prompt raised over HTTP, the event taken off the stream by the
    queue's ``push:`` target in the serving process, and the browser told once."""
    async with served_gateway(real_redis, **VAPID) as served:
        store = served.runtime.store
        await directory(store)
        browser = push_service.browser()
        await store.push.add("dana", browser.subscription())
        async with httpx.AsyncClient(base_url=served.base_url, headers=AGENT_AUTH, timeout=10) as agent:
            run = await start_run(agent)
            prompt = await raise_prompt(
                agent, run["run_id"], tool_call={"name": "Bash", "arguments": SECRET_ARGS}
            )
        for _ in range(200):
            if push_service.delivered:
                break
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.3)  # anything more would show up by now
        assert len(push_service.delivered) == 1, push_service.refused
        shown = browser.read(push_service.delivered[0].body)
        assert shown["url"] == f"/inbox#prompt={prompt['prompt_id']}"
        async with httpx.AsyncClient(base_url=served.base_url, headers=OPERATOR_AUTH, timeout=10) as operator:
            me = await operator.get("/v1/me/push")
        assert me.status_code == 401, "a subscription is a signed-in person's"


async def test_a_signed_in_person_subscribes_a_browser_and_stops(
    real_redis: str, idp: FakeOidcProvider, push_service: FakePushService
) -> None:
    async with (
        signin_gateway(real_redis, idp, FakeDirectory(ALICE), **VAPID) as served,
        httpx.AsyncClient(base_url=served.base_url, timeout=10) as browser,
    ):
        assert (await browser.get("/v1/me/push")).status_code == 401
        await sign_in(browser)
        state = await browser.get("/v1/me/push")
        assert state.json() == {"enabled": True, "public_key": PUBLIC, "subscriptions": 0}
        tab = push_service.browser()
        same_origin = {"Origin": served.base_url}
        made = await browser.post("/v1/me/push", json=tab.subscription(), headers=same_origin)
        assert made.status_code == 201, made.text
        again = await browser.post("/v1/me/push", json=tab.subscription(), headers=same_origin)
        assert again.status_code == 200 and again.json()["subscriptions"] == 1
        assert await served.runtime.store.push.of("alice") == [tab.subscription()]
        foreign = await browser.post(
            "/v1/me/push", json=tab.subscription(), headers={"Origin": "https://evil.example"}
        )
        assert foreign.status_code == 403
        for elsewhere in (
            "http://push.example/x",
            "https://10.0.0.7/internal",
            "https://metadata.google.internal/",
        ):
            bad = {**tab.subscription(), "endpoint": elsewhere}
            refused = await browser.post("/v1/me/push", json=bad, headers=same_origin)
            assert (refused.status_code, refused.json()["error"]["code"]) == (400, "VALIDATION_FAILED"), (
                elsewhere
            )
        gone = await browser.request(
            "DELETE", "/v1/me/push", json={"endpoint": tab.endpoint}, headers=same_origin
        )
        assert gone.status_code == 200 and gone.json()["subscriptions"] == 0


async def test_subscribing_while_web_push_is_off_is_409(real_redis: str, idp: FakeOidcProvider) -> None:
    async with (
        signin_gateway(real_redis, idp, FakeDirectory(ALICE)) as served,
        httpx.AsyncClient(base_url=served.base_url, timeout=10) as browser,
    ):
        await sign_in(browser)
        assert (await browser.get("/v1/me/push")).json() == {
            "enabled": False,
            "public_key": None,
            "subscriptions": 0,
        }
        sub = FakePushService(origin="https://push.example").browser().subscription()
        refused = await browser.post("/v1/me/push", json=sub, headers={"Origin": served.base_url})
        assert (refused.status_code, refused.json()["error"]["code"]) == (409, "PUSH_NOT_CONFIGURED")
