"""The browser tests' page helpers: a fresh page that records script errors, a signed-in chat, typing."""

from __future__ import annotations

from typing import Any

from playwright.async_api import Page, expect

from gateway.demo import Demo

expect.set_options(timeout=10_000)
VIEWPORT = {"width": 1100, "height": 1000}


async def new_page(browser: Any, viewport: dict[str, int] | None = None) -> Page:
    """A page in its own context (its own storage); ``page.errors`` collects uncaught script errors."""
    context = await browser.new_context(viewport=viewport or VIEWPORT)
    page: Page = await context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.errors = errors  # type: ignore[attr-defined]
    return page


async def sign_in(page: Page, url: str, name: str) -> None:
    await page.goto(url)
    await page.get_by_label("Your name").fill(name)
    await page.get_by_role("button", name="Join").click()
    await expect(page.locator("#status")).to_have_text("live")


async def open_chat(browser: Any, demo: Demo, name: str) -> Page:
    page = await new_page(browser)
    await sign_in(page, demo.chat_url, name)
    return page


async def say(page: Page, text: str) -> None:
    box = page.get_by_role("textbox", name="Message")
    await box.fill(text)
    await box.press("Enter")
