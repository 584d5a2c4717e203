"""An approval's whole decision in a real browser, in the chat and in the inbox: deny with a reason, approve
with edits checked against the tool's schema, and an approval that needs two approvers."""

from __future__ import annotations

from typing import Any

import httpx
from playwright.async_api import Locator, Page, expect

from gateway.rules import notices
from tests.web.cards import EDIT_CALL, EDIT_SCHEMA, approvers, chat_message
from tests.web.conftest import (
    AGENT_AUTH,
    OPERATOR_TOKEN,
    WebGateway,
    raise_prompt,
    start_run,
    web_gateway,
)
from tests.web.pages import new_page, sign_in

CALL = {"name": "db__drop", "arguments": {"database": "staging"}}


async def chat_as(browser: Any, gateway: WebGateway, room: str, name: str = "alice") -> Page:
    page = await new_page(browser)
    await sign_in(page, f"{gateway.base_url}/chat/{room}", name)
    return page


async def inbox_as(browser: Any, gateway: WebGateway, who: str = "web:alice") -> Page:
    inbox = await new_page(browser)
    await inbox.goto(f"{gateway.base_url}/inbox#token={OPERATOR_TOKEN}&as={who.replace(':', '%3A')}")
    await expect(inbox.locator("#status")).to_have_text("live")
    return inbox


async def seen_by_agent(agent: httpx.AsyncClient, prompt: dict[str, Any]) -> dict[str, Any]:
    seen: dict[str, Any] = (await agent.get(f"/v1/prompts/{prompt['prompt_id']}")).json()
    return seen


async def deny_with_reason(card: Locator, reason: str) -> None:
    toggle = card.get_by_role("button", name="Deny with reason…")
    await toggle.click()
    await expect(toggle).to_have_attribute("aria-expanded", "true")
    box = card.get_by_role("textbox", name="Why deny it? The agent is told.")
    await expect(box).to_be_focused()
    await box.fill(reason)
    await card.get_by_role("button", name="Deny with this reason").click()


# Approve for this session ------------------------------------------------------------------------------


async def test_approve_for_this_session_from_the_chat_grants_the_call_and_the_page_says_so(
    browser: Any,
) -> None:
    async with web_gateway() as gateway, gateway.client(AGENT_AUTH) as agent:
        page = await chat_as(browser, gateway, "session")
        run = await start_run(agent, "session")
        prompt = await raise_prompt(agent, run["run_id"], tool_call=CALL)
        card = page.locator(".prompt")
        await card.get_by_role("button", name=notices.APPROVE_FOR_SESSION).click()
        await expect(card.locator(".outcome")).to_contain_text("Approved by web:alice")
        await expect(page.locator("#notice")).to_contain_text("Revoke it in the inbox")  # once answered
        (grant,) = (await agent.get(f"/v1/runs/{run['run_id']}/grants")).json()["items"]
        await expect(page.locator("#notice")).to_contain_text(grant["grant_id"])
        assert (grant["prompt_id"], grant["match"]) == (prompt["prompt_id"], CALL)
        assert page.errors == []  # type: ignore[attr-defined]
        await page.context.close()


# Deny with a reason -------------------------------------------------------------------------------------


async def test_deny_with_a_reason_from_the_chat_reaches_the_agent_and_the_card_says_it(browser: Any) -> None:
    async with web_gateway() as gateway, gateway.client(AGENT_AUTH) as agent:
        page = await chat_as(browser, gateway, "reason")
        run = await start_run(agent, "reason")
        prompt = await raise_prompt(agent, run["run_id"], tool_call=CALL)
        card = page.locator(".prompt")
        await deny_with_reason(card, "use the staging copy")
        await expect(card.locator(".outcome")).to_have_text("✗ Denied by web:alice: use the staging copy")
        await expect(card.locator(".panel")).to_be_hidden()
        seen = await seen_by_agent(agent, prompt)
        assert (seen["answers"][0]["answer"], seen["note"]) == (["Deny"], "use the staging copy")
        assert page.errors == []  # type: ignore[attr-defined]
        await page.context.close()


