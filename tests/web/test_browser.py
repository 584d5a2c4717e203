"""In a real browser: the demo chat walks through every prompt kind; the inbox answers and follows live."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from playwright.async_api import Page, expect

from gateway.demo import Demo
from gateway.demo.agent import ANSWERS_PREFIX, GOODBYE
from tests.web.conftest import screenshot_path

expect.set_options(timeout=10_000)
VIEWPORT = {"width": 1100, "height": 1000}


async def new_page(browser: Any) -> Page:
    context = await browser.new_context(viewport=VIEWPORT)
    page: Page = await context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.errors = errors  # type: ignore[attr-defined]
    return page


async def open_chat(browser: Any, demo: Demo, name: str) -> Page:
    page = await new_page(browser)
    await page.goto(demo.chat_url)
    await page.get_by_label("Your name").fill(name)
    await page.get_by_role("button", name="Join").click()
    await expect(page.locator("#status")).to_have_text("live")
    return page


async def say(page: Page, text: str) -> None:
    box = page.get_by_role("textbox", name="Message")
    await box.fill(text)
    await box.press("Enter")


async def echoed(page: Page, count: int) -> tuple[str, list[dict[str, Any]]]:
    """The agent's ``count``-th echo: its text, and the structured answers it reports."""
    echoes = page.locator(".item.agent .bubble", has_text=ANSWERS_PREFIX)
    await expect(echoes).to_have_count(count)
    text = await echoes.nth(count - 1).inner_text()
    return text, json.loads(text.split(ANSWERS_PREFIX, 1)[1])


def answer_lists(answers: list[dict[str, Any]]) -> list[list[str]]:
    return [entry["answer"] for entry in answers]


async def test_demo_tour_takes_typed_replies_and_control_answers_and_echoes_them(
    demo: Demo, browser: Any, tmp_path: Path
) -> None:
    page = await open_chat(browser, demo, "alice")
    await say(page, "hello")
    prompts = page.locator(".prompt")

    await expect(prompts).to_have_count(1)
    await expect(prompts.nth(0).get_by_label("Tool call")).to_contain_text('"database": "staging"')
    await say(page, "approve")  # typed, as in Slack
    _, answers = await echoed(page, 1)
    assert answers == [
        {
            "question": "Allow db__drop to run? It deletes the staging database.",
            "question_id": "q1",
            "answer": ["Approve"],
        }
    ]

    await expect(prompts).to_have_count(2)
    single = prompts.nth(1)
    await single.get_by_role("radio", name="2. production").check()
    await single.get_by_role("button", name="Send answer").click()
    assert answer_lists((await echoed(page, 2))[1]) == [["production"]]

    await expect(prompts).to_have_count(3)
    await say(page, "1 3")  # numbers pick several options of a multi-select
    assert answer_lists((await echoed(page, 3))[1]) == [["KPI cards", "Chart"]]

    await expect(prompts).to_have_count(4)
    await say(page, "Blue Falcon")
    assert answer_lists((await echoed(page, 4))[1]) == [["Blue Falcon"]]

    await expect(prompts).to_have_count(5)
    form = prompts.nth(4)
    await form.get_by_role("radio", name="2. Postgres").check()
    await form.get_by_role("checkbox", name="1. KPI cards").check()
    await form.get_by_role("checkbox", name="2. Table").check()
    await form.get_by_role("textbox", name="Any preference for visual style?").fill("dark theme")
    await form.scroll_into_view_if_needed()
    await page.screenshot(path=screenshot_path("chat.png", tmp_path))
    await form.get_by_role("button", name="Send answer").click()
    _, answers = await echoed(page, 5)
    assert [(entry["question_id"], entry["answer"]) for entry in answers] == [
        ("q1", ["Postgres"]),
        ("q2", ["KPI cards", "Table"]),
        ("q3", ["dark theme"]),
    ]

    await expect(page.locator(".audit.answered")).to_have_count(5)
    await expect(page.locator(".audit.answered").last).to_have_text(
        "✓ Answered: Postgres · KPI cards, Table · dark theme"
    )
    await expect(page.locator(".prompt.settled")).to_have_count(5)
    await expect(page.locator(".item.agent .bubble").last).to_have_text(GOODBYE)
    assert page.errors == []  # type: ignore[attr-defined]


async def test_answer_from_inbox_goes_through_the_approver_rule_and_shows_in_the_chat(
    demo: Demo, browser: Any, tmp_path: Path
) -> None:
    chat = await open_chat(browser, demo, "alice")
    await say(chat, "hello")
    await expect(chat.locator(".prompt")).to_have_count(1)

    inbox = await new_page(browser)
    await inbox.goto(demo.inbox_url)
    card = inbox.locator(".card")
    await expect(card).to_have_count(1)
    await expect(card.get_by_label("Tool call")).to_contain_text("db__drop")
    await expect(inbox.locator("#count")).to_have_text("1 pending")
    await inbox.locator("body").screenshot(path=screenshot_path("inbox.png", tmp_path))

    await card.get_by_role("button", name="Approve").click()
    await expect(card).to_contain_text("Answered by web:operator: Approve")

    await expect(chat.locator(".audit.answered")).to_have_text("✓ Answered: Approve")
    text, answers = await echoed(chat, 1)
    assert "from web:operator" in text
    assert answer_lists(answers) == [["Approve"]]
    assert inbox.errors == [] and chat.errors == []  # type: ignore[attr-defined]


async def test_inbox_shows_new_prompts_and_answers_given_elsewhere_live(demo: Demo, browser: Any) -> None:
    inbox = await new_page(browser)
    await inbox.goto(demo.inbox_url)
    await expect(inbox.locator("#empty")).to_be_visible()
    await expect(inbox.locator("#status")).to_have_text("live")

    chat = await open_chat(browser, demo, "alice")
    await say(chat, "hello")
    card = inbox.locator(".card")
    await expect(card).to_have_count(1)  # arrived over /v1/events, without a reload

    await say(chat, "no")  # anything but an affirmative denies
    await expect(card).to_have_class("card settled")
    await expect(card).to_contain_text("Answered by web:alice: Deny")
    await expect(inbox.locator("#count")).to_contain_text("pending")


async def test_inbox_refuses_an_answer_from_someone_who_may_not_answer(demo: Demo, browser: Any) -> None:
    chat = await open_chat(browser, demo, "alice")
    await say(chat, "hello")
    await expect(chat.locator(".prompt")).to_have_count(1)

    inbox = await new_page(browser)
    await inbox.goto(f"{demo.base_url}/inbox")
    await inbox.get_by_label("Operator token").fill(demo.operator_token)
    await inbox.get_by_label("Answer as").fill("web:mallory")
    await inbox.get_by_role("button", name="Open the inbox").click()
    card = inbox.locator(".card")
    await card.get_by_role("button", name="Approve").click()
    await expect(card.get_by_role("alert")).to_contain_text("web:mallory may not answer this prompt")
    await expect(chat.locator(".prompt.settled")).to_have_count(0)
