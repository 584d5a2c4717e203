"""The web chat with sign-in (contract §10): a session cookie makes the visitor that person on every chat
route (session, events, messages), whatever name they send; the session's groups claim counts where the
approvers name ``group:<name>``; cookie writes need JSON from a same-origin page; a session that ended
(logout, the person removed) stops at once; and without a session the name and token sign-in is as it was.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from gateway.base.errors import GatewayError
from gateway.base.models import InboundMessage
from gateway.delivery.channel import CountedInbound
from tests.fakes.oidc import FakeOidcProvider
from tests.web.conftest import (
    AGENT_AUTH,
    CAROL,
    OPERATOR_AUTH,
    WebGateway,
    raise_prompt,
    start_run,
    web_gateway,
)

CALL = {"name": "db__drop", "arguments": {"database": "staging"}}


@contextlib.asynccontextmanager
async def chat_gateway(idp: FakeOidcProvider, tokens: str | None = None) -> AsyncIterator[WebGateway]:
    async with web_gateway(tokens=tokens, **idp.gateway_settings()) as web:
        yield web


@contextlib.asynccontextmanager
async def signed_in(web: WebGateway, room: str = "ops") -> AsyncIterator[httpx.AsyncClient]:
    """A browser tab that signed in at the provider from the chat page's "Sign in" link: it keeps the
    session cookie and sends the page's own Origin on writes."""
    async with web.client({"Origin": web.base_url}) as browser:
        login = await browser.get("/auth/login", params={"next": f"/chat/{room}"})
        assert login.status_code == 302, login.text
        async with httpx.AsyncClient(timeout=10) as provider:
            callback = (await provider.get(login.headers["location"])).headers["location"]
        back = await browser.get(callback)
        assert (back.status_code, back.headers["location"]) == (302, f"/chat/{room}")
        yield browser


async def approvers(web: WebGateway, *names: str, **human: Any) -> None:
    async with web.client(OPERATOR_AUTH) as operator:
        body = {"human_input": {"approvers": list(names), **human}}
        response = await operator.put("/v1/agents/ops", json=body)
        assert response.status_code == 200, response.text


async def pending_approval(
    web: WebGateway, room: str, started_by: str = "web:someone-else"
) -> dict[str, Any]:
    async with web.client(AGENT_AUTH) as agent:
        run = await start_run(agent, room, started_by=started_by)
        return await raise_prompt(agent, run["run_id"], tool_call=CALL)


async def prompt_of(web: WebGateway, prompt_id: str) -> dict[str, Any]:
    async with web.client(AGENT_AUTH) as agent:
        found: dict[str, Any] = (await agent.get(f"/v1/prompts/{prompt_id}")).json()
        return found


async def approve(
    browser: httpx.AsyncClient, room: str, prompt: dict[str, Any], **extra: Any
) -> httpx.Response:
    body = {"text": "approve", "prompt_id": prompt["prompt_id"], **extra}
    return await browser.post(f"/chat/{room}/messages", json=body)


async def first_event(browser: httpx.AsyncClient, room: str, **params: str) -> int:
    """The status of the room's event stream for this browser (200 once its first line came)."""
    async with asyncio.timeout(5), browser.stream("GET", f"/chat/{room}/events", params=params) as response:
        if response.status_code == 200:
            async for line in response.aiter_lines():
                if line.startswith("data: "):
                    return 200
        await response.aread()
        return response.status_code


def refusal(response: httpx.Response) -> tuple[int, str]:
    return response.status_code, response.json()["error"]["code"]


# Who the visitor is -------------------------------------------------------------------------------------


async def test_the_page_offers_sign_in_only_where_it_is_configured(idp: FakeOidcProvider) -> None:
    async with chat_gateway(idp) as web, web.client() as browser:
        page = (await browser.get("/chat/ops")).text
        assert 'data-idp="yes"' in page and 'href="/auth/login?next=/chat/ops"' in page
    async with web_gateway() as web, web.client() as browser:
        assert 'data-idp="no"' in (await browser.get("/chat/ops")).text


async def test_a_session_signs_in_as_its_person_whatever_name_is_sent(idp: FakeOidcProvider) -> None:
    async with chat_gateway(idp) as web, signed_in(web) as browser:
        response = await browser.post("/chat/ops/session", json={"name": "alice"})
        assert response.status_code == 200, response.text
        assert response.json() == {
            "name": "Carol C.",
            "identity": "person:carol",
            "person": "carol",
            "signed_in": True,
        }


async def test_a_session_needs_no_web_token(idp: FakeOidcProvider) -> None:
    async with chat_gateway(idp, tokens="alice:tok-alice") as web:
        async with web.client({"Origin": web.base_url}) as stranger:
            assert refusal(await stranger.post("/chat/ops/session", json={"name": "x"})) == (
                401,
                "UNAUTHORIZED",
            )
        async with signed_in(web) as browser:
            response = await browser.post("/chat/ops/session", json={})
            assert response.json()["identity"] == "person:carol"


