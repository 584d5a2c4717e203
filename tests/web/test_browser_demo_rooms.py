"""Two people try the demo at once, each from the printed chat URL, without a reload; and a page whose room
is not open to its reader yet keeps checking and shows the room once it is."""

from __future__ import annotations

from typing import Any

from playwright.async_api import expect

from channels.web.channel import own_room
from gateway.demo import Demo
from tests.web.cards import KINDS, approvers
from tests.web.conftest import AGENT_AUTH, raise_prompt, start_run, web_gateway
from tests.web.pages import new_page, say, sign_in


async def test_two_people_tour_the_demo_side_by_side_without_a_reload(demo: Demo, browser: Any) -> None:
    pages = {}
    for name in ("alice", "carol"):
        page = await new_page(browser)
        await sign_in(page, demo.chat_url, name)
        assert page.url == f"{demo.base_url}/chat/{own_room(demo.room, name)}"
        pages[name] = page
    for name, page in pages.items():
        await say(page, "hello")
        await expect(page.locator(".prompt:not(.settled)")).to_have_count(1)
        await expect(page.locator(".item.agent").first).to_contain_text(f"Hi {name}!")
    carol = pages["carol"].locator(".prompt:not(.settled)")
    await carol.get_by_role("button", name="Approve", exact=True).click()
    await expect(pages["carol"].locator(".prompt")).to_have_count(2)
    alice = pages["alice"]
    await expect(alice.locator(".prompt")).to_have_count(1)
    await expect(alice.locator(".prompt:not(.settled)")).to_have_count(1)  # not superseded by carol
    assert not [text for text in await alice.locator(".item").all_inner_texts() if "carol" in text]
    for page in pages.values():
        assert page.errors == []  # type: ignore[attr-defined]
        await page.context.close()


async def test_a_room_not_open_yet_is_followed_until_it_opens_and_says_so(browser: Any) -> None:
    async with web_gateway() as gateway, gateway.client(AGENT_AUTH) as agent:
        run = await start_run(agent, "ops")  # alice's run: carol takes no part yet
        await raise_prompt(agent, run["run_id"], **KINDS["single"])
        page = await new_page(browser)
        await page.goto(f"{gateway.base_url}/chat/ops")
        await page.get_by_label("Your name").fill("carol")
        await page.get_by_role("button", name="Join").click()
        await expect(page.locator("#status")).to_have_text("not open to you")
        await expect(page.locator("#notice")).to_contain_text("keeps checking")
        await expect(page.locator(".prompt")).to_have_count(0)
        await approvers(gateway, "web:carol")
        await expect(page.locator(".prompt")).to_have_count(1, timeout=15_000)
        await expect(page.locator("#status")).to_have_text("live")
        await expect(page.locator("#notice")).to_be_hidden()
        await page.context.close()
