"""On two phones and a desktop: with every kind of card on screen (walked through once), neither page is
wider than the screen and axe finds nothing serious at any of the widths."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from playwright.async_api import Page, expect

from tests.web.cards import chat_cards, fill_form, inbox_cards, settle_two
from tests.web.conftest import OPERATOR_TOKEN, SCREENSHOTS, screenshot_path, web_gateway
from tests.web.pages import new_page, serious_problems, sign_in, wider_than_the_screen

WIDTHS = (360, 390, 1280)  # two common phones, then a desktop


async def fits_every_width(page: Page) -> None:
    """At each width: nothing sticks out past the right edge, and nothing serious for axe."""
    for width in WIDTHS:
        await page.set_viewport_size({"width": width, "height": 800})
        assert await wider_than_the_screen(page) == [], width
        assert await serious_problems(page) == [], width


async def test_the_chat_fits_a_phone_and_a_desktop_with_every_kind_of_card(
    browser: Any, tmp_path: Path
) -> None:
    async with web_gateway() as gateway:
        chat = await new_page(browser, {"width": 390, "height": 844})
        await sign_in(chat, f"{gateway.base_url}/chat/cards", "alice")
        cards = chat.locator(".prompt")

        async def shoot(name: str) -> None:  # each card as it is asked, for the docs
            card = chat.locator(".prompt:not(.settled)")
            await expect(card).to_have_attribute("data-kind", KIND_OF[name])
            if SCREENSHOTS:
                await card.screenshot(path=screenshot_path(f"phone-chat-{name}.png", tmp_path))

        await chat_cards(gateway, raised=shoot)
        await expect(cards).to_have_count(7)
        await expect(chat.locator(".prompt.settled.answered")).to_have_count(4)
        await expect(chat.locator(".prompt.settled.cancelled")).to_have_count(2)
        form = chat.locator(".prompt:not(.settled) form")
        await fill_form(form, "ops@localhost")  # taken by the browser, refused by the gateway
        await form.get_by_role("button", name="Submit").click()
        await expect(form.locator(".field[data-property=contact] .problem")).to_be_visible()
        if SCREENSHOTS:
            await chat.locator(".prompt").first.screenshot(
                path=screenshot_path("phone-chat-answered.png", tmp_path)
            )
            await chat.locator(".prompt.cancelled").first.screenshot(
                path=screenshot_path("phone-chat-cancelled.png", tmp_path)
            )
        await fits_every_width(chat)
        assert chat.errors == []  # type: ignore[attr-defined]
        await chat.context.close()


KIND_OF = {
    "approval": "approval",
    "single": "ask_user_question",
    "multi": "ask_user_question",
    "several": "ask_user_question",
    "text": "text",
    "url": "url",
    "form": "form",
}


async def test_the_inbox_fits_a_phone_and_a_desktop_with_every_kind_of_card(
    browser: Any, tmp_path: Path
) -> None:
    async with web_gateway() as gateway:
        ids = await inbox_cards(gateway)
        inbox = await new_page(browser, {"width": 390, "height": 844})
        await inbox.goto(f"{gateway.base_url}/inbox#token={OPERATOR_TOKEN}&as=web%3Aalice")
        await expect(inbox.locator(".card")).to_have_count(7)
        await expect(inbox.locator("#status")).to_have_text("live")
        await settle_two(gateway, ids)
        await expect(inbox.locator(".card.settled")).to_have_count(2)
        await expect(inbox.locator(".card")).to_have_count(8)  # the question that superseded one
        form = inbox.locator(f'.card[data-prompt-id="{ids["form"]}"] form')
        await fill_form(form, "ops@localhost")
        await form.get_by_role("button", name="Submit").click()
        await expect(form.locator(".field[data-property=contact] .problem")).to_be_visible()
        if SCREENSHOTS:
            await inbox.screenshot(path=screenshot_path("phone-inbox.png", tmp_path))
        await fits_every_width(inbox)
        assert inbox.errors == []  # type: ignore[attr-defined]
        await inbox.context.close()
