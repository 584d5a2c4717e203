"""Sending to Telegram: short flood waits are waited out inline, everything else becomes a ChannelError."""

from __future__ import annotations

import asyncio
import warnings
from datetime import timedelta

from telegram import Bot, ForceReply, ReplyParameters
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
from channels.telegram.render import PLACEHOLDER, Outgoing
from gateway.channel import ChannelError
from gateway.logs import event, redact

MAX_INLINE_WAIT_S = 5.0
MAX_ATTEMPTS = 4


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
    """Posts messages with ``bot``, waiting out flood-control waits of up to ``max_inline_wait`` seconds."""

    def __init__(self, bot: Bot, token: str, *, max_inline_wait: float = MAX_INLINE_WAIT_S) -> None:
        self.bot = bot
        self._token = token
        self.max_inline_wait = max_inline_wait

    async def send(self, address: ChatAddress, outgoing: Outgoing) -> int:
        """Send one message; its Telegram message id. Raises ChannelError when it cannot be sent."""
        for attempt in range(1, MAX_ATTEMPTS + 1):
            try:
                message = await self.bot.send_message(
                    chat_id=address.chat_id,
                    text=outgoing.text,
                    message_thread_id=address.topic_id,
                    reply_parameters=_reply_to(outgoing.reply_to),
                    reply_markup=(
                        ForceReply(selective=True, input_field_placeholder=PLACEHOLDER)
                        if outgoing.force_reply
                        else None
                    ),
                )
                return message.message_id
            except RetryAfter as exc:
                wait = retry_after_seconds(exc)
                if wait > self.max_inline_wait or attempt == MAX_ATTEMPTS:
                    raise channel_error(exc, self._token) from None
                event("telegram.flood_wait", chat_id=address.chat_id, retry_after=wait, attempt=attempt)
                await asyncio.sleep(wait)
            except TelegramError as exc:
                raise channel_error(exc, self._token) from None
        raise AssertionError("unreachable: the last attempt returns or raises")


def _reply_to(message_id: int | None) -> ReplyParameters | None:
    if message_id is None:
        return None
    return ReplyParameters(message_id=message_id, allow_sending_without_reply=True)