async def test_without_a_session_names_and_tokens_sign_in_as_before(idp: FakeOidcProvider) -> None:
    async with chat_gateway(idp) as web, web.client() as browser:
        response = await browser.post("/chat/ops/session", json={"name": "dave"})
        assert response.json() == {"name": "dave", "identity": "web:dave"}


async def test_the_lobby_sends_a_signed_in_person_to_a_room_of_their_own(idp: FakeOidcProvider) -> None:
    async with chat_gateway(idp) as web:
        web.channel.lobby = "lobby"
        async with signed_in(web, "lobby") as browser:
            response = await browser.post("/chat/lobby/session", json={"name": "alice"})
            assert response.json()["room"] == "lobby-carol"


# Answering ----------------------------------------------------------------------------------------------


async def test_a_signed_in_person_answers_as_their_person(idp: FakeOidcProvider) -> None:
    async with chat_gateway(idp) as web, signed_in(web) as browser:
        await approvers(web, "person:carol")
        prompt = await pending_approval(web, "ops")
        response = await approve(browser, "ops", prompt, name="mallory")
        assert (response.status_code, response.json()["outcome"]) == (202, "answered")
        assert (await prompt_of(web, prompt["prompt_id"]))["answered_by"] == "person:carol"


async def test_a_name_sent_with_a_session_does_not_pass_as_that_name(idp: FakeOidcProvider) -> None:
    """web:alice started the run, so she may answer; Carol's session sending ``name: alice`` stays Carol."""
    async with chat_gateway(idp) as web, signed_in(web) as browser:
        prompt = await pending_approval(web, "ops", started_by="web:alice")
        response = await approve(browser, "ops", prompt, name="alice")
        assert response.json()["outcome"] == "not_allowed"
        assert (await prompt_of(web, prompt["prompt_id"]))["prompt_state"] == "pending"


async def test_the_groups_claim_admits_an_answer_where_approvers_name_the_group(
    idp: FakeOidcProvider,
) -> None:
    async with chat_gateway(idp) as web:
        await approvers(web, "group:sre")
        prompt = await pending_approval(web, "ops")
        async with signed_in(web) as browser:  # Carol is in no directory: only her ID token says sre
            response = await approve(browser, "ops", prompt)
        assert response.json()["outcome"] == "answered"
        assert (await prompt_of(web, prompt["prompt_id"]))["answered_by"] == "person:carol"


async def test_groups_come_from_the_session_not_from_the_request(idp: FakeOidcProvider) -> None:
    idp.user = {**CAROL, "groups": ["dev"]}
    async with chat_gateway(idp) as web, signed_in(web) as browser:
        await approvers(web, "group:sre")
        prompt = await pending_approval(web, "ops")
        response = await approve(browser, "ops", prompt, groups=["sre"])  # no such field: not read
        assert response.json()["outcome"] == "not_allowed"
        assert (await prompt_of(web, prompt["prompt_id"]))["prompt_state"] == "pending"


async def test_an_agent_requiring_sign_in_takes_a_session_but_not_a_room_token_name(
    idp: FakeOidcProvider,
) -> None:
    async with chat_gateway(idp, tokens="room-pass") as web:
        await approvers(web, "web:dave", "person:carol", require_sign_in=True)
        prompt = await pending_approval(web, "ops")
        async with web.client({"Authorization": "Bearer room-pass"}) as dave:
            named = await approve(dave, "ops", prompt, name="dave")
        assert named.json()["outcome"] == "not_allowed", "a room token's name is nobody's sign-in"
        assert (await prompt_of(web, prompt["prompt_id"]))["prompt_state"] == "pending"
        async with signed_in(web) as browser:
            assert (await approve(browser, "ops", prompt)).json()["outcome"] == "answered"


# Reading ------------------------------------------------------------------------------------------------


async def test_a_signed_in_person_reads_a_room_as_their_person_and_groups(idp: FakeOidcProvider) -> None:
    async with chat_gateway(idp) as web:
        await approvers(web, "group:sre")
        await pending_approval(web, "ops", started_by="web:alice")
        async with web.client() as stranger:
            assert await first_event(stranger, "ops", name="carol") == 404
        async with signed_in(web) as browser:
            assert await first_event(browser, "ops", name="someone") == 200


async def test_a_session_without_the_group_does_not_read_the_room(idp: FakeOidcProvider) -> None:
    idp.user = {**CAROL, "groups": ["dev"]}
    async with chat_gateway(idp) as web, signed_in(web) as browser:
        await approvers(web, "group:sre")
        await pending_approval(web, "ops", started_by="web:alice")
        assert await first_event(browser, "ops", name="alice") == 404  # the name is not taken


