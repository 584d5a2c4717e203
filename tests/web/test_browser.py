"""In a real browser: the demo chat walks through every prompt kind; the inbox answers and follows live."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from playwright.async_api import Page, expect

from gateway.demo import Demo
from gateway.demo.agent import GOODBYE
from tests.web.cards import EVERY_FIELD, fill_form
from tests.web.conftest import (
    AGENT_AUTH,
    OPERATOR_TOKEN,
    WebGateway,
    raise_prompt,
    screenshot_path,
    start_run,
    web_gateway,
)
from tests.web.pages import PHONE, new_page, open_chat, say


async def echoed(page: Page, count: int) -> str:
    """The agent's ``count``-th echo of an answer (its welcome comes first). Its next words may already be
    there too: the last echo and the goodbye arrive together."""
    said = page.locator(".item.agent .bubble")
    await expect(said.nth(count)).to_be_visible()
    return await said.nth(count).inner_text()


async def test_demo_tour_takes_typed_replies_and_control_answers_and_echoes_them(
    demo: Demo, browser: Any, tmp_path: Path
) -> None:
    page = await open_chat(browser, demo, "alice", PHONE)  # as the quickstart's screenshots show it
    await say(page, "hello")
    prompts = page.locator(".prompt")

    await expect(prompts).to_have_count(1)
    await expect(prompts.nth(0).get_by_label("Tool call")).to_contain_text('"database": "staging"')
    await say(page, "approve")  # typed, as in Slack
    assert await echoed(page, 1) == "Approved by web:alice."
    await expect(prompts.nth(0).locator(".outcome")).to_have_text("✓ Approved by web:alice")

    await expect(prompts).to_have_count(2)
    await expect(prompts.nth(1).get_by_label("Tool call")).to_contain_text('"replicas": 6')
    await say(page, "replicas: 3")  # a typed edit approves the call as edited
    assert await echoed(page, 2) == (
        "Approved by web:alice as edited: I ran deploy with service = api, version = 2.4.0, replicas = 3."
    )

    await expect(prompts).to_have_count(3)
    single = prompts.nth(2)
    await single.get_by_role("radio", name="2. production").check()
    await single.get_by_role("button", name="Send answer").click()
    assert await echoed(page, 3) == "web:alice chose production."

    await expect(prompts).to_have_count(4)
    await say(page, "1 3")  # numbers pick several options of a multi-select
    assert await echoed(page, 4) == "web:alice chose KPI cards and Chart."

    await expect(prompts).to_have_count(5)
    await say(page, "Blue Falcon")
    assert await echoed(page, 5) == 'web:alice answered: "Blue Falcon".'

    await expect(prompts).to_have_count(6)
    form = prompts.nth(5)
    await form.get_by_role("radio", name="2. Postgres").check()
    await form.get_by_role("checkbox", name="1. KPI cards").check()
    await form.get_by_role("checkbox", name="2. Table").check()
    await form.get_by_role("textbox", name="Any preference for visual style?").fill("dark theme")
    await form.scroll_into_view_if_needed()
    await page.screenshot(path=screenshot_path("chat.png", tmp_path))
    await form.get_by_role("button", name="Send answer").click()
    assert await echoed(page, 6) == (
        "web:alice answered: Source = Postgres; Sections = KPI cards, Table; Style = dark theme."
    )
    await expect(form.locator(".outcome")).to_have_text(
        "✓ Answered by web:alice: Postgres · KPI cards, Table · dark theme"
    )

    await expect(prompts).to_have_count(7)
    setup = prompts.nth(6).locator("form")
    await setup.get_by_label("Project name").fill("Orion")
    await setup.get_by_label("Contact email").fill("ops@example.com")
    await setup.get_by_label("Region").select_option(label="Europe (Ireland)")
    await setup.get_by_role("checkbox", name="Chat").check()
    await setup.scroll_into_view_if_needed()
    await page.screenshot(path=screenshot_path("chat-form.png", tmp_path))
    await setup.get_by_role("button", name="Submit").click()
    assert await echoed(page, 7) == (
        "Form from web:alice: project = Orion, contact = ops@example.com, region = eu-west, replicas = 2, "
        "public = no, alerts = chat."
    )

    await expect(prompts).to_have_count(8)
    step = prompts.nth(7)
    await expect(step.get_by_role("link")).to_have_attribute("target", "_blank")
    await step.get_by_role("button", name="Done").click()
    assert await echoed(page, 8) == "web:alice marked the step done."

    await expect(page.locator(".prompt.settled.answered")).to_have_count(8)
    await expect(page.locator(".audit")).to_have_count(0)  # each outcome once: on its card
    await expect(page.locator(".item.agent .bubble").last).to_have_text(GOODBYE)
    assert page.errors == []  # type: ignore[attr-defined]


async def test_answer_from_inbox_goes_through_the_approver_rule_and_shows_in_the_chat(
    demo: Demo, browser: Any, tmp_path: Path
) -> None:
    chat = await open_chat(browser, demo, "alice")
    await say(chat, "hello")
    await expect(chat.locator(".prompt")).to_have_count(1)

    inbox = await new_page(browser, PHONE)  # as the quickstart's screenshot shows it
    await inbox.goto(demo.inbox_url)
    card = inbox.locator(".card")
    await expect(card).to_have_count(1)
    await expect(card.get_by_label("Tool call")).to_contain_text("db__drop")
    await expect(inbox.locator("#count")).to_have_text("1 pending")
    await inbox.locator("body").screenshot(path=screenshot_path("inbox.png", tmp_path))

    await card.get_by_role("button", name="Approve", exact=True).click()
    await expect(card.locator(".outcome")).to_have_text("✓ Approved by web:operator")

    assert await echoed(chat, 1) == "Approved by web:operator."
    await expect(chat.locator(".prompt.settled.answered .outcome")).to_contain_text("✓ Approved by ")
    assert inbox.errors == [] and chat.errors == []  # type: ignore[attr-defined]


async def test_the_chat_card_names_who_answered_from_the_inbox(demo: Demo, browser: Any) -> None:
    chat = await open_chat(browser, demo, "alice")
    await say(chat, "hello")
    await expect(chat.locator(".prompt")).to_have_count(1)
    inbox = await new_page(browser)
    await inbox.goto(demo.inbox_url)
    await inbox.locator(".card").get_by_role("button", name="Approve", exact=True).click()
    await expect(chat.locator(".prompt.settled .outcome")).to_have_text(
        "✓ Approved by web:operator", timeout=3_000
    )


async def test_inbox_shows_new_prompts_and_answers_given_elsewhere_live(demo: Demo, browser: Any) -> None:
    inbox = await new_page(browser)
    await inbox.goto(demo.inbox_url)
    await expect(inbox.locator("#empty")).to_be_visible()
    await expect(inbox.locator("#status")).to_have_text("live")

    chat = await open_chat(browser, demo, "alice")
    await say(chat, "hello")
    await expect(inbox.locator(".card")).to_have_count(1)  # arrived over /v1/events, without a reload
    # The demo asks its next question as soon as this one settles: follow this card by its prompt.
    prompt_id = await inbox.locator(".card").get_attribute("data-prompt-id")
    card = inbox.locator(f'.card[data-prompt-id="{prompt_id}"]')

    await say(chat, "no")  # anything but an affirmative denies
    await expect(card).to_have_class("card settled")
    await expect(card.locator(".outcome")).to_have_text("✗ Denied by web:alice: no")
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
    await card.get_by_role("button", name="Approve", exact=True).click()
    await expect(card.get_by_role("alert")).to_contain_text("web:mallory may not answer this prompt")
    await expect(chat.locator(".prompt.settled")).to_have_count(0)


# Seed 002's flat forms and URL steps in the web chat and the inbox --------------------------------


async def raise_form(gateway: WebGateway, room: str) -> dict[str, Any]:
    async with gateway.client(AGENT_AUTH) as agent:
        run = await start_run(agent, room)
        return await raise_prompt(agent, run["run_id"], **EVERY_FIELD)


async def test_a_flat_form_in_the_web_chat_shows_its_constraints_and_takes_only_what_the_validator_accepts(
    browser: Any,
) -> None:
    async with web_gateway() as gateway:
        prompt = await raise_form(gateway, "forms")
        page = await new_page(browser)
        await page.goto(f"{gateway.base_url}/chat/forms")
        await page.get_by_label("Your name").fill("alice")
        await page.get_by_role("button", name="Join").click()
        form = page.locator(".prompt form")
        await expect(form).to_have_count(1)

        attributes = await form.evaluate(
            """(form) => [...form.querySelectorAll("input, select")].map((input) =>
                [input.name, input.type, input.required, input.min, input.max, input.step,
                 input.minLength, input.maxLength])"""
        )
        assert attributes[:9] == [
            ["project", "text", True, "", "", "", 3, 40],
            ["contact", "email", True, "", "", "", -1, -1],
            ["site", "url", False, "", "", "", -1, -1],
            ["launch", "date", False, "", "", "", -1, -1],
            ["window", "datetime-local", False, "", "", "", -1, -1],
            ["region", "select-one", True, None, None, None, None, None],
            ["replicas", "number", True, "1", "5", "1", -1, -1],
            ["budget", "number", False, "0", "", "any", -1, -1],
            ["public", "checkbox", False, "", "", "", -1, -1],
        ]
        await expect(form.get_by_label("Replicas")).to_have_value("2")  # the schema's default

        await fill_form(form, "ops@localhost")  # the browser takes it; the gateway's validator does not
        await form.get_by_role("button", name="Submit").click()
        await expect(form.get_by_role("alert").last).to_have_text(
            "Not taken: Contact email must be an email address like name@example.com. The form is still open."
        )
        await expect(form.locator(".field[data-property=contact] .problem")).to_be_visible()
        await expect(page.locator(".prompt.settled")).to_have_count(0)

        await form.get_by_label("Contact email").fill("ops@example.com")
        await form.get_by_role("button", name="Submit").click()
        await expect(page.locator(".prompt .outcome")).to_have_text(
            "✓ Answered by web:alice: Project name: Orion · Contact email: ops@example.com · Region: US East "
            "· Replicas: 3 · Public status page: Yes · Alert channels: Pager"
        )
        await expect(page.locator(".prompt.settled")).to_have_count(1)
        async with gateway.client(AGENT_AUTH) as agent:
            settled = (await agent.get(f"/v1/prompts/{prompt['prompt_id']}")).json()
        assert settled["content"] == {
            "project": "Orion",
            "contact": "ops@example.com",
            "region": "us-east",
            "replicas": 3,
            "public": True,
            "alerts": ["pager"],
        }
        assert page.errors == []  # type: ignore[attr-defined]
        await page.context.close()  # its event stream ends before the gateway stops


async def test_a_flat_form_in_the_inbox_answers_through_the_inputs_endpoint(browser: Any) -> None:
    async with web_gateway() as gateway:
        prompt = await raise_form(gateway, "inboxform")
        inbox = await new_page(browser)
        await inbox.goto(f"{gateway.base_url}/inbox#token={OPERATOR_TOKEN}&as=web%3Aalice")
        card = inbox.locator(".card")
        await fill_form(card, "ops@localhost")
        await card.get_by_role("button", name="Submit").click()
        await expect(card.locator(".field[data-property=contact] .problem")).to_have_text(
            "Contact email must be an email address like name@example.com"
        )
        await card.get_by_label("Contact email").fill("ops@example.com")
        await card.get_by_role("button", name="Submit").click()
        await expect(card.locator(".outcome")).to_contain_text(
            "✓ Answered by web:alice: Project name: Orion · Contact email: ops@example.com"
        )
        async with gateway.client(AGENT_AUTH) as agent:
            settled = (await agent.get(f"/v1/prompts/{prompt['prompt_id']}")).json()
        assert settled["content"]["region"] == "us-east"
        assert inbox.errors == []  # type: ignore[attr-defined]
        await inbox.context.close()


async def test_inbox_claims_a_prompt_shows_who_holds_it_and_filters_mine(demo: Demo, browser: Any) -> None:
    chat = await open_chat(browser, demo, "alice")
    await say(chat, "hello")
    await expect(chat.locator(".prompt")).to_have_count(1)
    inbox = await new_page(browser)
    await inbox.goto(demo.inbox_url)
    card = inbox.locator(".card")
    await expect(card.locator(".claim .holder")).to_have_text("Nobody has claimed it")

    await card.get_by_role("button", name="Claim", exact=True).click()
    await expect(card.locator(".claim .holder")).to_contain_text("You are on it until ")
    await say(chat, "approve")  # the run's starter, but the operator holds it now
    await expect(chat.locator("#notice")).to_contain_text("web:operator is on it until ")
    await expect(chat.locator(".prompt.settled")).to_have_count(0)

    await inbox.get_by_role("button", name="Mine").click()
    await expect(card).to_be_visible()
    await card.get_by_role("button", name="Release", exact=True).click()
    await expect(card).to_be_hidden()  # no longer the operator's: "Mine" leaves it out
    await inbox.get_by_role("button", name="Mine").click()
    await expect(card.locator(".claim .holder")).to_have_text("Nobody has claimed it")
    assert inbox.errors == []  # type: ignore[attr-defined]


async def test_the_chat_cards_claim_button_holds_the_prompt_for_the_presser(demo: Demo, browser: Any) -> None:
    chat = await open_chat(browser, demo, "alice")
    await say(chat, "hello")
    card = chat.locator(".prompt")
    await expect(card).to_have_count(1)

    await card.get_by_role("button", name="Claim", exact=True).click()
    await expect(chat.locator("#notice")).to_contain_text("You are on it until ")
    await expect(chat.locator(".item.gateway-notice").last).to_contain_text("web:alice is on it")
    inbox = await new_page(browser)
    await inbox.goto(demo.inbox_url)
    await inbox.locator(".card").get_by_role("button", name="Approve", exact=True).click()
    await expect(inbox.locator(".card").get_by_role("alert")).to_contain_text("claimed by web:alice")
    await expect(chat.locator(".prompt.settled")).to_have_count(0)
    assert chat.errors == []  # type: ignore[attr-defined]
