"""The inbox as an installable app with Web Push, in a real browser: its manifest and service worker, a
push message shown as a notification that names the prompt (pushed through Chromium's DevTools protocol,
as a push service would), and a notification's address bringing that prompt's card into view."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from playwright.async_api import expect

from gateway.base import vapid
from gateway.store import keys
from tests.fakes.oidc import FakeOidcProvider
from tests.web.conftest import (
    AGENT_AUTH,
    raise_prompt,
    screenshot_path,
    start_run,
    web_gateway,
)
from tests.web.pages import PHONE, new_page

PRIVATE, PUBLIC = vapid.new_pair()
CALL = {"name": "db__drop", "arguments": {"database": "staging"}}


async def _registration_id(cdp: Any) -> str:
    """The service worker registration's id, as DevTools reports it."""
    found: asyncio.Future[str] = asyncio.get_running_loop().create_future()

    def seen(params: dict[str, Any]) -> None:
        for registration in params.get("registrations", []):
            if not registration.get("isDeleted") and not found.done():
                found.set_result(registration["registrationId"])

    cdp.on("ServiceWorker.workerRegistrationUpdated", seen)
    await cdp.send("ServiceWorker.enable")
    return await asyncio.wait_for(found, 10)


async def test_a_push_becomes_a_notification_and_its_address_opens_the_prompt(
    browser: Any, idp: FakeOidcProvider, tmp_path: Path
) -> None:
    settings = idp.gateway_settings(
        threadgate_vapid_private_key=PRIVATE, threadgate_vapid_subject="mailto:ops@example.com"
    )
    async with web_gateway(**settings) as gateway, gateway.client(AGENT_AUTH) as agent:
        await gateway.runtime.store.redis.sadd(keys.approvers("ops"), "person:carol")
        run = await start_run(agent, "push", started_by="web:someone-else")
        await raise_prompt(agent, run["run_id"], tool_call={"name": "Bash", "arguments": {"command": "ls"}})
        wanted = await raise_prompt(
            agent, (await start_run(agent, "push2", started_by="web:x"))["run_id"], tool_call=CALL
        )

        inbox = await new_page(browser, PHONE)  # as on a phone, where the docs' pictures are taken
        await inbox.context.grant_permissions(["notifications"], origin=gateway.base_url)
        await inbox.goto(f"{gateway.base_url}/inbox#prompt={wanted['prompt_id']}")
        await expect(inbox.locator("#who")).to_have_text("signed in as Carol C.")
        card = inbox.locator(f".card[data-prompt-id='{wanted['prompt_id']}']")
        await expect(card).to_have_class("card wanted")
        await expect(inbox.locator(".card.wanted")).to_have_count(1)
        await expect(inbox.get_by_role("button", name="Notify this device")).to_be_visible()
        await inbox.screenshot(path=screenshot_path("phone-inbox-opened.png", tmp_path))

        manifest = await inbox.evaluate(
            "fetch(document.querySelector('link[rel=manifest]').href).then((r) => r.json())"
        )
        assert (manifest["start_url"], manifest["display"]) == ("/inbox", "standalone")
        scope = await inbox.evaluate("navigator.serviceWorker.ready.then((r) => r.scope)")
        assert scope == f"{gateway.base_url}/"

        cdp = await inbox.context.new_cdp_session(inbox)
        registration = await _registration_id(cdp)
        payload = {
            "title": "ops asks",
            "body": "Approve db__drop?",
            "tag": wanted["prompt_id"],
            "url": f"/inbox#prompt={wanted['prompt_id']}",
        }
        await cdp.send(
            "ServiceWorker.deliverPushMessage",
            {"origin": gateway.base_url, "registrationId": registration, "data": json.dumps(payload)},
        )
        shown: list[dict[str, Any]] = []
        for _ in range(50):
            shown = await inbox.evaluate(
                "navigator.serviceWorker.ready.then((r) => r.getNotifications()).then((ns) => ns.map("
                "(n) => ({title: n.title, body: n.body, tag: n.tag, url: n.data.url})))"
            )
            if shown:
                break
            await asyncio.sleep(0.1)
        assert shown == [{k: payload[k] for k in ("title", "body", "tag", "url")}]
        assert inbox.errors == []  # type: ignore[attr-defined]
        await inbox.context.close()