# Cookie writes ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("headers", "why"),
    [
        ({"Origin": "https://evil.example"}, "a foreign Origin"),
        ({"Origin": None}, "no Origin at all"),
        ({"Content-Type": "text/plain"}, "a body that is not JSON"),
    ],
)
async def test_cookie_writes_need_json_from_this_origin(
    idp: FakeOidcProvider, headers: dict[str, str | None], why: str
) -> None:
    async with chat_gateway(idp) as web, signed_in(web) as browser:
        await approvers(web, "person:carol")
        prompt = await pending_approval(web, "ops")
        sent = {"Origin": web.base_url, "Content-Type": "application/json", **headers}
        for name, value in sent.items():
            if value is None:
                del browser.headers[name]
        kept = {name: value for name, value in sent.items() if value is not None}
        body = json.dumps({"text": "approve", "prompt_id": prompt["prompt_id"]})
        for path in ("/chat/ops/session", "/chat/ops/messages"):
            response = await browser.post(path, content=body, headers=kept)
            assert refusal(response) == (403, "CROSS_SITE_REQUEST"), why
        assert (await prompt_of(web, prompt["prompt_id"]))["prompt_state"] == "pending"


# Sessions that ended ------------------------------------------------------------------------------------


async def test_a_person_removed_from_the_directory_loses_the_chat_at_once(idp: FakeOidcProvider) -> None:
    async with chat_gateway(idp) as web, web.client(OPERATOR_AUTH) as operator:
        added = await operator.put("/v1/people/cara", json={"name": "Cara", "email": "carol@example.com"})
        assert added.status_code in (200, 201), added.text
        await approvers(web, "person:cara")
        prompt = await pending_approval(web, "ops")
        async with signed_in(web) as browser:
            assert (await browser.post("/chat/ops/session", json={})).json()["identity"] == "person:cara"
            assert (await operator.delete("/v1/people/cara")).status_code in (200, 204)
            cookie = browser.cookies["tg_session"]
            assert refusal(await browser.post("/chat/ops/session", json={})) == (401, "UNAUTHORIZED")
            assert "tg_session" not in browser.cookies, "the dead cookie is cleared"
            again = {"Cookie": f"tg_session={cookie}"}  # a copy kept from before
            answered = await browser.post(
                "/chat/ops/messages",
                json={"text": "approve", "prompt_id": prompt["prompt_id"]},
                headers=again,
            )
            assert refusal(answered) == (401, "UNAUTHORIZED")
            assert answered.headers["set-cookie"].startswith('tg_session="";')
            async with web.client(again) as reader:
                assert await first_event(reader, "ops") == 401
            signed = await browser.post("/chat/ops/session", json={"name": "cara"})  # the cookie is gone
            assert signed.json()["identity"] == "web:cara", "open chat: a name signs in again"
        assert (await prompt_of(web, prompt["prompt_id"]))["prompt_state"] == "pending"


async def test_after_sign_out_the_session_no_longer_chats(idp: FakeOidcProvider) -> None:
    async with chat_gateway(idp) as web, signed_in(web) as browser:
        cookie = browser.cookies["tg_session"]
        assert (await browser.post("/auth/logout", json={})).status_code == 200
        browser.cookies.set("tg_session", cookie)  # a copy kept from before is dead too
        assert refusal(await browser.post("/chat/ops/session", json={})) == (401, "UNAUTHORIZED")


async def test_a_dead_session_beside_a_web_token_signs_in_with_the_token(idp: FakeOidcProvider) -> None:
    async with chat_gateway(idp, tokens="alice:tok-alice") as web:
        headers = {"Origin": web.base_url, "Authorization": "Bearer tok-alice", "Cookie": "tg_session=gone"}
        async with web.client(headers) as browser:
            response = await browser.post("/chat/ops/session", json={})
            assert response.json()["identity"] == "web:alice"


# The core's side ----------------------------------------------------------------------------------------


class _Sink:
    def __init__(self) -> None:
        self.received: list[InboundMessage] = []

    async def receive(self, message: InboundMessage) -> Any:
        self.received.append(message)
        raise AssertionError("not reached")

    async def step(self, request: Any) -> Any:
        raise AssertionError("not reached")


async def test_a_channel_cannot_hand_over_a_signed_in_person() -> None:
    """Only the sign-in service names a ``person:<id>`` sender: a channel's sink refuses one."""
    sink = _Sink()
    with pytest.raises(GatewayError) as refused:
        await CountedInbound(sink).receive(InboundMessage(thread_id="web:ops", sender="person:carol"))
    assert refused.value.code == "FORBIDDEN" and sink.received == []
