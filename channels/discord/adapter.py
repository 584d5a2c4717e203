"""The Discord channel: posts thread items over REST, takes people's messages from the gateway."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections import OrderedDict

import aiohttp
import discord
import yarl
from starlette.routing import BaseRoute

from channels.discord.connection import GatewayConnection, gateway_intents
from channels.discord.errors import channel_error
from channels.discord.inbound import user_id_of
from channels.discord.render import DiscordMessage, prompt_id_of, render_item
from gateway.channel import ChannelContext, ChannelError, InboundSink, MessageRef
from gateway.errors import GatewayError
from gateway.ids import ThreadRef
from gateway.lease import Lease, lease_name
from gateway.logs import event
from gateway.models import InboundMessage, ThreadItem

DEFAULT_API_BASE_URL = "https://discord.com/api/v10"
DEFAULT_GATEWAY_URL = "wss://gateway.discord.gg/"
NO_MENTIONS = discord.AllowedMentions.none()
SEND_ERRORS = (discord.DiscordException, aiohttp.ClientError, OSError, asyncio.TimeoutError)
RECEIVE_RETRY_DELAYS = (0.2, 1.0, 5.0)


def point_discord_py_at(api_base_url: str, gateway_url: str | None) -> None:
    """discord.py keeps its endpoints in class attributes, so they are per process, not per client."""
    discord.http.Route.BASE = api_base_url.rstrip("/")
    discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(gateway_url or DEFAULT_GATEWAY_URL)


class DiscordChannel:
    """Discord text channels, threads and DMs as threads ``discord:<channel_id>``.

    Posting works on every gateway process. The gateway connection that brings people's messages in is
    held by one process per bot token, under a lease.
    """

    platform = "discord"

    def __init__(
        self,
        token: str,
        *,
        api_base_url: str = DEFAULT_API_BASE_URL,
        gateway_url: str | None = None,
        accept_bots: bool = False,
        inline_rate_limit_wait: float = 5.0,
        fatal_pause: float = 60.0,
        remembered_prompts: int = 1000,
    ) -> None:
        self._token = token
        self._api_base_url = api_base_url
        self._gateway_url = gateway_url
        self._inline_rate_limit_wait = inline_rate_limit_wait
        self._remembered_prompts = remembered_prompts
        self._prompt_messages: OrderedDict[str, int] = OrderedDict()
        self._rest: discord.Client | None = None
        self._login_lock = asyncio.Lock()
        self._inbox: asyncio.Queue[InboundMessage] = asyncio.Queue()
        self._connection = GatewayConnection(
            token, self._inbox.put_nowait, accept_bots=accept_bots, fatal_pause=fatal_pause
        )
        self._lease: Lease | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._stopped = False

    def routes(self) -> list[BaseRoute]:
        """None: Discord comes in over the gateway connection, not HTTP."""
        return []

    # Lifecycle -------------------------------------------------------------------------------------

    async def start(self, context: ChannelContext) -> None:
        """Start handing inbound messages to the core, and hold the gateway connection when leased."""
        point_discord_py_at(self._api_base_url, self._gateway_url)
        self._connection.stopping.clear()
        self._stopped = False
        self._lease = context.lease(lease_name(self.platform, self._token))
        self._tasks = [
            asyncio.create_task(self._consume(context.sink), name="threadgate.discord.inbound"),
            asyncio.create_task(self._lease.run(self._connection.run), name="threadgate.discord.gateway"),
        ]

    async def stop(self) -> None:
        """Close the gateway session, release the lease, hand over what was received, close REST."""
        consumer, holder = self._tasks or (None, None)
        self._stopped = True
        self._connection.stopping.set()
        if self._lease is not None:
            self._lease.stop()
        if holder is not None:
            with contextlib.suppress(Exception):
                await holder
        if consumer is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._inbox.join(), 5.0)
            consumer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await consumer
        self._tasks = []
        if self._rest is not None:
            await self._rest.close()
            self._rest = None

    async def _consume(self, sink: InboundSink) -> None:
        """Hand messages to the core one at a time, in the order the gateway delivered them."""
        while True:
            message = await self._inbox.get()
            try:
                await self._receive(sink, message)
            finally:
                self._inbox.task_done()

    async def _receive(self, sink: InboundSink, message: InboundMessage) -> None:
        # The core dedupes on the message id, so handing a message over again after a failure is safe.
        for delay in (*RECEIVE_RETRY_DELAYS, None):
            try:
                await sink.receive(message)
                return
            except Exception as exc:
                event(
                    "discord.inbound_failed",
                    logging.WARNING,
                    thread_id=message.thread_id,
                    event_id=message.event_id,
                    error=str(exc),
                    retry_in=delay,
                )
                if delay is None or isinstance(exc, GatewayError):  # the core refused it: retrying won't help
                    return
                await asyncio.sleep(delay)

    # Outbound --------------------------------------------------------------------------------------

    async def post(self, thread: ThreadRef, item: ThreadItem) -> MessageRef:
        """Post ``item`` as one or more messages; an audit item replies to its prompt's message."""
        channel_id = int(thread.parts[0])
        doing = f"posting to channel {channel_id}"
        reference = self._reply_target(channel_id, item)
        first: int | None = None
        try:
            client = await self._client()
            target = client.get_partial_messageable(channel_id)
            for part in render_item(item):
                sent = await self._send(target, part, reference if first is None else None)
                first = sent.id if first is None else first
        except SEND_ERRORS as exc:
            raise channel_error(exc, doing) from exc
        assert first is not None
        prompt_id = prompt_id_of(item)
        if item.type == "pending_prompt" and prompt_id is not None:
            self._remember_prompt(prompt_id, first)
        return MessageRef(thread.thread_id, str(first))

    async def notify_private(self, thread: ThreadRef, identity: str, text: str) -> None:
        """Tell one person by DM; the text never carries the prompt itself."""
        user_id = user_id_of(identity)
        if user_id is None:
            raise ChannelError(f"{identity} is not a Discord identity; cannot send a DM", permanent=True)
        doing = f"sending a DM to {identity}"
        try:
            client = await self._client()
            dm = await client.create_dm(discord.Object(user_id))
            where = "" if str(dm.id) == thread.parts[0] else f"In <#{thread.parts[0]}>: "
            await dm.send(f"{where}{text}", allowed_mentions=NO_MENTIONS)
        except SEND_ERRORS as exc:
            raise channel_error(exc, doing) from exc

    async def _send(
        self,
        target: discord.PartialMessageable,
        part: DiscordMessage,
        reference: discord.MessageReference | None,
    ) -> discord.Message:
        # discord.py retries a POST after a 5xx; the nonce makes Discord keep only the first copy.
        nonce = part.nonce or uuid.uuid4().hex[:24]
        if reference is None:
            return await target.send(part.content, nonce=nonce, allowed_mentions=NO_MENTIONS)
        return await target.send(part.content, nonce=nonce, allowed_mentions=NO_MENTIONS, reference=reference)

    async def _client(self) -> discord.Client:
        """The REST client, logged in on first use (so a Discord outage does not stop the gateway)."""
        if self._stopped:  # what is still owed stays in the outbox for a running process
            raise ChannelError("the Discord channel of this process has stopped")
        async with self._login_lock:
            if self._rest is None:
                # The core may post (its start-up sweep) before start() runs.
                point_discord_py_at(self._api_base_url, self._gateway_url)
                client = discord.Client(intents=gateway_intents())  # never connects; intents are moot
                # Wait out short rate limits inline; longer ones go back to the caller as retry_after.
                # (The constructor argument has a 30 s floor; the attribute does not.)
                client.http.max_ratelimit_timeout = self._inline_rate_limit_wait
                try:
                    await client.login(self._token)
                except BaseException:
                    await client.close()
                    raise
                self._rest = client
            return self._rest

    def _reply_target(self, channel_id: int, item: ThreadItem) -> discord.MessageReference | None:
        """The prompt's message, for its audit item, when this process posted it."""
        if item.type != "pending_prompt_resolved":
            return None
        message_id = self._prompt_messages.get(prompt_id_of(item) or "")
        if message_id is None:
            return None
        return discord.MessageReference(
            message_id=message_id, channel_id=channel_id, fail_if_not_exists=False
        )

    def _remember_prompt(self, prompt_id: str, message_id: int) -> None:
        self._prompt_messages[prompt_id] = message_id
        self._prompt_messages.move_to_end(prompt_id)
        while len(self._prompt_messages) > self._remembered_prompts:
            self._prompt_messages.popitem(last=False)
