"""In a real browser: the inbox's History view lists settled prompts, filters them, pages through them,
and gains a prompt settled while it is open."""

from __future__ import annotations

from typing import Any

from playwright.async_api import Page, expect

from tests.web.conftest import (
    AGENT_AUTH,
    OPERATOR_AUTH,
    OPERATOR_TOKEN,
    WebGateway,
    raise_prompt,
    start_run,
    web_gateway,
)
from tests.web.pages import new_page
from tests.web.test_browser_a11y import serious_problems

TOOL_CALL = {"name": "db__drop", "arguments": {"database": "staging"}}


async def approval(gateway: WebGateway, room: str, started_by: str = "web:alice") -> dict[str, Any]:
    async with gateway.client(AGENT_AUTH) as agent:
        run = await start_run(agent, room, started_by)
        return await raise_prompt(agent, run["run_id"], tool_call=TOOL_CALL)


async def answer(gateway: WebGateway, prompt: dict[str, Any], content: Any, person: str) -> None:
    async with gateway.client(OPERATOR_AUTH) as operator:
        body = {"action": "accept", "content": content, "from": person}
        response = await operator.post(f"/v1/agents/ops/inputs/{prompt['prompt_id']}", json=body)
        assert response.status_code == 200, response.text


async def open_inbox(browser: Any, gateway: WebGateway) -> Page:
    inbox = await new_page(browser)
    await inbox.goto(f"{gateway.base_url}/inbox#token={OPERATOR_TOKEN}&as=web%3Aalice")
    await expect(inbox.locator("#status")).to_have_text("live")
    return inbox


async def test_an_answer_given_in_the_inbox_shows_in_history_and_the_filters_narrow_it(browser: Any) -> None:
    async with web_gateway() as gateway:
        approved = await approval(gateway, "one")
        denied = await approval(gateway, "two")
        by_bob = await approval(gateway, "three", started_by="web:bob")
        inbox = await open_inbox(browser, gateway)
        card = inbox.locator(f'.card[data-prompt-id="{approved["prompt_id"]}"]')
        await card.get_by_role("button", name="Approve").click()
        card = inbox.locator(f'.card[data-prompt-id="{denied["prompt_id"]}"]')
        await card.get_by_role("button", name="Deny").click()
        await expect(inbox.locator(".card.settled")).to_have_count(2)
        await answer(gateway, by_bob, True, "web:bob")

        await inbox.get_by_role("button", name="History").click()
        await expect(inbox.get_by_role("button", name="History")).to_have_attribute("aria-pressed", "true")
        records = inbox.locator(".record")
        await expect(records).to_have_count(3)
        await expect(inbox.locator("#pending-view")).to_be_hidden()
        newest = records.nth(0)
        await expect(newest).to_have_attribute("data-prompt-id", by_bob["prompt_id"])
        await expect(newest.locator(".outcome")).to_have_text("✓ Approved by web:bob")
        await expect(newest.get_by_label("Tool call")).to_contain_text("db__drop")
        await expect(newest.locator(".asked")).to_have_text("Drop the staging database?")
        assert await serious_problems(inbox) == []  # the views, the filters and the records

        filters = inbox.locator("#history-filters")
        await filters.get_by_label("Outcome").select_option("denied")
        await filters.get_by_role("button", name="Search").click()
        await expect(records).to_have_count(1)
        await expect(records.nth(0).locator(".outcome")).to_have_text("✗ Denied by web:alice")

        await filters.get_by_label("Outcome").select_option("")
        await filters.get_by_label("Person").fill("web:bob")
        await filters.get_by_role("button", name="Search").click()
        await expect(records).to_have_count(1)
        await expect(records.nth(0)).to_have_attribute("data-prompt-id", by_bob["prompt_id"])

        await filters.get_by_label("Person").fill("")
        await filters.get_by_label("Settled since").fill("2099-01-01T00:00")
        await filters.get_by_role("button", name="Search").click()
        await expect(inbox.locator("#history-empty")).to_be_visible()
        await expect(records).to_have_count(0)

        await filters.get_by_role("button", name="Clear").click()
        await expect(records).to_have_count(3)
        await inbox.get_by_role("button", name="Pending").click()
        await expect(inbox.locator("#history-view")).to_be_hidden()
        await expect(inbox.locator(".card.settled")).to_have_count(3)
        assert inbox.errors == []  # type: ignore[attr-defined]
        await inbox.context.close()


async def test_history_pages_with_load_more_and_gains_prompts_settled_while_open(browser: Any) -> None:
    async with web_gateway() as gateway:
        made = []
        for number in range(27):
            prompt = await approval(gateway, f"room{number}")
            await answer(gateway, prompt, number % 2 == 0, "web:alice")
            made.append(prompt["prompt_id"])
        inbox = await open_inbox(browser, gateway)
        await inbox.get_by_role("button", name="History").click()
        records = inbox.locator(".record")
        await expect(records).to_have_count(25)
        more = inbox.get_by_role("button", name="Load more")
        await more.click()
        await expect(records).to_have_count(27)
        await expect(more).to_be_hidden()
        ids = await records.evaluate_all("(items) => items.map((item) => item.dataset.promptId)")
        assert ids == made[::-1]

        late = await approval(gateway, "late")
        await answer(gateway, late, False, "web:alice")
        await expect(records).to_have_count(28)
        await expect(records.nth(0)).to_have_attribute("data-prompt-id", late["prompt_id"])
        await expect(records.nth(0).locator(".outcome")).to_have_text("✗ Denied by web:alice")
        assert inbox.errors == []  # type: ignore[attr-defined]
        await inbox.context.close()
