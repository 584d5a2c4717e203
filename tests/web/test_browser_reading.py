"""Reading the chat: a long room opens at its newest item and stays there as items arrive (a button says
when more came below), settled cards keep the answers given, a Decline is no message, cards say when they
were asked, a reminder carries its word, and one sign-in serves every room and inbox tab of a browser."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from axe_playwright_python.async_playwright import Axe
from playwright.async_api import Page, expect

from tests.web.cards import KINDS, approvers, chat_cards, fill_form
from tests.web.conftest import AGENT_AUTH, OPERATOR_TOKEN, raise_prompt, start_run, web_gateway
from tests.web.pages import new_page, sign_in

SIZES = [{"width": 1100, "height": 1000}, {"width": 390, "height": 760}, {"width": 800, "height": 500}]


async def at_bottom(page: Page) -> bool:
    result: bool = await page.evaluate(
        "() => window.scrollY + window.innerHeight >= document.documentElement.scrollHeight - 2"
    )
    return result


async def wait_at_bottom(page: Page) -> None:
    await page.wait_for_function(
        "() => window.scrollY + window.innerHeight >= document.documentElement.scrollHeight - 2"
    )


async def say_as_agent(agent: Any, room: str, text: str) -> None:
    response = await agent.post(
        f"/v1/threads/web:{room}/items", json={"content": [{"type": "text", "text": text}]}
    )
    assert response.status_code in (200, 201, 202), response.text


@pytest.mark.parametrize("size", SIZES, ids=lambda size: f"{size['width']}x{size['height']}")
async def test_a_long_chat_opens_at_its_newest_item_and_keeps_new_items_in_view(
    browser: Any, size: dict[str, int]
) -> None:
    async with web_gateway() as gateway, gateway.client(AGENT_AUTH) as agent:
        run = await start_run(agent, "long")
        for number in range(40):
            await say_as_agent(agent, "long", f"Step {number}: " + "a line of progress " * (number % 5 + 1))
        await raise_prompt(agent, run["run_id"], **KINDS["single"])
        page = await new_page(browser, size)
        await sign_in(page, f"{gateway.base_url}/chat/long", "alice")
        await expect(page.locator(".prompt")).to_have_count(1)
        await page.wait_for_timeout(400)  # the backlog is in
        assert await page.evaluate("() => document.documentElement.scrollHeight") > 2 * size["height"]
        await expect(page.locator(".prompt")).to_be_in_viewport()
        assert await at_bottom(page)

        await say_as_agent(agent, "long", "Newest while at the bottom")
        newest = page.locator(".item.agent").last
        await expect(newest).to_have_text("agentNewest while at the bottom")
        await wait_at_bottom(page)
        await expect(newest).to_be_in_viewport()
        await expect(page.get_by_role("button", name="New items below")).to_be_hidden()

        await page.evaluate("() => window.scrollTo(0, 0)")
        await page.wait_for_timeout(100)
        await say_as_agent(agent, "long", "Newest while reading above")
        pill = page.get_by_role("button", name="New items below")
        await expect(pill).to_be_visible()
        assert await page.evaluate("() => window.scrollY") == 0  # the reader's place is kept
        await pill.click()
        await wait_at_bottom(page)
        await expect(page.locator(".item.agent").last).to_be_in_viewport()
        await expect(pill).to_be_hidden()
        await page.context.close()


async def test_an_answered_card_shows_the_answers_given_after_a_reload_and_decline_is_no_message(
    browser: Any,
) -> None:
    async with web_gateway() as gateway, gateway.client(AGENT_AUTH) as agent:
        page = await new_page(browser)
        await sign_in(page, f"{gateway.base_url}/chat/given", "alice")
        run = await start_run(agent, "given")
        await raise_prompt(agent, run["run_id"], **KINDS["url"])
        await page.get_by_role("button", name="Decline").click()
        await expect(page.locator(".prompt.settled")).to_have_count(1)
        await raise_prompt(agent, run["run_id"], **KINDS["form"])
        form = page.locator(".prompt:not(.settled) form")
        await fill_form(form, "ops@example.com")
        await form.get_by_role("button", name="Submit").click()
        await expect(page.locator(".prompt.settled")).to_have_count(2)
        await raise_prompt(agent, run["run_id"], **KINDS["several"])
        card = page.locator(".prompt:not(.settled)")
        await card.get_by_role("radio", name="2. Postgres").check()
        await card.get_by_role("textbox", name="Which style?").fill("calm")
        await card.get_by_role("button", name="Send answer").click()
        await expect(page.locator(".prompt.settled")).to_have_count(3)
        await raise_prompt(agent, run["run_id"], **KINDS["multi"])
        async with gateway.client() as person:  # typed elsewhere: the card shows it too
            said = await person.post("/chat/given/messages", json={"name": "alice", "text": "1 3"})
            assert said.json()["outcome"] == "answered"
        await expect(page.locator(".prompt.settled")).to_have_count(4)

        for shown in ("live", "reloaded"):
            if shown == "reloaded":
                await page.reload()
                await expect(page.locator(".prompt.settled")).to_have_count(4)
            bubbles = await page.locator(".item.person .bubble").all_inner_texts()
            assert not [text for text in bubbles if text.strip().lower() == "decline"], (shown, bubbles)
            form = page.locator(".prompt.settled").nth(1)
            await expect(form.get_by_label("Project name")).to_have_value("Orion")
            await expect(form.get_by_label("Contact email")).to_have_value("ops@example.com")
            await expect(form.get_by_label("Region")).to_have_value("us-east")
            await expect(form.get_by_label("Replicas")).to_have_value("3")
            await expect(form.get_by_label("Public status page")).to_be_checked()
            await expect(form.get_by_role("checkbox", name="Pager")).to_be_checked()
            several = page.locator(".prompt.settled").nth(2)
            await expect(several.get_by_role("radio", name="2. Postgres")).to_be_checked()
            await expect(several.get_by_role("textbox", name="Which style?")).to_have_value("calm")
            multi = page.locator(".prompt.settled").nth(3)
            for label, checked in (("1. KPI cards", True), ("2. Table", False), ("3. Chart", True)):
                box = multi.get_by_role("checkbox", name=label)
                await (expect(box).to_be_checked() if checked else expect(box).not_to_be_checked())
        await page.context.close()


async def test_a_chat_card_says_how_long_ago_it_was_asked_with_the_full_time_on_hover(browser: Any) -> None:
    async with web_gateway() as gateway:
        page = await new_page(browser)
        await sign_in(page, f"{gateway.base_url}/chat/cards", "alice")
        before = datetime.now(UTC)
        await chat_cards(gateway)
        await expect(page.locator(".prompt")).to_have_count(7)
        times = page.locator(".prompt .asked time")
        await expect(times).to_have_count(7)
        for index in range(7):
            time = times.nth(index)
            asked = datetime.fromisoformat(
                (await time.get_attribute("datetime") or "").replace("Z", "+00:00")
            )
            assert abs((asked - before).total_seconds()) < 60
            assert await time.get_attribute("title")
            assert (await page.locator(".prompt .asked").nth(index).inner_text()).startswith("asked ")
        await page.context.close()


async def test_a_reminder_carries_a_word_beside_its_emoji(browser: Any) -> None:
    async with web_gateway(sweep_interval=0.2) as gateway, gateway.client(AGENT_AUTH) as agent:
        page = await new_page(browser)
        await sign_in(page, f"{gateway.base_url}/chat/remind", "alice")
        run = await start_run(agent, "remind")
        await raise_prompt(agent, run["run_id"], escalation=[{"after_seconds": 1, "remind": True}])
        notice = page.locator(".item.gateway-notice", has_text="🔔")
        await expect(notice.locator(".from")).to_have_text("Reminder", timeout=20_000)
        await page.context.close()


async def test_no_tool_call_block_carries_a_label_its_role_forbids(browser: Any) -> None:
    async with web_gateway() as gateway, gateway.client(AGENT_AUTH) as agent:
        await approvers(gateway, "web:operator")
        chat = await new_page(browser)
        await sign_in(chat, f"{gateway.base_url}/chat/tools", "alice")
        run = await start_run(agent, "tools")
        await raise_prompt(agent, run["run_id"], **KINDS["approval"])
        inbox = await new_page(browser)
        await inbox.goto(f"{gateway.base_url}/inbox#token={OPERATOR_TOKEN}&as=web%3Aoperator")
        for page in (chat, inbox):
            await expect(page.locator("pre.tool").first).to_be_visible()
            results = await Axe().run(
                page, options={"runOnly": {"type": "rule", "values": ["aria-prohibited-attr"]}}
            )
            found = results.response["violations"] + results.response["incomplete"]
            assert [node["target"] for rule in found for node in rule["nodes"]] == []
            await expect(page.get_by_role("group", name="Tool call").first).to_be_visible()
        await chat.context.close()
        await inbox.context.close()


async def test_one_sign_in_serves_every_chat_room_and_inbox_tab_of_a_browser(browser: Any) -> None:
    async with web_gateway() as gateway:
        first = await new_page(browser)
        await sign_in(first, f"{gateway.base_url}/chat/one", "alice")
        for room in ("two", "three"):
            tab = await first.context.new_page()
            await tab.goto(f"{gateway.base_url}/chat/{room}")
            await expect(tab.locator("#status")).to_have_text("live")
            await expect(tab.locator("#who")).to_have_text("signed in as web:alice")
        await first.goto(f"{gateway.base_url}/inbox#token={OPERATOR_TOKEN}&as=web%3Aoperator")
        await expect(first.locator("#who")).to_have_text("answering as web:operator")
        tab = await first.context.new_page()
        await tab.goto(f"{gateway.base_url}/inbox")
        await expect(tab.locator("#who")).to_have_text("answering as web:operator")
        await expect(tab.get_by_label("Operator token")).to_be_hidden()
        await first.context.close()
