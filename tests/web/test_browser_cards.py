"""Cards read at a glance: each thing shown once, who answered, how typing works, problems in words,
relative times, and short announcements for screen readers."""

from __future__ import annotations

import re
from typing import Any

from playwright.async_api import Page, expect

from gateway.base.formats import PROBLEMS
from gateway.base.forms import check_schema, check_value
from gateway.rules import notices
from tests.web.cards import KINDS, chat_cards, chat_message, fill_form, inbox_cards
from tests.web.conftest import AGENT_AUTH, OPERATOR_TOKEN, raise_prompt, start_run, web_gateway
from tests.web.pages import new_page, say, sign_in

HINTS = {
    "approval": notices.approval_hint(editable=False),
    "single": "Or type an option's number or label, or your own answer.",
    "multi": "Or type the numbers of your choices, like 1 3.",
    "several": "Or type one line per question, in order (or numbered 1. … to 2. …).",
    "text": "Or just type your answer.",
    "url": "Or type done once the page is finished, or decline.",
    "form": (
        "Or type one name: value line per field (required: project, contact, region, replicas; "
        "optional: site, launch, window, budget, public, alerts), or decline."
    ),
}
ORDER = ("approval", "single", "multi", "several", "text", "url", "form")


async def chat_with_every_card(browser: Any, base_url: str) -> Page:
    page = await new_page(browser)
    await sign_in(page, f"{base_url}/chat/cards", "alice")
    return page


async def test_each_card_says_its_question_once_with_its_controls_and_a_typing_hint(browser: Any) -> None:
    async with web_gateway() as gateway:
        page = await chat_with_every_card(browser, gateway.base_url)
        await chat_cards(gateway)
        cards = page.locator(".prompt")
        await expect(cards).to_have_count(7)
        await expect(page.locator(".prompt.settled")).to_have_count(6)
        for index, name in enumerate(ORDER):
            text = await cards.nth(index).inner_text()
            for question in KINDS[name].get("questions") or []:
                assert text.count(question["question"]) == 1, (name, text)
            assert "1. Approve" not in text and "2. Deny" not in text
        open_card = cards.nth(6)
        await expect(open_card.locator(".typing")).to_have_text(HINTS["form"])
        assert await page.locator(".audit").count() == 0  # outcomes are on their cards, not again as lines
        await page.context.close()


async def test_every_kind_of_card_has_its_typing_hint_while_open(browser: Any) -> None:
    async with web_gateway() as gateway, gateway.client(AGENT_AUTH) as agent:
        page = await chat_with_every_card(browser, gateway.base_url)
        run = await start_run(agent, "cards")
        for count, name in enumerate(ORDER, start=1):
            await raise_prompt(agent, run["run_id"], **KINDS[name])
            card = page.locator(".prompt").nth(count - 1)
            await expect(card.locator(".typing")).to_have_text(HINTS[name])
        await expect(page.locator(".prompt.settled .typing:visible")).to_have_count(0)  # superseded: no hint
        await page.context.close()


