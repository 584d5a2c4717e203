"""The Discord channel: posts thread items over REST, takes people's messages from the gateway."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections import OrderedDict
from typing import Any

import aiohttp
import discord
import yarl
from starlette.routing import BaseRoute

from channels.discord.connection import GatewayConnection, gateway_intents
from channels.discord.controls import PromptControls, prompt_view, tool_call_embed
from channels.discord.errors import channel_error
from channels.discord.forms import FormPrompt
from channels.discord.forms import prompt_view as form_view
from channels.discord.inbound import user_id_of
from channels.discord.presses import DEFAULT_ACK_DEADLINE, PressHandler
from channels.discord.render import (
    DiscordMessage,
    fit_edit,
    item_text,
    mention_id,
    prompt_id_of,
    render_item,
)
from channels.discord.threads import channel_id_of
from channels.discord.threads import start_thread as start_session_thread
from gateway.sdk import (
    ChannelContext,
    ChannelError,
    HandOver,
    InboundMessage,
    InboundSink,
    Lease,
    MessageRef,
    ThreadItem,
    ThreadRef,
    event,
    lease_name,
)

DEFAULT_API_BASE_URL = "https://discord.com/api/v10"
DEFAULT_GATEWAY_URL = "wss://gateway.discord.gg/"
NO_MENTIONS = discord.AllowedMentions.none()


def _notifying(users: tuple[int, ...]) -> discord.AllowedMentions:
    """Mentions Discord acts on: these people's only (none for most messages)."""
    if not users:
        return NO_MENTIONS
    return discord.AllowedMentions(
        everyone=False, roles=False, replied_user=False, users=[discord.Object(user) for user in users]
    )


SEND_ERRORS = (discord.DiscordException, aiohttp.ClientError, OSError, asyncio.TimeoutError)
RECEIVE = HandOver(tries=4, first_delay_s=0.2, max_delay_s=30.0)


def point_discord_py_at(api_base_url: str, gateway_url: str | None) -> None:
    """discord.py keeps its endpoints in class attributes, so they are per process, not per client."""
    discord.http.Route.BASE = api_base_url.rstrip("/")
    discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(gateway_url or DEFAULT_GATEWAY_URL)


