"""The Bolt app: verifies Slack's requests and hands message and mention events to one callback.

The same app serves the HTTP Events API (``POST /slack/events``) and Socket Mode. Listeners run before
the acknowledgement (``process_before_response``), so Slack hears 200 only once the message is safe
with the core; a failure answers 500 and Slack delivers the event again (deduplicated by the core).
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import Any

from slack_bolt.async_app import AsyncApp, AsyncBoltContext
from slack_sdk.web.async_client import AsyncWebClient

from channels.slack.inbound import BotIdentity

OnEvent = Callable[[dict[str, Any], str, BotIdentity], Awaitable[None]]


def build_app(client: AsyncWebClient, signing_secret: str | None, on_event: OnEvent) -> AsyncApp:
    """A Bolt app on ``client``. Without a signing secret it serves Socket Mode only (no HTTP route)."""
    app = AsyncApp(
        name="threadgate",
        client=client,
        signing_secret=signing_secret or "",
        request_verification_enabled=signing_secret is not None,
        process_before_response=True,
    )

    async def on_message(event: dict[str, Any], context: AsyncBoltContext) -> None:
        await on_event(event, "message", BotIdentity(context.bot_user_id, context.bot_id))

    async def on_mention(event: dict[str, Any], context: AsyncBoltContext) -> None:
        await on_event(event, "app_mention", BotIdentity(context.bot_user_id, context.bot_id))

    async def on_other() -> None:
        """Other subscribed events are acknowledged, so Slack does not redeliver them."""

    app.event("message")(on_message)
    app.event("app_mention")(on_mention)
    app.event(re.compile(".*"))(on_other)
    return app
