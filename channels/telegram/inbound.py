"""Telegram updates as the core's InboundMessage: thread id, sender identity, text, stable event id."""

from __future__ import annotations

import re
from dataclasses import dataclass

from telegram import MaybeInaccessibleMessage, Message, Update, User

from gateway.sdk import MAX_TEXT_CHARS, InboundMessage, ThreadRef

ALLOWED_UPDATES = ("message", "callback_query")


@dataclass(frozen=True, slots=True)
class ChatAddress:
    """Where a thread lives in Telegram: a chat, and a forum topic inside it."""

    chat_id: int
    topic_id: int | None = None

    @property
    def is_group(self) -> bool:
        """Groups and supergroups have negative chat ids; a private chat's id is the person's."""
        return self.chat_id < 0


@dataclass(frozen=True, slots=True)
class Incoming:
    """A person's message, normalised, with the Telegram message it came from (to reply to it)."""

    message: InboundMessage
    message_id: int
    reply_to_bot: int | None = None  # the bot's message this one replies to (a text control's answer)


@dataclass(frozen=True, slots=True)
class BotIdentity:
    """Who the bot is: its messages are never handled, and a leading ``@username`` is not part of a reply."""

    user_id: int | None = None
    username: str | None = None


def address_of(thread: ThreadRef) -> ChatAddress:
    """``telegram:<chat_id>`` or ``telegram:<chat_id>:<topic_id>`` as a chat address."""
    chat = int(thread.parts[0])
    return ChatAddress(chat, int(thread.parts[1]) if len(thread.parts) > 1 else None)


def thread_id_of(message: Message) -> str:
    """Forum topics are threads of their own; replies and the General topic belong to the chat."""
    if message.is_topic_message and message.message_thread_id:
        return f"telegram:{message.chat.id}:{message.message_thread_id}"
    return f"telegram:{message.chat.id}"


def identity_of(user: User) -> str:
    return f"telegram:{user.id}"


def in_thread(message: MaybeInaccessibleMessage, thread_id: str) -> bool:
    """Whether the pressed message lives in the prompt's thread (only the chat is known of a message
    Telegram no longer shows the bot)."""
    if isinstance(message, Message):
        return thread_id_of(message) == thread_id
    chat = f"telegram:{message.chat.id}"
    return thread_id == chat or thread_id.startswith(f"{chat}:")


def strip_mention(text: str, username: str | None) -> str:
    """``@bot 2`` → ``2``: in groups people often address the bot by name."""
    if not username:
        return text
    pattern = re.compile(rf"^\s*@{re.escape(username)}\b[\s,:]*", re.IGNORECASE)
    return pattern.sub("", text, count=1)


def is_from_person(message: Message, bot: BotIdentity, *, accept_bots: bool = False) -> bool:
    """Only people's messages: never the bot's own, other bots' only when ``accept_bots``, and never
    posts made on behalf of a chat (anonymous admins, channel posts forwarded into a discussion group)."""
    sender = message.from_user
    if sender is None or message.sender_chat is not None or message.is_automatic_forward:
        return False
    if bot.user_id is not None and sender.id == bot.user_id:
        return False
    return accept_bots or not sender.is_bot


def normalize(update: Update, bot: BotIdentity, *, accept_bots: bool = False) -> Incoming | None:
    """The update as an InboundMessage, or None when it is not a person's text message."""
    message = update.message
    if message is None or not is_from_person(message, bot, accept_bots=accept_bots):
        return None
    text = message.text if message.text is not None else message.caption
    if text is None:
        return None
    assert message.from_user is not None
    inbound = InboundMessage(
        thread_id=thread_id_of(message),
        sender=f"telegram:{message.from_user.id}",
        text=strip_mention(text, bot.username)[:MAX_TEXT_CHARS],
        event_id=f"message:{message.message_id}",
        direct=message.chat.type == "private",
    )
    replied = message.reply_to_message
    to_bot = replied is not None and replied.from_user is not None and replied.from_user.id == bot.user_id
    return Incoming(inbound, message.message_id, replied.message_id if replied and to_bot else None)
