"""The browser tests' page helpers: a fresh page that records script errors, a signed-in chat, typing."""

from __future__ import annotations

from typing import Any

from axe_playwright_python.async_playwright import Axe
from playwright.async_api import Page, expect

from gateway.demo import Demo

expect.set_options(timeout=10_000)
VIEWPORT = {"width": 1100, "height": 1000}
PHONE = {"width": 390, "height": 844}  # the quickstart's screenshots are taken at this width
WCAG_AA = {"runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]}}


async def new_page(browser: Any, viewport: dict[str, int] | None = None) -> Page:
    """A page in its own context (its own storage); ``page.errors`` collects uncaught script errors."""
    context = await browser.new_context(viewport=viewport or VIEWPORT)
    page: Page = await context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.errors = errors  # type: ignore[attr-defined]
    return page


async def serious_problems(page: Page) -> list[str]:
    """axe's serious and critical violations of WCAG 2.1 A and AA, one line per element."""
    results = await Axe().run(page, options=WCAG_AA)
    return [
        f"{violation['id']} ({violation['impact']}): {node['target']} {node.get('failureSummary', '')}"
        for violation in results.response["violations"]
        if violation["impact"] in ("serious", "critical")
        for node in violation["nodes"]
    ]


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


async def sign_in(page: Page, url: str, name: str) -> None:
    await page.goto(url)
    await page.get_by_label("Your name").fill(name)
    await page.get_by_role("button", name="Join").click()
    await expect(page.locator("#status")).to_have_text("live")


async def open_chat(browser: Any, demo: Demo, name: str, viewport: dict[str, int] | None = None) -> Page:
    page = await new_page(browser, viewport)
    await sign_in(page, demo.chat_url, name)
    return page


async def say(page: Page, text: str) -> None:
    box = page.get_by_role("textbox", name="Message")
    await box.fill(text)
    await box.press("Enter")