class DiscordChannel:
    """Discord text channels, threads and DMs as threads ``discord:<channel_id>``.

    Posting works on every gateway process. The gateway connection that brings people's messages and
    control presses in is held by one process per bot token, under a lease.
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
        ack_deadline: float = DEFAULT_ACK_DEADLINE,
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
        self._presses = PressHandler(ack_deadline=ack_deadline)
        self._connection = GatewayConnection(
            token,
            self._inbox.put_nowait,
            self._presses.handle,
            accept_bots=accept_bots,
            fatal_pause=fatal_pause,
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
        self._presses.sink = context.sink
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
        """Hand one message to the core. Discord never sends a gateway event again once it reached us, so
        the core's hand-over rule applies; the core dedupes on the message id, so a retry is safe."""

        def failed(exc: Exception, attempt: int, outage: bool, retry_in: float | None) -> None:
            level = logging.WARNING if retry_in is not None else logging.ERROR
            event(
                "discord.inbound_failed",
                level,
                thread_id=message.thread_id,
                event_id=message.event_id,
                error=type(exc).__name__,
                store_outage=outage,
                retry_in=retry_in,
            )

        await RECEIVE(lambda: sink.receive(message), failed)

    # Outbound --------------------------------------------------------------------------------------

    async def post(self, thread: ThreadRef, item: ThreadItem) -> MessageRef:
        """Post ``item`` as one or more messages; an audit item replies to its prompt's message.

        A pending prompt's controls (and an approval's tool call) go on its last message, under the whole
        text; that message is the one returned, the one its outcome is edited into later.
        """
        channel_id = channel_id_of(thread)
        doing = f"posting to channel {channel_id}"
        reference = self._reply_target(channel_id, item)
        controls = _controls_of(item)
        parts = render_item(item, channel_id)
        first: int | None = None
        last: int | None = None
        try:
            client = await self._client()
            target = client.get_partial_messageable(channel_id)
            for index, part in enumerate(parts):
                with_controls = controls if index == len(parts) - 1 else None
                sent = await self._send(target, part, reference if first is None else None, with_controls)
                first = sent.id if first is None else first
                last = sent.id
        except SEND_ERRORS as exc:
            raise channel_error(exc, doing) from exc
        assert first is not None and last is not None
        if controls is not None:
            self._remember_prompt(controls.prompt_id, last)
            return MessageRef(thread.thread_id, str(last))
        return MessageRef(thread.thread_id, str(first))

    async def edit(self, ref: MessageRef, item: ThreadItem) -> None:
        """Replace a prompt's message with its outcome and take its controls away (the outbox calls this
        once the prompt settled). The approval's tool call stays, as the record of what was decided."""
        channel_id = channel_id_of(ref.thread_id)
        doing = f"editing message {ref.message_id} in channel {channel_id}"
        try:
            client = await self._client()
            message = client.get_partial_messageable(channel_id).get_partial_message(int(ref.message_id))
            await message.edit(content=fit_edit(item_text(item)), view=None, allowed_mentions=NO_MENTIONS)
        except SEND_ERRORS as exc:
            raise channel_error(exc, doing) from exc

    def mention(self, identity: str) -> str | None:
        """``<@id>``: a reminder notifies the people it names."""
        user = mention_id(identity)
        return None if user is None else f"<@{user}>"

    async def start_thread(self, channel: ThreadRef, text: str) -> str:
        """A header message in the channel and a thread started from it: the agent session's thread."""
        try:
            return await start_session_thread(await self._client(), channel, text)
        except SEND_ERRORS as exc:
            raise channel_error(exc, f"starting a thread in channel {channel.parts[0]}") from exc

    async def direct_thread(self, identity: str) -> str | None:
        """The person's DM channel with the bot (``POST /users/@me/channels``), one thread
        ``discord:<channel_id>``. A person who takes no DMs from the server's members is refused only
        when the copy is posted there (403, code 50007): a permanent ChannelError."""
        user_id = user_id_of(identity)
        if user_id is None:
            event("discord.direct_unavailable", logging.WARNING, identity=identity, reason="not a user id")
            return None
        try:
            dm = await (await self._client()).create_dm(discord.Object(user_id))
        except SEND_ERRORS as exc:
            raise channel_error(exc, f"opening a DM with {identity}") from exc
        return f"discord:{dm.id}"

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
        controls: PromptControls | FormPrompt | None = None,
    ) -> discord.Message:
        # discord.py retries a POST after a 5xx; the nonce makes Discord keep only the first copy.
        options: dict[str, Any] = {
            "nonce": part.nonce or uuid.uuid4().hex[:24],
            "allowed_mentions": _notifying(part.mentions),
        }
        if reference is not None:
            options["reference"] = reference
        view = None
        if isinstance(controls, FormPrompt):
            view = options["view"] = form_view(controls)
        elif controls is not None:
            view = options["view"] = prompt_view(controls)
            if controls.tool_call is not None:
                options["embed"] = tool_call_embed(controls.tool_call)
        try:
            return await target.send(part.content, **options)
        finally:
            if view is not None:
                # Presses are decoded from their custom ids by the gateway connection (of whichever
                # process holds it), so this REST client need not keep the view listening.
                view.stop()

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
        """The prompt's message, for its audit item or its votes line, when this process posted it."""
        if item.type == "pending_prompt_resolved":
            prompt_id = prompt_id_of(item)
        elif item.metadata.get("type") == "votes":
            prompt_id = item.metadata.get("prompt_id")
        else:
            return None
        message_id = self._prompt_messages.get(prompt_id if isinstance(prompt_id, str) else "")
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


def _controls_of(item: ThreadItem) -> PromptControls | FormPrompt | None:
    """A pending prompt's native controls: buttons and menus for questions, or a form's or URL step's."""
    if item.type != "pending_prompt":
        return None
    return PromptControls.of(item.metadata) or FormPrompt.of_metadata(item.metadata)
