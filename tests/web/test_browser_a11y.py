"""Accessibility (WCAG 2.1 AA): axe finds nothing serious on either page in any card state, and an
approval, a question and a form are answered with the keyboard alone."""

from __future__ import annotations

from typing import Any

from playwright.async_api import Page, expect

from tests.web.cards import chat_cards, fill_form, inbox_cards, settle_two
from tests.web.conftest import AGENT_AUTH, OPERATOR_TOKEN, raise_prompt, start_run, web_gateway
from tests.web.pages import new_page, serious_problems, sign_in


async def test_axe_finds_nothing_serious_in_the_chat_in_any_card_state(browser: Any) -> None:
    async with web_gateway() as gateway:
        chat = await new_page(browser)
        await chat.goto(f"{gateway.base_url}/chat/cards")
        await expect(chat.get_by_label("Your name")).to_be_visible()
        assert await serious_problems(chat) == []  # the sign-in form

        await sign_in(chat, f"{gateway.base_url}/chat/cards", "alice")
        await chat_cards(gateway)
        await expect(chat.locator(".prompt")).to_have_count(7)
        await expect(chat.locator(".prompt.settled")).to_have_count(6)
        assert await serious_problems(chat) == []  # answered, cancelled and open cards

        form = chat.locator(".prompt:not(.settled) form")
        await fill_form(form, "ops@localhost")
        await form.get_by_role("button", name="Submit").click()
        await expect(form.locator(".field[data-property=contact] .problem")).to_be_visible()
        assert await serious_problems(chat) == []  # a value not taken, marked by its field
        await chat.context.close()


async def test_axe_finds_nothing_serious_in_the_inbox_in_any_card_state(browser: Any) -> None:
    async with web_gateway() as gateway:
        inbox = await new_page(browser)
        await inbox.goto(f"{gateway.base_url}/inbox")
        await expect(inbox.get_by_label("Operator token")).to_be_visible()
        assert await serious_problems(inbox) == []  # the sign-in form

        ids = await inbox_cards(gateway)
        await inbox.goto(f"{gateway.base_url}/inbox#token={OPERATOR_TOKEN}&as=web%3Aalice")
        await inbox.reload()  # a new fragment alone does not load the page again
        await expect(inbox.locator(".card")).to_have_count(7)
        await expect(inbox.locator("#status")).to_have_text("live")
        await settle_two(gateway, ids)
        await expect(inbox.locator(".card.settled")).to_have_count(2)
        form = inbox.locator(f'.card[data-prompt-id="{ids["form"]}"] form')
        await fill_form(form, "ops@localhost")
        await form.get_by_role("button", name="Submit").click()
        await expect(form.locator(".field[data-property=contact] .problem")).to_be_visible()
        assert await serious_problems(inbox) == []
        await inbox.context.close()


async def field_borders(page: Page) -> list[tuple[str, float]]:
    """Each visible text box's, drop-down's and message box's border contrast against the page behind it."""
    found: list[tuple[str, float]] = await page.evaluate(
        """() => {
          const luminance = (color) => {
            const [r, g, b] = color.match(/[\\d.]+/g).slice(0, 3).map((value) => {
              const channel = Number(value) / 255;
              return channel <= 0.03928 ? channel / 12.92 : ((channel + 0.055) / 1.055) ** 2.4;
            });
            return 0.2126 * r + 0.7152 * g + 0.0722 * b;
          };
          const behind = (node) => {
            for (let at = node.parentElement; at; at = at.parentElement) {
              const color = getComputedStyle(at).backgroundColor;
              if (!color.endsWith(", 0)") && color !== "transparent") return color;
            }
            return "rgb(255, 255, 255)";
          };
          const fields = "input:not([type=checkbox]):not([type=radio]), select, textarea";
          return [...document.querySelectorAll(fields)]
            .filter((node) => node.offsetParent !== null)
            .map((node) => {
              const [a, b] = [luminance(getComputedStyle(node).borderTopColor), luminance(behind(node))];
              return [node.name || node.id, (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05)];
            });
        }"""
    )
    return found


async def test_every_field_border_stands_out_from_the_page_at_three_to_one(browser: Any) -> None:
    async with web_gateway() as gateway:
        chat = await new_page(browser)
        await chat.goto(f"{gateway.base_url}/chat/cards")
        signed_out = await field_borders(chat)
        await sign_in(chat, f"{gateway.base_url}/chat/cards", "alice")
        await chat_cards(gateway)
        await expect(chat.locator(".prompt")).to_have_count(7)
        borders = signed_out + await field_borders(chat)
        assert len(borders) > 10
        assert [(name, ratio) for name, ratio in borders if ratio < 3] == []
        await chat.context.close()


