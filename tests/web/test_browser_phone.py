"""On a phone: with every kind of card on screen, neither page is wider than the screen."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from playwright.async_api import Page, expect

from tests.web.cards import chat_cards, fill_form, inbox_cards, settle_two
from tests.web.conftest import OPERATOR_TOKEN, SCREENSHOTS, screenshot_path, web_gateway
from tests.web.pages import new_page, sign_in

PHONES = (360, 390)


async def wider_than_the_screen(page: Page) -> list[str]:
    """What sticks out past the right edge (empty when the page fits its width)."""
    found: list[str] = await page.evaluate(
        """() => document.documentElement.scrollWidth <= window.innerWidth ? [] :
            [...document.querySelectorAll("body *")]
              .filter((node) => node.getBoundingClientRect().right > window.innerWidth + 0.5)
              .map((node) => `${node.tagName}.${node.className} ${node.getBoundingClientRect().right}px`)
              .concat([`scrollWidth ${document.documentElement.scrollWidth}`])"""
    )
    return found


async def test_the_chat_fits_a_phone_with_every_kind_of_card(browser: Any, tmp_path: Path) -> None:
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
        for width in PHONES:
            await chat.set_viewport_size({"width": width, "height": 800})
            assert await wider_than_the_screen(chat) == [], width
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


async def test_the_inbox_fits_a_phone_with_every_kind_of_card(browser: Any, tmp_path: Path) -> None:
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
        for width in PHONES:
            await inbox.set_viewport_size({"width": width, "height": 800})
            assert await wider_than_the_screen(inbox) == [], width
        assert inbox.errors == []  # type: ignore[attr-defined]
        await inbox.context.close()
