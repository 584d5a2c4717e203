"""Sending to Telegram: short flood waits are waited out inline, everything else becomes a ChannelError."""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import TypeVar

from telegram import (
    Bot,
    ForceReply,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    Message,
    MessageEntity,
    ReplyParameters,
    User,
)
from telegram.error import (
    BadRequest,
    ChatMigrated,
    Forbidden,
    InvalidToken,
    RetryAfter,
    TelegramError,
)
from telegram.warnings import PTBDeprecationWarning

from channels.telegram.inbound import ChatAddress
from channels.telegram.render import PLACEHOLDER, Button, Keyboard, Mention, Outgoing
from gateway.sdk import ChannelError, event, redact

MAX_INLINE_WAIT_S = 5.0
MAX_ATTEMPTS = 4
MAX_PRESS_ANSWER = 200  # answerCallbackQuery's text limit
NOT_MODIFIED = "message is not modified"
T = TypeVar("T")


def retry_after_seconds(exc: RetryAfter) -> float:
    """The flood wait in seconds, whichever type this version of the library reports it as."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PTBDeprecationWarning)
        value = exc.retry_after
    return value.total_seconds() if isinstance(value, timedelta) else float(value)


def safe_text(exc: BaseException, token: str) -> str:
    """An error's text with the bot token (which can appear in request URLs) masked."""
    return redact(str(exc).replace(token, "***")) if token else redact(str(exc))


def channel_error(exc: TelegramError, token: str) -> ChannelError:
    """A library error as a ChannelError that says what to fix; permanent when retrying cannot help."""
    detail = safe_text(exc, token)
    if isinstance(exc, RetryAfter):
        seconds = retry_after_seconds(exc)
        return ChannelError(f"Telegram asked to wait {seconds:g} s before sending again", retry_after=seconds)
    if isinstance(exc, ChatMigrated):
        return ChannelError(
            f"this group became a supergroup; use thread telegram:{exc.new_chat_id} from now on",
            permanent=True,
        )
    if isinstance(exc, Forbidden):
        return ChannelError(f"the bot may not post in this chat ({detail})", permanent=True)
    if isinstance(exc, InvalidToken):
        return ChannelError("Telegram rejected TELEGRAM_BOT_TOKEN; check it with @BotFather", permanent=True)
    if isinstance(exc, BadRequest):
        return ChannelError(f"Telegram refused the message ({detail})", permanent=True)
    return ChannelError(f"Telegram could not be reached ({detail})")


class Sender:
    """Sends and edits messages with ``bot``, waiting out flood-control waits of up to
    ``max_inline_wait`` seconds."""

    def __init__(self, bot: Bot, token: str, *, max_inline_wait: float = MAX_INLINE_WAIT_S) -> None:
        self.bot = bot
        self._token = token
        self.max_inline_wait = max_inline_wait

    async def _call(self, chat_id: int | str, call: Callable[[], Awaitable[T]]) -> T:
        for attempt in range(1, MAX_ATTEMPTS + 1):
            try:
                return await call()
            except RetryAfter as exc:
                wait = retry_after_seconds(exc)
                if wait > self.max_inline_wait or attempt == MAX_ATTEMPTS:
                    raise channel_error(exc, self._token) from None
                event("telegram.flood_wait", chat_id=chat_id, retry_after=wait, attempt=attempt)
                await asyncio.sleep(wait)
            except TelegramError as exc:
                raise channel_error(exc, self._token) from None
        raise AssertionError("unreachable: the last attempt returns or raises")

    async def send(self, address: ChatAddress, outgoing: Outgoing) -> int:
        """Send one message; its Telegram message id. Raises ChannelError when it cannot be sent."""
        markup: InlineKeyboardMarkup | ForceReply | None = inline_markup(outgoing.keyboard)
        if outgoing.force_reply:
            markup = ForceReply(selective=True, input_field_placeholder=PLACEHOLDER)

        async def call() -> Message:
            return await self.bot.send_message(
                chat_id=address.chat_id,
                text=outgoing.text,
                message_thread_id=address.topic_id,
                reply_parameters=_reply_to(outgoing.reply_to),
                reply_markup=markup,
                entities=_mentions(outgoing.mention, *outgoing.named),
            )

        return (await self._call(address.chat_id, call)).message_id

    async def edit(
        self, address: ChatAddress, message_id: int, text: str, keyboard: Keyboard | None = None
    ) -> None:
        """Replace a message's text and buttons (no ``keyboard``: the buttons go). An edit that changes
        nothing is not an error."""

        async def call() -> object:
            return await self.bot.edit_message_text(
                text=text,
                chat_id=address.chat_id,
                message_id=message_id,
                reply_markup=inline_markup(keyboard),
            )

        await self._unless_unchanged(address, call)

    async def edit_keyboard(self, address: ChatAddress, message_id: int, keyboard: Keyboard) -> None:
        """Replace a message's buttons, keeping its text."""

        async def call() -> object:
            return await self.bot.edit_message_reply_markup(
                chat_id=address.chat_id, message_id=message_id, reply_markup=inline_markup(keyboard)
            )

        await self._unless_unchanged(address, call)

    async def _unless_unchanged(self, address: ChatAddress, call: Callable[[], Awaitable[object]]) -> None:
        try:
            await self._call(address.chat_id, call)
        except ChannelError as exc:
            if NOT_MODIFIED not in str(exc).lower():
                raise

    async def answer_press(self, query_id: str, text: str, *, alert: bool = False) -> None:
        """Answer a button press (``answerCallbackQuery``): a toast, or an alert the person dismisses."""

        async def call() -> bool:
            return await self.bot.answer_callback_query(
                query_id, text=text[:MAX_PRESS_ANSWER] or None, show_alert=alert
            )

        await self._call(query_id, call)


def inline_markup(keyboard: Keyboard | None) -> InlineKeyboardMarkup | None:
    if keyboard is None:
        return None
    return InlineKeyboardMarkup([[_inline_button(button) for button in row] for row in keyboard])


def _inline_button(button: Button) -> InlineKeyboardButton:
    """A link button opens its URL; any other sends its callback data (a button has exactly one)."""
    if button.url is not None:
        return InlineKeyboardButton(button.text, url=button.url)
    return InlineKeyboardButton(button.text, callback_data=button.data)


def _mentions(*mentions: Mention | None) -> list[MessageEntity] | None:
    entities = [
        MessageEntity(
            MessageEntity.TEXT_MENTION,
            mention.offset,
            mention.length,
            user=User(id=mention.user_id, first_name=mention.first_name, is_bot=False),
        )
        for mention in mentions
        if mention is not None
    ]
    return entities or None


def _reply_to(message_id: int | None) -> ReplyParameters | None:
    if message_id is None:
        return None
    return ReplyParameters(message_id=message_id, allow_sending_without_reply=True)