async def test_a_card_says_who_answered_it_and_what(browser: Any) -> None:
    async with web_gateway() as gateway, gateway.client(AGENT_AUTH) as agent:
        page = await chat_with_every_card(browser, gateway.base_url)
        run = await start_run(agent, "cards")
        cards, outcomes = page.locator(".prompt"), page.locator(".prompt .outcome")
        await raise_prompt(agent, run["run_id"], **KINDS["approval"])
        await say(page, "no")  # a typed deny: its words are the reason the agent is told
        await expect(outcomes.nth(0)).to_have_text("✗ Denied by web:alice: no")
        await raise_prompt(agent, run["run_id"], **KINDS["single"])
        await cards.nth(1).get_by_role("radio", name="1. staging").check()
        await cards.nth(1).get_by_role("button", name="Send answer").click()
        await expect(outcomes.nth(1)).to_have_text("✓ Answered by web:alice: staging")
        await raise_prompt(agent, run["run_id"], **KINDS["several"])
        await say(page, "2")
        await expect(outcomes.nth(2)).to_have_text("✓ Answered by web:alice: Postgres · 2")
        for number, typed in enumerate(["2\nplain", "2. plain\n1. Postgres", "1) 2\n2) plain"]):
            await raise_prompt(agent, run["run_id"], **KINDS["several"])
            await say(page, typed)  # Shift+Enter's new lines, filled in at once
            await expect(cards.nth(3 + number).locator(".outcome")).to_have_text(
                "✓ Answered by web:alice: Postgres · plain"
            )
        await raise_prompt(agent, run["run_id"], **KINDS["url"])
        await raise_prompt(agent, run["run_id"], **KINDS["text"])  # supersedes the URL step
        await expect(outcomes.nth(6)).to_have_text(re.compile(r"^✗ Cancelled: "))
        await page.context.close()


async def test_a_control_press_is_not_repeated_as_a_message_and_a_refused_one_never_reads_as_an_answer(
    browser: Any,
) -> None:
    async with web_gateway() as gateway:
        page = await chat_with_every_card(browser, gateway.base_url)
        await chat_cards(gateway)
        form = page.locator(".prompt:not(.settled) form")
        await fill_form(form, "ops@localhost")
        await form.get_by_role("button", name="Submit").click()
        await expect(form.get_by_role("alert")).to_be_visible()
        async with gateway.client() as person:  # the next item logged after the refused press
            await chat_message(person, "cards", "a word after it")
        await expect(page.locator(".item.person .bubble").last).to_have_text("a word after it")
        bubbles = await page.locator(".item.person .bubble").all_inner_texts()
        assert not [text for text in bubbles if "Project name" in text]
        await page.context.close()


async def test_a_value_not_taken_is_tied_to_its_field_said_in_words_and_focused(browser: Any) -> None:
    async with web_gateway() as gateway:
        page = await chat_with_every_card(browser, gateway.base_url)
        await chat_cards(gateway)
        form = page.locator(".prompt:not(.settled) form")
        await fill_form(form, "ops@localhost")
        await form.get_by_role("button", name="Submit").click()
        contact = form.get_by_label("Contact email")
        await expect(contact).to_have_attribute("aria-invalid", "true")
        await expect(contact).to_be_focused()
        described = await contact.get_attribute("aria-describedby") or ""
        problem = page.locator(f"#{described.split()[-1]}")
        await expect(problem).to_have_text("Contact email must be an email address like name@example.com")
        await expect(form.get_by_label("Project name")).not_to_have_attribute("aria-invalid", "true")
        await page.context.close()


def core_problems() -> list[str]:
    """The validator's own sentences for every constraint it names in brackets."""
    schema = check_schema(
        {
            "type": "object",
            "properties": {
                "n": {"type": "integer", "minimum": 1, "maximum": 5},
                "s": {"type": "string", "minLength": 3, "maxLength": 4},
                "a": {"type": "array", "items": {"enum": ["x", "y", "z"]}, "minItems": 2, "maxItems": 2},
                "w": {"type": "integer"},
            },
        }
    )
    n, s, a, w = schema
    said = [check_value(n, 0), check_value(n, 9), check_value(s, "ab"), check_value(s, "abcde")]
    said += [check_value(a, ["x"]), check_value(a, ["x", "y", "z"]), check_value(w, 1.5)]
    return [problem for problem in said if problem] + list(PROBLEMS.values())


async def test_the_validators_constraint_names_are_said_in_peoples_words(browser: Any) -> None:
    async with web_gateway() as gateway:
        page = await new_page(browser)
        await page.goto(f"{gateway.base_url}/chat/words")
        problems = core_problems()
        said = await page.evaluate("(problems) => problems.map(inPlainWords)", problems)
        assert len(said) == len(problems) == 11
        assert [text for text in said if "(" in text or "maxItems" in text or "format" in text] == []
        assert "must pick at most 2" in said
        assert "must be an email address like name@example.com" in said
        assert "must be a web address like https://example.com" in said
        await page.context.close()