async def test_deny_with_a_reason_from_the_inbox_reaches_the_agent_and_the_chat_card_says_it(
    browser: Any,
) -> None:
    async with web_gateway() as gateway, gateway.client(AGENT_AUTH) as agent:
        chat = await chat_as(browser, gateway, "inbox-reason")
        run = await start_run(agent, "inbox-reason")
        prompt = await raise_prompt(agent, run["run_id"], tool_call=CALL)
        inbox = await inbox_as(browser, gateway)
        card = inbox.locator(".card")
        await deny_with_reason(card, "not on a Friday")
        await expect(card.locator(".outcome")).to_have_text("✗ Denied by web:alice: not on a Friday")
        await expect(chat.locator(".prompt .outcome")).to_have_text("✗ Denied by web:alice: not on a Friday")
        assert (await seen_by_agent(agent, prompt))["note"] == "not on a Friday"
        assert inbox.errors == [] and chat.errors == []  # type: ignore[attr-defined]
        await inbox.context.close()
        await chat.context.close()


async def test_typing_on_an_approval_is_explained_and_a_typed_deny_carries_its_words(browser: Any) -> None:
    async with web_gateway() as gateway, gateway.client(AGENT_AUTH) as agent:
        page = await chat_as(browser, gateway, "typed")
        run = await start_run(agent, "typed")
        await raise_prompt(agent, run["run_id"], tool_call=EDIT_CALL, editable=True, input_schema=EDIT_SCHEMA)
        card = page.locator(".prompt")
        await expect(card.locator(".typing")).to_have_text(notices.approval_hint(editable=True))
        async with gateway.client() as person:
            await chat_message(person, "typed", "not now, the build is running")
        await expect(card.locator(".outcome")).to_have_text(
            "✗ Denied by web:alice: not now, the build is running"
        )
        await page.context.close()


# Approve with edits -------------------------------------------------------------------------------------


async def edit_form(card: Locator) -> Locator:
    toggle = card.get_by_role("button", name="Edit and approve…")
    await toggle.click()
    await expect(toggle).to_have_attribute("aria-expanded", "true")
    form = card.locator("form.edit")
    await expect(form.get_by_label("command", exact=True)).to_be_focused()
    return form


async def test_the_edit_form_has_an_input_of_each_arguments_type(browser: Any) -> None:
    async with web_gateway() as gateway, gateway.client(AGENT_AUTH) as agent:
        page = await chat_as(browser, gateway, "types")
        run = await start_run(agent, "types")
        await raise_prompt(agent, run["run_id"], tool_call=EDIT_CALL, editable=True, input_schema=EDIT_SCHEMA)
        form = await edit_form(page.locator(".prompt"))
        kinds = await form.evaluate(
            """(form) => [...form.querySelectorAll(".field")].map((block) => {
                 const input = block.querySelector("input, textarea");
                 return [block.dataset.argument, input.tagName.toLowerCase(), input.type, input.value,
                         input.checked];
               })"""
        )
        assert kinds == [
            ["command", "input", "text", "rm -rf build", False],
            ["timeout", "input", "number", "30", False],
            ["dry_run", "input", "checkbox", "on", True],
            ["env", "textarea", "textarea", '{\n  "STAGE": "ci"\n}', None],
            ["cwd", "input", "text", "", False],
        ]
        await form.get_by_role("button", name="Cancel").click()
        await expect(form).to_be_hidden()
        await expect(page.get_by_role("button", name="Edit and approve…")).to_be_focused()
        await page.context.close()


