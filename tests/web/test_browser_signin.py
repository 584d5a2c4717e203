"""Sign-in in a real browser: the inbox sends Chromium to the identity provider and back, the signed-in
person answers an approval with no "answer as" field, and signing out ends the session; the web chat's
"Sign in" link does the same for a chat room, where the person answers a card as themselves."""

from __future__ import annotations

from typing import Any

from playwright.async_api import expect

from gateway.store import keys
from tests.fakes.oidc import FakeOidcProvider
from tests.web.conftest import AGENT_AUTH, raise_prompt, start_run, web_gateway
from tests.web.pages import new_page

CALL = {"name": "db__drop", "arguments": {"database": "staging"}}


async def test_sign_in_answer_in_the_inbox_and_sign_out(browser: Any, idp: FakeOidcProvider) -> None:
    settings = idp.gateway_settings()
    async with web_gateway(**settings) as gateway, gateway.client(AGENT_AUTH) as agent:
        # Carol is not in the directory: she signs in as person:carol, whom the approvers name.
        await gateway.runtime.store.redis.sadd(keys.approvers("ops"), "person:carol")
        run = await start_run(agent, "signin", started_by="web:someone-else")
        prompt = await raise_prompt(agent, run["run_id"], tool_call=CALL)

        inbox = await new_page(browser)
        await inbox.goto(
            f"{gateway.base_url}/inbox"
        )  # → /auth/login → the provider → /auth/callback → /inbox
        assert inbox.url == f"{gateway.base_url}/inbox"
        await expect(inbox.locator("#who")).to_have_text("signed in as Carol C.")
        await expect(inbox.locator("#status")).to_have_text("live")
        await expect(inbox.locator("#sign-in")).to_be_hidden()  # no token, no "answer as"
        cookies = {cookie["name"]: cookie for cookie in await inbox.context.cookies()}
        assert cookies["tg_session"]["httpOnly"] and cookies["tg_session"]["sameSite"] == "Lax"

        card = inbox.locator(".card")
        await card.get_by_role("button", name="Approve", exact=True).click()
        await expect(card.locator(".outcome")).to_contain_text("Approved by person:carol")
        seen = (await agent.get(f"/v1/prompts/{prompt['prompt_id']}")).json()
        assert seen["answered_by"] == "person:carol"

        await inbox.get_by_role("button", name="Sign out").click()
        await expect(inbox.locator("#signed-out")).to_be_visible()
        me = await inbox.evaluate("fetch('/v1/me').then((response) => response.status)")
        assert me == 401
        assert inbox.errors == []  # type: ignore[attr-defined]
        await inbox.context.close()


async def test_sign_in_from_the_web_chat_answer_a_card_and_sign_out(
    browser: Any, idp: FakeOidcProvider
) -> None:
    settings = idp.gateway_settings()
    async with web_gateway(**settings) as gateway, gateway.client(AGENT_AUTH) as agent:
        await gateway.runtime.store.redis.sadd(keys.approvers("ops"), "person:carol")
        run = await start_run(agent, "deploys", started_by="web:someone-else")

        chat = await new_page(browser)
        await chat.goto(f"{gateway.base_url}/chat/deploys")
        await expect(chat.locator("#sign-in")).to_be_visible()  # name sign-in stays, beside the provider's
        await chat.get_by_role("link", name="Sign in").click()  # → the provider → back to this room
        await expect(chat.locator("#who")).to_have_text("Signed in as Carol C.")
        assert chat.url == f"{gateway.base_url}/chat/deploys"
        await expect(chat.locator("#status")).to_have_text("live")
        await expect(chat.locator("#sign-in")).to_be_hidden()  # no name, no token

        prompt = await raise_prompt(agent, run["run_id"], tool_call=CALL)
        card = chat.locator(".prompt")
        await card.get_by_role("button", name="Approve", exact=True).click()
        await expect(card.locator(".outcome")).to_contain_text("Approved by person:carol")
        seen = (await agent.get(f"/v1/prompts/{prompt['prompt_id']}")).json()
        assert seen["answered_by"] == "person:carol"

        await chat.get_by_role("button", name="Sign out").click()
        await expect(chat.locator("#sign-in")).to_be_visible()
        await expect(chat.get_by_role("link", name="Sign in")).to_be_visible()
        me = await chat.evaluate("fetch('/v1/me').then((response) => response.status)")
        assert me == 401
        await chat.reload()  # the session is gone: the page asks again
        await expect(chat.locator("#sign-in")).to_be_visible()
        assert chat.errors == []  # type: ignore[attr-defined]
        await chat.context.close()
