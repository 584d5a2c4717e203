"""The Telegram channel: posts thread items with the Bot API and feeds people's messages to the core.

Updates arrive by long polling (held by one process per bot token through a lease) or, with
``TELEGRAM_WEBHOOK_URL`` set, at ``POST /telegram/webhook`` on every process.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import OrderedDict
from contextvars import ContextVar
from typing import Any

from starlette.routing import BaseRoute
from telegram import Bot, Update
from telegram.error import InvalidToken, TelegramError
from telegram.request import HTTPXRequest

from channels.telegram.controls import prompt_messages
from channels.telegram.forms import StepView
from channels.telegram.forms import messages as step_messages
from channels.telegram.inbound import (
    ALLOWED_UPDATES,
    BotIdentity,
    Incoming,
    address_of,
    identity_of,
    normalize,
)
from channels.telegram.polling import POLL_TIMEOUT_S, Poller
from channels.telegram.presses import ACK_DEADLINE_S, Presses
from channels.telegram.render import Outgoing, fit_tail, render_item, settled_text, user_id, votes_message
from channels.telegram.send import MAX_INLINE_WAIT_S, Sender, safe_text
from channels.telegram.threads import start_thread as start_session_thread
from channels.telegram.updates import log_unreadable, read_update
from channels.telegram.webhook import check_secret, webhook_route
from gateway.sdk import (
    ChannelContext,
    ChannelError,
    Lease,
    MessageRef,
    Names,
    Outcome,
    PromptView,
    Retry,
    ThreadItem,
    ThreadRef,
    cancel_and_wait,
    event,
    lease_name,
    notices,
    parse_thread_id,
    steps,
)

DEFAULT_BASE_URL = "https://api.telegram.org/bot"
REMEMBERED = 10_000
STOP_TIMEOUT_S = 10.0
IDENTITY_RETRY = Retry(base_s=1.0, max_s=60.0)

# The message being handled right now, so a private notice can answer it: (thread id, sender, message id).
_handling: ContextVar[tuple[str, str, int] | None] = ContextVar("telegram_handling", default=None)


class _Recent(OrderedDict[str, int]):
    """A bounded map from recent keys to Telegram message ids (reply anchors; losing one is harmless)."""

    def remember(self, key: str, message_id: int) -> None:
        self[key] = message_id
        self.move_to_end(key)
        if len(self) > REMEMBERED:
            self.popitem(last=False)


def file_url_for(base_url: str) -> str:
    """python-telegram-bot's file URL beside a ``…/bot`` API URL."""
    head, _sep, tail = base_url.rstrip("/").rpartition("/")
    return f"{head}/file/{tail}" if head else base_url