async def test_edit_and_approve_from_the_chat_shows_a_problem_by_its_argument_then_allows_the_edited_call(
    browser: Any,
) -> None:
    async with web_gateway() as gateway, gateway.client(AGENT_AUTH) as agent:
        page = await chat_as(browser, gateway, "edits")
        run = await start_run(agent, "edits")
        prompt = await raise_prompt(
            agent, run["run_id"], tool_call=EDIT_CALL, editable=True, input_schema=EDIT_SCHEMA
        )
        card = page.locator(".prompt")
        form = await edit_form(card)
        command = form.get_by_label("command", exact=True)
        await command.fill("x" * 41)
        await form.get_by_role("button", name="Approve edited call").click()
        await expect(command).to_have_attribute("aria-invalid", "true")
        await expect(command).to_be_focused()
        problem = page.locator(f"#{(await command.get_attribute('aria-describedby') or '').split()[-1]}")
        await expect(problem).to_contain_text("command: ")
        await expect(problem).to_contain_text("longer than 40 characters")
        await expect(form.get_by_role("alert")).to_contain_text("Not taken: ")
        await expect(page.locator(".prompt.settled")).to_have_count(0)

        await command.fill("rm -rf build/tmp")
        await form.get_by_label("timeout").fill("5")
        await form.get_by_label("dry_run").uncheck()
        await form.get_by_role("button", name="Approve edited call").click()
        await expect(card.locator(".outcome")).to_have_text("✓ Approved by web:alice with edits")
        await expect(card.get_by_label("Allowed call (edited)")).to_contain_text(
            '"command": "rm -rf build/tmp"'
        )
        await expect(card.locator(".allowed-label")).to_have_text("Allowed, edited:")
        allowed = {"command": "rm -rf build/tmp", "timeout": 5, "dry_run": False, "env": {"STAGE": "ci"}}
        seen = await seen_by_agent(agent, prompt)
        assert (seen["tool_call"], seen["approved_call"]) == (
            EDIT_CALL,
            {"name": "Bash", "arguments": allowed},
        )
        assert page.errors == []  # type: ignore[attr-defined]
        await page.context.close()


async def test_edit_and_approve_from_the_inbox_shows_the_apis_problem_by_its_argument_then_allows_it(
    browser: Any,
) -> None:
    async with web_gateway() as gateway, gateway.client(AGENT_AUTH) as agent:
        run = await start_run(agent, "inbox-edits")
        prompt = await raise_prompt(
            agent, run["run_id"], tool_call=EDIT_CALL, editable=True, input_schema=EDIT_SCHEMA
        )
        inbox = await inbox_as(browser, gateway)
        card = inbox.locator(".card")
        form = await edit_form(card)
        env = form.get_by_label("env")
        await env.fill('{"STAGE": ')  # not JSON: said before anything is sent
        await form.get_by_role("button", name="Approve edited call").click()
        await expect(env).to_be_focused()
        await expect(form.locator(".field[data-argument=env] .problem")).to_contain_text(
            "env: Not valid JSON ("
        )
        await env.fill('{"STAGE": 7}')  # JSON, but the schema wants a string
        await form.get_by_role("button", name="Approve edited call").click()
        await expect(form.locator(".field[data-argument=env] .problem")).to_contain_text("env.STAGE: ")
        await expect(env).to_have_attribute("aria-invalid", "true")
        await expect(env).to_be_focused()
        await expect(form.get_by_role("alert")).to_contain_text("The edited arguments do not fit the tool")

        await env.fill('{"STAGE": "prod"}')
        await form.get_by_label("cwd").fill("/srv/app")
        await form.get_by_role("button", name="Approve edited call").click()
        await expect(card.locator(".outcome")).to_have_text("✓ Approved by web:alice with edits")
        await expect(card.get_by_label("Allowed call (edited)")).to_contain_text('"cwd": "/srv/app"')
        allowed = {**EDIT_CALL["arguments"], "env": {"STAGE": "prod"}, "cwd": "/srv/app"}
        assert (await seen_by_agent(agent, prompt))["approved_call"] == {"name": "Bash", "arguments": allowed}
        assert inbox.errors == []  # type: ignore[attr-defined]
        await inbox.context.close()