async def test_a_name_the_chat_cannot_take_says_what_to_fix(browser: Any) -> None:
    async with web_gateway() as gateway:
        page = await new_page(browser)
        await page.goto(f"{gateway.base_url}/chat/names")
        name = page.get_by_label("Your name")
        await name.fill("bob smith")
        await page.get_by_role("button", name="Join").click()
        message = await name.evaluate("(input) => input.validationMessage")
        assert (
            message
            == "Use letters, digits, dots, dashes or underscores only (no spaces), like alice or bob.smith."
        )
        await expect(page.locator("#composer")).to_be_hidden()
        await name.fill("bob.smith")
        assert await name.evaluate("(input) => input.validationMessage") == ""
        await page.context.close()


async def test_the_inbox_says_how_long_ago_a_prompt_was_asked_with_the_full_time_on_hover(
    browser: Any,
) -> None:
    async with web_gateway() as gateway:
        await inbox_cards(gateway)
        inbox = await new_page(browser)
        await inbox.goto(f"{gateway.base_url}/inbox#token={OPERATOR_TOKEN}&as=web%3Aalice")
        asked = inbox.locator(".card .meta time").first
        await expect(asked).to_have_text(re.compile(r"^(now|this minute|\d+ min\. ago)$"))
        expires = inbox.locator(".card .meta time").nth(1)
        await expect(expires).to_have_text(re.compile(r"^in \d+ (days|hr\.)$"))
        full = await asked.evaluate("(time) => new Date(time.dateTime).toLocaleString()")
        await expect(asked).to_have_attribute("title", full)
        await inbox.context.close()


async def test_a_new_inbox_tab_says_where_to_find_its_token(browser: Any) -> None:
    async with web_gateway() as gateway:
        inbox = await new_page(browser)
        await inbox.goto(f"{gateway.base_url}/inbox")
        hint = inbox.locator("#token-hint")
        await expect(hint).to_contain_text("THREADGATE_API_TOKENS")
        await expect(hint).to_contain_text("threadgate demo")
        await expect(inbox.get_by_label("Operator token")).to_have_attribute("aria-describedby", "token-hint")
        await inbox.context.close()


async def test_the_chat_announces_a_short_summary_not_the_whole_card(browser: Any) -> None:
    async with web_gateway() as gateway, gateway.client(AGENT_AUTH) as agent:
        page = await chat_with_every_card(browser, gateway.base_url)
        assert await page.locator("#log").get_attribute("aria-live") is None
        run = await start_run(agent, "cards")
        await raise_prompt(agent, run["run_id"], **KINDS["single"])
        announcer = page.locator("#announcer")
        await expect(announcer).to_have_text("Question: Deploy where?")
        await say(page, "1")
        await expect(announcer).to_have_text("✓ Answered by web:alice: staging")
        await page.context.close()


async def test_the_inbox_announces_new_and_settled_prompts_politely(browser: Any) -> None:
    async with web_gateway() as gateway, gateway.client(AGENT_AUTH) as agent:
        inbox = await new_page(browser)
        await inbox.goto(f"{gateway.base_url}/inbox#token={OPERATOR_TOKEN}&as=web%3Aalice")
        await expect(inbox.locator("#status")).to_have_text("live")
        announcer = inbox.locator("#announcer[aria-live=polite]")
        run = await start_run(agent, "told")
        await raise_prompt(agent, run["run_id"])
        await expect(announcer).to_have_text("New approval from ops in web:told. 1 pending.")
        async with gateway.client() as person:
            await chat_message(person, "told", "no")
        await expect(announcer).to_have_text("✗ Denied by web:alice: no. 0 pending.")
        await inbox.context.close()
