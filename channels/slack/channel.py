"""The Slack channel: posts thread items into Slack threads and hands people's messages to the core."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
from collections import OrderedDict
from typing import Any

from slack_bolt.adapter.starlette.async_handler import AsyncSlackRequestHandler
from slack_sdk.web.async_client import AsyncWebClient
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from channels.slack.calls import MAX_INLINE_WAIT_S, call
from channels.slack.direct import direct_channel
from channels.slack.events import build_app
from channels.slack.identity import AppIdentity
from channels.slack.inbound import BotIdentity, to_inbound
from channels.slack.presses import Presses
from channels.slack.redeliver import Redeliver
from channels.slack.render import SlackMessage, mention, render_item, render_notice, render_settled
from channels.slack.socket import SocketModeLink
from channels.slack.threads import start_thread as start_session_thread
from channels.slack.verify import check_body, is_signed
from gateway.sdk import (
    ChannelContext,
    ChannelError,
    GatewayError,
    Lease,
    MessageRef,
    ThreadItem,
    ThreadRef,
    event,
    lease_name,
    parse_thread_id,
)

DEFAULT_API_URL = "https://slack.com/api/"
EVENTS_PATH = "/slack/events"
MAX_EVENT_BYTES = 1024 * 1024
_PARTIAL_MEMORY = 256
UNSIGNED = GatewayError(
    "UNAUTHORIZED",
    "Missing, stale or wrong X-Slack-Signature: sign with SLACK_SIGNING_SECRET and a current timestamp.",
    401,
)


def _refused(error: GatewayError) -> Response:
    return JSONResponse(error.envelope(), status_code=error.status)


class SlackChannel:
    """Slack over the HTTP Events API (with a signing secret), Socket Mode (with an app token), or both.

    Thread ids are ``slack:<channel>:<thread_ts>``; every item is posted as a reply in that thread. A
    pending prompt carries native controls (``presses``); once it settles its message is edited to show
    the outcome without them.
    """

    platform = "slack"

    def __init__(
        self,
        bot_token: str,
        *,
        signing_secret: str | None = None,
        app_token: str | None = None,
        api_url: str = DEFAULT_API_URL,
        allow_bots: bool = False,
        max_inline_wait: float = MAX_INLINE_WAIT_S,
        ping_interval: float = 10.0,
    ) -> None:
        if signing_secret is None and app_token is None:
            raise ValueError("Slack needs SLACK_SIGNING_SECRET (Events API) or SLACK_APP_TOKEN (Socket Mode)")
        self.client = AsyncWebClient(token=bot_token, base_url=api_url)
        self.signing_secret = signing_secret
        self.app_token = app_token
        self.allow_bots = allow_bots
        self.max_inline_wait = max_inline_wait
        self.identity = AppIdentity(self.client, max_wait=max_inline_wait)
        self.app = build_app(self.client, signing_secret, self._on_event, self.identity)
        self.presses = Presses(self.client, self.notify_private, max_inline_wait=max_inline_wait)
        self.presses.install(self.app)
        self._http = AsyncSlackRequestHandler(self.app)
        self._link = SocketModeLink(self.app, app_token, ping_interval=ping_interval) if app_token else None
        self._context: ChannelContext | None = None
        self._lease: Lease | None = None
        self._lease_task: asyncio.Task[None] | None = None
        self._check_task: asyncio.Task[None] | None = None
        # Parts of a split item already posted when a later part failed: a retry posts only the rest.
        self._partial: OrderedDict[tuple[str, str], list[str]] = OrderedDict()

    # Lifecycle -------------------------------------------------------------------------------------

    async def start(self, context: ChannelContext) -> None:
        """Learn the bot's identity in the background (events are redelivered until it is known); hold the
        Socket Mode connection under a lease if configured."""
        self._context = context
        self.presses.sink = context.sink
        self._check_task = asyncio.create_task(self.identity.resolve(), name="threadgate.slack.auth_test")
        # Slack usually answers at once: wait for its first answer so the first events need no redelivery.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.identity.first_answer.wait(), self.max_inline_wait)
        if self._link is not None and self.app_token is not None:
            self._link.open()
            self._lease = context.lease(lease_name("slack", self.app_token))
            self._lease_task = asyncio.create_task(
                self._lease.run(self._link.hold), name="threadgate.slack.socket_mode"
            )

    async def stop(self) -> None:
        if self._check_task is not None:
            self._check_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._check_task
            self._check_task = None
        if self._lease is not None and self._link is not None:
            self._link.close()
            self._lease.stop()
        if self._lease_task is not None:
            try:
                await asyncio.wait_for(self._lease_task, timeout=10)
            except TimeoutError:
                event("slack.socket.stop_timeout", logging.WARNING)
            self._lease_task = None
        self._lease = None
        await self.presses.stop()
        self.presses.sink = None
        self._context = None

    def routes(self) -> list[BaseRoute]:
        """``POST /slack/events`` when a signing secret is set (Events API and interactivity)."""
        if self.signing_secret is None:
            return []
        return [Route(EVENTS_PATH, self._receive_http, methods=["POST"])]

    # Outbound --------------------------------------------------------------------------------------

    async def post(self, thread: ThreadRef, item: ThreadItem) -> MessageRef:
        """Post ``item`` as a reply in the thread (several messages when it is over Slack's limits).

        The reference is the first message's ts, or for a prompt the message that carries its controls
        (its last), which is the one edited once it settles.
        """
        channel, thread_ts = thread.parts
        key = (thread.thread_id, hashlib.sha256(item.model_dump_json().encode()).hexdigest())
        posted = self._partial.pop(key, [])
        try:
            for message in render_item(item)[len(posted) :]:
                posted.append(await self._post_message(channel, thread_ts, message))
        except ChannelError:
            if posted:
                self._remember_partial(key, posted)
            raise
        return MessageRef(thread.thread_id, posted[-1] if item.type == "pending_prompt" else posted[0])

    async def _post_message(self, channel: str, thread_ts: str, message: SlackMessage) -> str:
        async def send() -> Any:
            return await self.client.chat_postMessage(
                channel=channel,
                thread_ts=thread_ts,
                text=message.text,
                blocks=message.blocks,
                unfurl_links=False,
                unfurl_media=False,
            )

        response = await call("chat.postMessage", send, max_wait=self.max_inline_wait)
        return str(response["ts"])

    async def edit(self, ref: MessageRef, item: ThreadItem) -> None:
        """Replace a settled prompt's message: its text and the outcome, its controls gone."""
        channel = parse_thread_id(ref.thread_id).parts[0]
        message = render_settled(item)

        async def send() -> Any:
            return await self.client.chat_update(
                channel=channel, ts=ref.message_id, text=message.text, blocks=message.blocks
            )

        await call("chat.update", send, max_wait=self.max_inline_wait)

    def _remember_partial(self, key: tuple[str, str], posted: list[str]) -> None:
        self._partial[key] = posted
        while len(self._partial) > _PARTIAL_MEMORY:
            self._partial.popitem(last=False)

    def mention(self, identity: str) -> str | None:
        """``<@U…>``: a reminder notifies the people it names."""
        return mention(identity)

    async def start_thread(self, channel: ThreadRef, text: str) -> str:
        """A top-level message in the channel; the agent session's thread grows from it."""
        return await start_session_thread(self.client, channel, text, max_wait=self.max_inline_wait)

    async def direct_thread(self, identity: str) -> str | None:
        """The app's direct message with ``identity``: a ``D…`` conversation to start a thread in."""
        return await direct_channel(self.client, identity, max_wait=self.max_inline_wait)

    async def notify_private(self, thread: ThreadRef, identity: str, text: str) -> None:
        """An ephemeral message in the thread: only ``identity`` sees it."""
        platform, _, user = identity.partition(":")
        if platform != self.platform or not user:
            raise ChannelError(f"{identity} is not a Slack identity", permanent=True)
        channel, thread_ts = thread.parts
        notice = render_notice(text)

        async def send() -> Any:
            return await self.client.chat_postEphemeral(
                channel=channel, user=user, thread_ts=thread_ts, text=notice.text, blocks=notice.blocks
            )

        await call("chat.postEphemeral", send, max_wait=self.max_inline_wait)

    # Inbound ---------------------------------------------------------------------------------------

    async def _receive_http(self, request: Request) -> Response:
        """Verify Slack's signature on the raw bytes, check the body parses, and only then hand it to Bolt."""
        body = await request.body()
        if len(body) > MAX_EVENT_BYTES:
            return _refused(
                GatewayError("PAYLOAD_TOO_LARGE", f"An event is at most {MAX_EVENT_BYTES} bytes.", 413)
            )
        if self.signing_secret is None or not is_signed(self.signing_secret, request.headers, body):
            return _refused(UNSIGNED)
        try:
            check_body(body, request.headers.get("content-type"))
        except GatewayError as exc:
            return _refused(exc)
        return await self._http.handle(request)

    async def _on_event(self, payload: dict[str, Any], kind: str, bot: BotIdentity) -> None:
        message = to_inbound(payload, kind, bot, allow_bots=self.allow_bots)
        if message is None:
            return
        if self._context is None:  # answered 500: Slack delivers it again once we are up
            raise Redeliver("the Slack channel is not running")
        try:
            received = await self._context.sink.receive(message)
        except GatewayError as exc:
            if exc.status < 500:  # the core refused it: delivered again, it would be refused again
                raise
            raise Redeliver(exc.message) from exc
        except Exception as exc:  # the store is away: Slack delivers it again
            raise Redeliver(type(exc).__name__) from exc
        event("slack.inbound", thread_id=message.thread_id, outcome=received.outcome.value)
