"""How a settled prompt reads, the same on every page: one colour per outcome (a denial, a decline, a
cancel in red; an approve, an answer in green) with words that say it without the colour, who declined,
what an "Approve for this session" let through, and a settled inbox card that keeps its question."""

from __future__ import annotations

import re
from typing import Any

from playwright.async_api import Locator, Page, expect

from gateway.rules import notices
from tests.web.cards import KINDS
from tests.web.conftest import AGENT_AUTH, OPERATOR_AUTH, OPERATOR_TOKEN, raise_prompt, start_run, web_gateway
from tests.web.pages import new_page, say, sign_in

OK, BAD = "rgb(31, 122, 53)", "rgb(201, 42, 42)"
NPM = {"name": "Bash", "arguments": {"command": "npm test"}}
DROP = {"name": "Bash", "arguments": {"command": "dropdb staging"}}
URL = KINDS["url"]


async def colour(line: Locator) -> str:
    return str(await line.evaluate("(node) => getComputedStyle(node).color"))


async def settled_as(line: Locator, text: str | re.Pattern[str], expected: str) -> None:
    await expect(line).to_have_text(text)
    assert await colour(line) == expected, await line.inner_text()


async def test_each_outcome_has_its_colour_and_words_on_the_chat_cards(browser: Any) -> None:
    async with web_gateway() as gateway, gateway.client(AGENT_AUTH) as agent:
        page = await new_page(browser)
        await sign_in(page, f"{gateway.base_url}/chat/outcomes", "alice")
        run = await start_run(agent, "outcomes")
        outcomes = page.locator(".prompt .outcome")

        await raise_prompt(agent, run["run_id"], tool_call=NPM)
        await page.get_by_role("button", name=notices.APPROVE_FOR_SESSION).click()
        await settled_as(outcomes.nth(0), "✓ Approved by web:alice, and for this session: `npm test`", OK)

        await raise_prompt(agent, run["run_id"], tool_call=DROP)
        await say(page, "no, use the canary first")
        await settled_as(outcomes.nth(1), "✗ Denied by web:alice: no, use the canary first", BAD)

        for number, kind in enumerate([URL, KINDS["form"]], start=2):
            await raise_prompt(agent, run["run_id"], **kind)
            await page.locator(".prompt").nth(number).get_by_role("button", name="Decline").click()
            await settled_as(outcomes.nth(number), "✗ Declined by web:alice", BAD)

        await raise_prompt(agent, run["run_id"], **KINDS["single"])
        await say(page, "1")
        await settled_as(outcomes.nth(4), "✓ Answered by web:alice: staging", OK)
        await raise_prompt(agent, run["run_id"], **KINDS["text"])
        await raise_prompt(agent, run["run_id"], **KINDS["text"])  # supersedes the one before
        await settled_as(outcomes.nth(5), re.compile(r"^✗ Cancelled: "), BAD)
        assert page.errors == []  # type: ignore[attr-defined]
        await page.context.close()


async def test_approve_for_this_session_leaves_its_trace_on_every_page_after_a_reload_and_in_history(
    browser: Any,
) -> None:
    said = "✓ Approved by web:alice, and for this session: `npm test`"
    async with web_gateway() as gateway, gateway.client(AGENT_AUTH) as agent:
        pressing, watching = await new_page(browser), await new_page(browser)
        for page in (pressing, watching):  # two browsers: only the first one presses
            await sign_in(page, f"{gateway.base_url}/chat/session-trace", "alice")
        run = await start_run(agent, "session-trace")
        prompt = await raise_prompt(agent, run["run_id"], tool_call=NPM)
        desk = await inbox(browser, gateway.base_url)
        await expect(desk.locator(".card")).to_have_count(1)

        await pressing.get_by_role("button", name=notices.APPROVE_FOR_SESSION).click()
        await settled_as(pressing.locator(".prompt .outcome"), said, OK)
        await settled_as(watching.locator(".prompt .outcome"), said, OK)
        await settled_as(desk.locator(".card .outcome"), said, OK)
        await watching.reload()
        await settled_as(watching.locator(".prompt .outcome"), said, OK)

        await desk.get_by_role("button", name="History").click()
        record = desk.locator(".record").filter(has_text="npm test").first
        await settled_as(record.locator(".outcome"), said, OK)
        async with gateway.client(OPERATOR_AUTH) as operator:
            (kept,) = (await operator.get("/v1/history")).json()["items"]
        assert (kept["prompt_id"], kept["granted"]) == (prompt["prompt_id"], NPM)
        assert pressing.errors == [] and watching.errors == []  # type: ignore[attr-defined]
        for page in (pressing, watching, desk):
            await page.context.close()


async def inbox(browser: Any, base_url: str) -> Page:
    page = await new_page(browser)
    await page.goto(f"{base_url}/inbox#token={OPERATOR_TOKEN}&as=web%3Aalice")
    return page


async def test_a_denial_reads_the_same_in_the_pending_view_and_in_history_its_reason_once(
    browser: Any,
) -> None:
    async with web_gateway() as gateway, gateway.client(AGENT_AUTH) as agent:
        run = await start_run(agent, "inbox-outcomes")
        await raise_prompt(agent, run["run_id"], tool_call=DROP)
        page = await inbox(browser, gateway.base_url)
        deny = page.locator(".card")
        await deny.get_by_role("button", name="Deny with reason…").click()
        await deny.locator("form.reason textarea").fill("use the canary first")
        await deny.get_by_role("button", name="Deny with this reason").click()
        said = "✗ Denied by web:alice: use the canary first"
        await settled_as(deny.locator(".outcome"), said, BAD)

        await page.get_by_role("button", name="History").click()
        record = page.locator(".record").filter(has_text="dropdb staging").first
        await settled_as(record.locator(".outcome"), said, BAD)
        assert (await record.inner_text()).count("use the canary first") == 1
        await page.context.close()


async def test_a_settled_inbox_card_keeps_its_question_and_link_and_drops_its_expiry(browser: Any) -> None:
    async with web_gateway() as gateway, gateway.client(AGENT_AUTH) as agent:
        page = await inbox(browser, gateway.base_url)
        for room, kind, press in [
            ("inbox-url", URL, "Done"),
            ("inbox-single", KINDS["single"], "Decline"),
            ("inbox-approval", {"tool_call": NPM}, "Approve"),
        ]:
            run = await start_run(agent, room)
            await raise_prompt(agent, run["run_id"], **kind)
            card = page.locator(".card").filter(has_text=room).first
            await expect(card.locator(".meta")).to_contain_text("expires")
            await card.get_by_role("button", name=press, exact=True).click()
            await expect(card.locator(".outcome")).to_be_visible()
            await expect(card.locator(".meta")).not_to_contain_text("expires")
            asked = kind.get("message") or (kind.get("questions") or [{}])[0].get("question")
            await expect(card).to_contain_text(asked or "Drop the staging database?")
            if kind is URL:
                await expect(card.get_by_role("link", name=URL["url"])).to_be_visible()
        await page.context.close()


async def test_a_person_named_you_is_not_called_you_twice(browser: Any) -> None:
    async with web_gateway() as gateway:
        for name, shown in [("you", "you"), ("You", "You"), ("alice", "alice (you)")]:
            page = await new_page(browser)
            await sign_in(page, f"{gateway.base_url}/chat/names-{name.lower()}", name)
            await say(page, "hello")
            await expect(page.locator(".item.mine .from").last).to_have_text(shown)
            await page.context.close()