class TelegramChannel:
    """Telegram chats and forum topics as threads (``telegram:<chat_id>[:<topic_id>]``)."""

    platform = "telegram"

    def __init__(
        self,
        token: str,
        *,
        base_url: str = DEFAULT_BASE_URL,
        webhook_url: str | None = None,
        webhook_secret: str | None = None,
        poll_timeout: int = POLL_TIMEOUT_S,
        accept_bots: bool = False,
        max_inline_wait: float = MAX_INLINE_WAIT_S,
        press_ack_deadline: float = ACK_DEADLINE_S,
    ) -> None:
        if webhook_url is not None:
            if webhook_secret is None:
                raise ValueError(
                    "TELEGRAM_WEBHOOK_URL is set but TELEGRAM_WEBHOOK_SECRET is not: set a secret so the "
                    "gateway can tell Telegram's webhook calls from anyone else's"
                )
            check_secret(webhook_secret)
        self._token = token
        self.webhook_url = webhook_url
        self._webhook_secret = webhook_secret
        self.accept_bots = accept_bots
        self.bot = Bot(
            token,
            base_url=base_url,
            base_file_url=file_url_for(base_url),
            request=HTTPXRequest(connection_pool_size=32, pool_timeout=10.0),
            get_updates_request=HTTPXRequest(connection_pool_size=1),
        )
        self.sender = Sender(self.bot, token, max_inline_wait=max_inline_wait)
        self.presses = Presses(self.sender, ack_deadline=press_ack_deadline)
        self.poll_timeout = poll_timeout
        self.poller: Poller | None = None
        bot_id = token.partition(":")[0]
        self.identity = BotIdentity(user_id=int(bot_id) if bot_id.isdigit() else None)
        self._context: ChannelContext | None = None
        self.lease: Lease | None = None
        self._lease_task: asyncio.Task[None] | None = None
        self._turn_messages = _Recent()  # thread id → the last message queued for the agent there
        self.names = Names()  # of people heard from, to show who answered (else their identity)
        self.identity_retry = IDENTITY_RETRY
        self._known = asyncio.Event()  # set once getMe answered: until then updates wait to be sent again
        self._identity_task: asyncio.Task[None] | None = None

    # Lifecycle -------------------------------------------------------------------------------------

    async def start(self, context: ChannelContext) -> None:
        """Learn who the bot is, then set the webhook, or poll while this process holds the token's lease."""
        await self._learn_identity(fail_on_token=True)
        if not self._known.is_set():
            self._identity_task = asyncio.create_task(
                self._keep_learning(), name="threadgate.telegram.get_me"
            )
        self._context = context
        self.presses.sink = context.sink
        if self.webhook_url is not None:
            await self._set_webhook()
            return
        self.poller = Poller(self.bot, self._token, self._handle_update, poll_timeout=self.poll_timeout)
        self.lease = context.lease(lease_name(self.platform, self._token))
        self._lease_task = asyncio.create_task(self.lease.run(self._poll), name="threadgate.telegram.lease")

    async def stop(self) -> None:
        """Stop polling and give the lease up at once, so another process can take over."""
        if self._identity_task is not None:
            await cancel_and_wait([self._identity_task])
            self._identity_task = None
        if self.poller is not None:
            self.poller.close()
        if self.lease is not None:
            self.lease.stop()
        if self._lease_task is not None:
            done, _ = await asyncio.wait({self._lease_task}, timeout=STOP_TIMEOUT_S)
            if not done:
                self._lease_task.cancel()
                event("telegram.stop_timed_out", logging.WARNING)
        self._context = None
        self.presses.sink = None
        self.lease = self._lease_task = self.poller = None
        with contextlib.suppress(Exception):
            await self.bot.shutdown()

    def routes(self) -> list[BaseRoute]:
        if self.webhook_url is None or self._webhook_secret is None:
            return []
        return [webhook_route(self._webhook_secret, self._handle_json)]

    async def _learn_identity(self, *, fail_on_token: bool = False) -> None:
        try:
            await self.bot.initialize()
        except InvalidToken:
            if fail_on_token:
                raise RuntimeError(
                    "Telegram rejected TELEGRAM_BOT_TOKEN; copy the token again from @BotFather"
                ) from None
            return
        except TelegramError as exc:
            event("telegram.get_me_failed", logging.WARNING, error=safe_text(exc, self._token))
            return
        me = self.bot.bot
        self.identity = BotIdentity(user_id=me.id, username=me.username)
        self._known.set()

    async def _keep_learning(self) -> None:
        """Ask getMe again, with backoff, until it answers: without the bot's username a reply that
        starts with ``@bot`` would be read wrongly, so updates are refused meanwhile (Telegram resends)."""
        failures = 0
        while not self._known.is_set():
            failures += 1
            await asyncio.sleep(self.identity_retry.delay(failures))
            await self._learn_identity()

    async def _set_webhook(self) -> None:
        assert self.webhook_url is not None
        try:
            await self.bot.set_webhook(
                self.webhook_url, secret_token=self._webhook_secret, allowed_updates=list(ALLOWED_UPDATES)
            )
        except TelegramError as exc:
            event("telegram.set_webhook_failed", logging.WARNING, error=safe_text(exc, self._token))
        else:
            event("telegram.webhook.set")

    async def _poll(self, fence: int) -> None:
        """The lease's work: this process is the token's only poller while it runs."""
        assert self.poller is not None
        # Nothing is fetched, so nothing confirmed, before the bot is known.
        if await self.poller.until(self._known):
            await self.poller.run(fence)

    # Inbound ---------------------------------------------------------------------------------------

    async def _handle_json(self, data: dict[str, Any]) -> bool:
        if self._context is None or not self._known.is_set():  # 503: Telegram sends it again
            return False
        update = read_update(data, self.bot)
        if update is not None:  # an unreadable one is acknowledged: sent again, it would read no better
            await self._handle_update(update)
        return True

    async def _handle_update(self, update: Update) -> None:
        """A press of a prompt's button, or a person's message, goes to the core; everything else (bots,
        service messages) is ignored."""
        context = self._context
        person = update.effective_user
        if person is not None and not person.is_bot:
            self.names.learn(identity_of(person), person.full_name)
        if context is not None and update.callback_query is not None:
            await self.presses.on_press(update.callback_query)
            return
        try:
            incoming = normalize(update, self.identity, accept_bots=self.accept_bots)
        except Exception as exc:  # a shape the library let through (a message without its chat)
            log_unreadable(update.update_id, exc)
            return
        if context is None or incoming is None:
            return
        received = await self._receive(context, incoming)
        if received is None:  # it answered a text request
            return
        if received in (Outcome.QUEUED, Outcome.SUPERSEDED):  # it runs as the next turn's message
            self._turn_messages.remember(incoming.message.thread_id, incoming.message_id)
        event("telegram.inbound", thread_id=incoming.message.thread_id, outcome=received.value)

    async def _tell(self, incoming: Incoming, text: str) -> None:
        thread = parse_thread_id(incoming.message.thread_id)
        try:
            await self.sender.send(address_of(thread), Outgoing(text, reply_to=incoming.message_id))
        except ChannelError as exc:  # the refusal stands; handling the update again would not help
            event("notice.failed", logging.WARNING, thread_id=thread.thread_id, error=str(exc))

    async def _receive(self, context: ChannelContext, incoming: Incoming) -> Outcome | None:
        """Hand a person's message to the core, once: None when it answered one of our text requests (a
        refusal said in reply to it), else what became of it as a typed message."""
        message = incoming.message
        token = _handling.set((message.thread_id, message.sender, incoming.message_id))
        try:
            replied = await self.presses.on_reply(incoming)
            if replied is None:
                return (await context.sink.receive(message)).outcome
        finally:
            _handling.reset(token)
        if replied.status is not steps.Status.TYPED:
            if replied.refused:
                await self._tell(incoming, replied.notice)
            return None
        assert replied.outcome is not None  # a typed message is always received
        return replied.outcome

    # Outbound --------------------------------------------------------------------------------------

    async def post(self, thread: ThreadRef, item: ThreadItem) -> MessageRef:
        """Post an item; a prompt (with its buttons on its last message, whose id is returned) answers
        the message that started the turn, an audit item the prompt's message. In a group the prompt's
        question asks for a reply and its buttons follow on a message of their own."""
        reply_to: int | None = None
        if item.type == "pending_prompt":
            reply_to = self._turn_messages.get(thread.thread_id)
        elif item.type == "pending_prompt_resolved":
            reply_to = _message_id(item.metadata.get("prompt_message_id"))
        address = address_of(thread)
        parts = self._messages(item, reply_to, group=address.is_group, by=self._answered_by(item))
        sent = [await self.sender.send(address, part) for part in parts]
        return MessageRef(thread.thread_id, str(sent[-1]))

    def _answered_by(self, item: ThreadItem) -> str | None:
        return notices.answered_by(item, self.names.shown)

    def _messages(
        self, item: ThreadItem, reply_to: int | None, *, group: bool, by: str | None = None
    ) -> list[Outgoing]:
        """A pending question, form or URL step with its buttons; an approval's votes as one line, people
        by name where this process heard from them; anything else as its text (an audit item ending with
        who answered, ``by``)."""
        votes = votes_message(item, self.names.shown)
        if votes is not None:
            return [votes]
        if item.type == "pending_prompt":
            view = PromptView.of_metadata(item.metadata)
            if view is not None:
                return prompt_messages(view, reply_to=reply_to, group=group)
            step = StepView.of_metadata(item.metadata, item.text)
            if step is not None:
                return step_messages(step, reply_to=reply_to, group=group)
        return render_item(item, reply_to=reply_to, by=by)

    async def edit(self, ref: MessageRef, item: ThreadItem) -> None:
        """Show a settled prompt's questions, outcome and who answered on the message with its buttons; the
        edit drops the buttons (in a group the question's own message, with its ForceReply, stays as it
        was)."""
        message_id = _message_id(ref.message_id)
        if message_id is None:
            return
        address = address_of(parse_thread_id(ref.thread_id))
        await self.sender.edit(address, message_id, fit_tail(settled_text(item, self._answered_by(item))))

    def mention(self, identity: str) -> str | None:
        """A mention of the person by their user id (a text mention notifies them)."""
        user = user_id(identity)
        return None if user is None else str(user)

    async def start_thread(self, channel: ThreadRef, text: str) -> str:
        """The header goes into the chat or topic named; that chat or topic is the session's thread."""
        return await start_session_thread(self.sender, channel, text)

    async def direct_thread(self, identity: str) -> str | None:
        """The person's private chat with the bot, whose id is their user id. Telegram lets a bot write
        there only once the person has started it: until then a post is refused (403), a permanent
        ChannelError the escalation logs and skips."""
        user = user_id(identity)
        if user is None or user <= 0:
            event("telegram.direct_unavailable", logging.WARNING, identity=identity, reason="not a user id")
            return None
        return f"telegram:{user}"

    async def notify_private(self, thread: ThreadRef, identity: str, text: str) -> None:
        """Telegram has no per-person messages in a group: answer the person's own message, in the thread."""
        handling = _handling.get()
        reply_to = None
        if handling is not None and handling[:2] == (thread.thread_id, identity):
            reply_to = handling[2]
        await self.sender.send(address_of(thread), Outgoing(text, reply_to=reply_to))


def _message_id(value: object) -> int | None:
    """A Telegram message id kept as text (a MessageRef, an item's metadata); None when there is none."""
    if isinstance(value, int):
        return value
    return int(value) if isinstance(value, str) and value.lstrip("-").isdigit() else None


__all__ = ["TelegramChannel"]