async def test_an_approval_not_raised_editable_offers_no_edit(browser: Any) -> None:
    async with web_gateway() as gateway, gateway.client(AGENT_AUTH) as agent:
        page = await chat_as(browser, gateway, "plain")
        run = await start_run(agent, "plain")
        await raise_prompt(agent, run["run_id"], tool_call=CALL)
        card = page.locator(".prompt")
        await expect(card.get_by_role("button", name="Deny with reason…")).to_be_visible()
        await expect(card.get_by_role("button", name="Edit and approve…")).to_have_count(0)
        await expect(card.locator(".typing")).to_have_text(notices.approval_hint(editable=False))
        await page.context.close()


# Two approvers ------------------------------------------------------------------------------------------


async def test_a_two_approver_card_in_the_chat_shows_1_of_2_then_settles(browser: Any) -> None:
    async with web_gateway() as gateway, gateway.client(AGENT_AUTH) as agent:
        await approvers(gateway, "web:bob")
        page = await chat_as(browser, gateway, "quorum")
        run = await start_run(agent, "quorum")
        await raise_prompt(agent, run["run_id"], tool_call=CALL, approvals=2)
        card = page.locator(".prompt")
        votes = card.locator(".votes")
        await expect(votes).to_have_text("Approved 0 of 2: nobody yet")
        # No "Approve for this session": a grant is one person's word, and would be refused.
        await expect(card.get_by_role("button", name=notices.APPROVE_FOR_SESSION)).to_have_count(0)
        approve = card.get_by_role("button", name="Approve", exact=True)
        await approve.click()
        await expect(votes).to_have_text("Approved 1 of 2: web:alice")
        await expect(page.locator("#notice")).to_have_text(
            "Your approval was recorded (Approved 1 of 2: web:alice); 1 more needed."
        )
        await approve.click()
        await expect(page.locator("#notice")).to_have_text(notices.ALREADY_VOTED)
        await expect(card).not_to_have_class("settled")
        async with gateway.client() as bob:
            await bob.post("/chat/quorum/messages", json={"name": "bob", "text": "approve"})
        await expect(card.locator(".outcome")).to_have_text("✓ Approved by web:bob")
        await expect(votes).to_have_text("Approved 2 of 2: web:alice, web:bob")
        # The votes were said on the card, not again as a message in the log.
        assert [text for text in await page.locator(".bubble").all_inner_texts() if "of 2" in text] == []
        assert page.errors == []  # type: ignore[attr-defined]
        await page.context.close()


async def test_a_two_approver_card_in_the_inbox_shows_1_of_2_says_already_voted_then_settles(
    browser: Any,
) -> None:
    async with web_gateway() as gateway, gateway.client(AGENT_AUTH) as agent:
        await approvers(gateway, "web:bob")
        run = await start_run(agent, "inbox-quorum")
        prompt = await raise_prompt(agent, run["run_id"], tool_call=CALL, approvals=2)
        inbox = await inbox_as(browser, gateway)
        card = inbox.locator(".card")
        approve = card.get_by_role("button", name="Approve", exact=True)
        await approve.click()
        await expect(card.locator(".votes")).to_have_text("Approved 1 of 2: web:alice")
        await expect(inbox.locator("#count")).to_have_text("1 pending")
        await approve.click()
        await expect(card.get_by_role("alert").first).to_contain_text("web:alice has already voted")
        async with gateway.client() as bob:
            await bob.post("/chat/inbox-quorum/messages", json={"name": "bob", "text": "approve"})
        await expect(card.locator(".outcome")).to_have_text("✓ Approved by web:bob")
        await expect(card.locator(".votes")).to_have_text("Approved 2 of 2: web:alice, web:bob")
        seen = await seen_by_agent(agent, prompt)
        assert [vote["by"] for vote in seen["votes"]] == ["web:alice", "web:bob"]
        assert inbox.errors == []  # type: ignore[attr-defined]
        await inbox.context.close()