KEYBOARD_FORM: dict[str, Any] = {
    "kind": "form",
    "message": "Name the project.",
    "requested_schema": {
        "type": "object",
        "properties": {
            "project": {"type": "string", "title": "Project name"},
            "replicas": {"type": "integer", "title": "Replicas", "default": 2},
            "public": {"type": "boolean", "title": "Public status page"},
        },
        "required": ["project"],
    },
    "questions": None,
}


async def focused(page: Page) -> str:
    """The focused element: its tag, then its accessible name as the label or text says it."""
    name: str = await page.evaluate(
        """() => { const node = document.activeElement;
          const label = node.labels && node.labels.length ? node.labels[0].textContent : node.textContent;
          const name = (node.getAttribute("aria-label") || label || "").trim();
          return `${node.tagName.toLowerCase()} ${name}`; }"""
    )
    return name


async def tab_to(page: Page, wanted: str) -> None:
    """Press Tab until ``wanted`` (as ``focused`` says it) has the focus."""
    seen = []
    for _ in range(20):
        seen.append(await focused(page))
        if seen[-1] == wanted:
            return
        await page.keyboard.press("Tab")
    raise AssertionError(f"never reached {wanted!r} with Tab: {seen}")


async def test_an_approval_a_question_and_a_form_are_answered_with_the_keyboard_alone(browser: Any) -> None:
    async with web_gateway() as gateway, gateway.client(AGENT_AUTH) as agent:
        run = await start_run(agent, "keys")
        approval = await raise_prompt(
            agent, run["run_id"], questions=[{"question": "Drop the staging database?"}]
        )
        page = await new_page(browser)
        await page.goto(f"{gateway.base_url}/chat/keys")
        await page.keyboard.type("alice")  # the name box has the focus
        await page.keyboard.press("Enter")
        await expect(page.locator(".prompt")).to_have_count(1)

        await tab_to(page, "button Approve")
        await page.keyboard.press("Enter")
        await expect(page.locator(".prompt.settled .outcome")).to_have_text("✓ Approved by web:alice")
        assert await focused(page) == "textarea Message"  # not dropped on <body>: no card is open yet

        question = await raise_prompt(
            agent,
            run["run_id"],
            kind="ask_user_question",
            questions=[
                {"question": "Deploy where?", "options": [{"label": "staging"}, {"label": "production"}]}
            ],
        )
        await expect(page.locator(".prompt")).to_have_count(2)
        assert await focused(page) == "input 1. staging"  # the new card takes the waiting focus
        await page.keyboard.press("Space")
        await tab_to(page, "button Send answer")
        await page.keyboard.press("Enter")
        await expect(page.locator(".prompt.settled")).to_have_count(2)

        form = await raise_prompt(agent, run["run_id"], **KEYBOARD_FORM)
        await expect(page.locator(".prompt")).to_have_count(3)
        assert await focused(page) == "input Project name"
        await page.keyboard.type("Orion")
        await tab_to(page, "input Public status page")
        await page.keyboard.press("Space")
        await tab_to(page, "button Submit")
        await page.keyboard.press("Enter")
        await expect(page.locator(".prompt.settled")).to_have_count(3)

        settled = [
            (await agent.get(f"/v1/prompts/{p['prompt_id']}")).json() for p in (approval, question, form)
        ]
        assert [prompt["answered_by"] for prompt in settled] == ["web:alice"] * 3
        assert settled[0]["answers"][0]["answer"] == ["Approve"]
        assert settled[1]["answers"][0]["answer"] == ["staging"]
        assert settled[2]["content"] == {"project": "Orion", "replicas": 2, "public": True}
        assert page.errors == []  # type: ignore[attr-defined]
        await page.context.close()


async def test_the_inbox_moves_the_focus_to_the_next_card_after_an_answer(browser: Any) -> None:
    async with web_gateway() as gateway, gateway.client(AGENT_AUTH) as agent:
        for room in ("first", "second"):
            run = await start_run(agent, room)
            await raise_prompt(agent, run["run_id"])
        inbox = await new_page(browser)
        await inbox.goto(f"{gateway.base_url}/inbox#token={OPERATOR_TOKEN}&as=web%3Aalice")
        await expect(inbox.locator(".card")).to_have_count(2)

        await tab_to(inbox, "button Approve")
        await inbox.keyboard.press("Enter")
        await expect(inbox.locator(".card.settled")).to_have_count(1)
        assert await focused(inbox) == "button Approve"  # the other card's
        await inbox.keyboard.press("Space")
        await expect(inbox.locator(".card.settled")).to_have_count(2)
        assert await focused(inbox) == "p ✓ Approved by web:alice"  # none left: how it went
        await inbox.context.close()
