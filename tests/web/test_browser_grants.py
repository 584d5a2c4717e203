"""In a real browser: the inbox approves a call for the rest of the run (widened to its first word, the
pattern shown before it is sent), lists the grant, and revokes it."""

from __future__ import annotations

from typing import Any

from playwright.async_api import expect

from tests.web.conftest import AGENT_AUTH, OPERATOR_TOKEN, start_run, web_gateway
from tests.web.pages import new_page
from tests.web.test_browser_a11y import serious_problems

STATUS = {"name": "Bash", "arguments": {"command": "git status"}}
LOG = {"name": "Bash", "arguments": {"command": "git log"}}


async def test_the_inbox_approves_for_the_session_lists_the_grant_and_revokes_it(browser: Any) -> None:
    async with web_gateway() as gateway, gateway.client(AGENT_AUTH) as agent:
        run = await start_run(agent, "grants")
        approvals = f"/v1/runs/{run['run_id']}/approvals"
        assert (await agent.post(approvals, json={"tool_call": STATUS})).status_code == 201
        inbox = await new_page(browser)
        await inbox.goto(f"{gateway.base_url}/inbox#token={OPERATOR_TOKEN}&as=web%3Aalice")
        card = inbox.locator(".card")
        pattern = card.locator(".for-session code.pattern")
        await expect(pattern).to_have_text('Bash {"command":"git status"}')
        await card.get_by_label("Any git command").check()
        await expect(pattern).to_have_text('Bash {"command":"git *"}')
        assert await serious_problems(inbox) == []  # the session control
        await card.get_by_role("button", name="Approve for this session").click()
        await expect(card.locator(".outcome")).to_have_text(
            "✓ Approved by web:alice, and for this session: `git *`"
        )
        grants = inbox.locator("#grant-list li")
        await expect(grants).to_have_count(1)
        await expect(grants.first).to_contain_text('Bash {"command":"git *"}')
        await expect(grants.first).to_contain_text("by web:alice")
        assert await serious_problems(inbox) == []  # the grant list and the settled card

        allowed = (await agent.post(approvals, json={"tool_call": LOG})).json()
        grant_id = await grants.first.get_attribute("data-grant-id")
        assert allowed == {"decision": "allow", "by": f"grant:{grant_id}"}
        await expect(inbox.locator(".card")).to_have_count(1)  # nobody was asked

        await grants.first.get_by_role("button", name='Revoke Bash {"command":"git *"}').click()
        await expect(inbox.locator("#grants")).to_be_hidden()
        asked = await agent.post(approvals, json={"tool_call": LOG})
        assert asked.status_code == 201
        await expect(inbox.locator(".card")).to_have_count(2)  # asked again, live
        listed = (await agent.get(f"/v1/runs/{run['run_id']}/grants")).json()
        assert listed == {"items": [], "cursor": None}
        assert inbox.errors == []  # type: ignore[attr-defined]
        await inbox.context.close()


async def test_a_pattern_the_gateway_cannot_grant_is_refused_on_the_card(browser: Any) -> None:
    async with web_gateway() as gateway, gateway.client(AGENT_AUTH) as agent:
        run = await start_run(agent, "shell-grant")
        shell = {"name": "Bash", "arguments": {"command": "bash -c make"}}
        prompt = (await agent.post(f"/v1/runs/{run['run_id']}/approvals", json={"tool_call": shell})).json()
        inbox = await new_page(browser)
        await inbox.goto(f"{gateway.base_url}/inbox#token={OPERATOR_TOKEN}&as=web%3Aalice")
        card = inbox.locator(".card")
        await card.get_by_label("Any bash command").check()
        await card.get_by_role("button", name="Approve for this session").click()
        await expect(card.locator(".error")).to_contain_text("runs other commands")
        still = (await agent.get(f"/v1/prompts/{prompt['prompt_id']}")).json()
        assert still["prompt_state"] == "pending"
        await card.get_by_label("Any bash command").uncheck()
        await card.get_by_role("button", name="Approve for this session").click()
        await expect(inbox.locator("#grant-list li")).to_contain_text('Bash {"command":"bash -c make"}')
        await inbox.context.close()
