"""The Bolt app: verifies Slack's requests and hands message and mention events to one callback.

The same app serves the HTTP Events API (``POST /slack/events``) and Socket Mode. Listeners run before
the acknowledgement (``process_before_response``), so Slack hears 200 only once the message is safe
with the core; a failure that may pass (``Redeliver``: the store, or the bot's identity not known yet)
answers 500 (in Socket Mode: no acknowledgement) and Slack delivers the event again (deduplicated by
the core). An event that cannot be read or handled is logged once and acknowledged: delivered again, it
would fail again.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable
from typing import Any

from slack_bolt.async_app import AsyncApp, AsyncBoltContext
from slack_bolt.error import BoltUnhandledRequestError
from slack_bolt.logger.messages import warning_client_prioritized_and_token_skipped
from slack_bolt.middleware.authorization.async_single_team_authorization import AsyncSingleTeamAuthorization
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.response import BoltResponse
from slack_sdk.web.async_client import AsyncWebClient

from channels.slack.identity import AppIdentity, KnownIdentityAuthorization
from channels.slack.inbound import BotIdentity
from channels.slack.redeliver import Redeliver
from gateway.sdk import event, failure

OnEvent = Callable[[dict[str, Any], str, BotIdentity], Awaitable[None]]
BOLT_LOGGER = "slack_bolt.AsyncApp"


class _SameTokenTwice(logging.Filter):
    """Bolt falls back to ``SLACK_BOT_TOKEN`` from the environment even when it is given a client, then
    warns that this token goes unused; it is the client's own token, so there is nothing to say."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage() != warning_client_prioritized_and_token_skipped()


def event_ref(body: object) -> dict[str, Any]:
    """What names a request in a log line: the event's id, or the kind of interaction. Never content."""
    if not isinstance(body, dict):
        return {}
    ref: dict[str, Any] = {}
    if isinstance(body.get("event_id"), str):
        ref["event_id"] = body["event_id"]
    if isinstance(body.get("type"), str):
        ref["payload_type"] = body["type"]
    return ref


class ThreadgateBoltApp(AsyncApp):
    """Bolt's app, except that the bot's identity comes from ``AppIdentity`` (never an ``auth.test`` per
    request), and that a request Bolt cannot even hand to its error handler (it reads fields such as
    ``actions`` for every handler's arguments) is logged and acknowledged rather than raised."""

    def __init__(self, identity: AppIdentity, **kwargs: Any) -> None:
        self._identity = identity  # read by _init_async_middleware_list, which Bolt's __init__ calls
        super().__init__(**kwargs)

    def _init_async_middleware_list(self, *args: Any, **kwargs: Any) -> None:
        done = self._init_middleware_list_done
        super()._init_async_middleware_list(*args, **kwargs)
        if not done:
            self._async_middleware_list[:] = [
                KnownIdentityAuthorization(self._identity)
                if isinstance(m, AsyncSingleTeamAuthorization)
                else m
                for m in self._async_middleware_list
            ]

    async def async_dispatch(self, req: AsyncBoltRequest) -> BoltResponse:
        try:
            return await super().async_dispatch(req)
        except Exception as exc:
            event("slack.event.unreadable", logging.WARNING, **event_ref(req.body), **failure(exc))
            return BoltResponse(status=200, body="")


async def on_error(error: Exception, body: dict[str, Any]) -> BoltResponse | None:
    """Bolt's error handler, for its own middleware (reading the request) and for the listeners."""
    ref = event_ref(body)
    if isinstance(error, Redeliver):
        event("slack.event.failed", logging.WARNING, **ref, **failure(error.__cause__ or error))
        return None  # Bolt's 500 stands: Slack delivers it again
    if isinstance(error, BoltUnhandledRequestError):
        event("slack.event.unhandled", **ref)
    else:
        event("slack.event.unreadable", logging.WARNING, **ref, **failure(error))
    return BoltResponse(status=200, body="")


def build_app(
    client: AsyncWebClient, signing_secret: str | None, on_event: OnEvent, identity: AppIdentity
) -> AsyncApp:
    """A Bolt app on ``client``, authorized by ``identity``. Without a signing secret it serves Socket Mode
    only (no HTTP route)."""
    bolt_logger = logging.getLogger(BOLT_LOGGER)
    if not any(isinstance(f, _SameTokenTwice) for f in bolt_logger.filters):
        bolt_logger.addFilter(_SameTokenTwice())
    app = ThreadgateBoltApp(
        identity,
        name="threadgate",
        client=client,
        signing_secret=signing_secret or "",
        request_verification_enabled=signing_secret is not None,
        process_before_response=True,
        raise_error_for_unhandled_request=True,  # to on_error, not a warning with the request's body
    )
    app.error(on_error)

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
