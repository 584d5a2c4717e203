"""Turn a Discord message into the core's InboundMessage, or drop it (bots, system messages, no text)."""

from __future__ import annotations

import re

import discord

from channels.discord.threads import thread_id_for
from gateway.sdk import InboundMessage

PEOPLES_MESSAGE_TYPES = frozenset({discord.MessageType.default, discord.MessageType.reply})


def identity_for(user_id: int) -> str:
    return f"discord:{user_id}"


def user_id_of(identity: str) -> int | None:
    """The Discord user id in ``discord:<id>``, or ``None`` for anyone else's identity."""
    platform, _, raw = identity.partition(":")
    return int(raw) if platform == "discord" and raw.isdigit() else None


def without_bot_mention(text: str, bot_id: int) -> str:
    """``@bot 2`` reads as ``2``: a leading mention of the bot is addressing, not part of the answer."""
    return re.sub(rf"^\s*<@!?{bot_id}>\s*", "", text, count=1)


def inbound_message(
    message: discord.Message, *, bot_id: int, accept_bots: bool = False
) -> InboundMessage | None:
    """A person's message as the core sees it; ``None`` for the bot's own, other bots' and system messages."""
    author = message.author
    if author.id == bot_id:
        return None
    if (author.bot or message.webhook_id is not None) and not accept_bots:
        return None
    if message.type not in PEOPLES_MESSAGE_TYPES:
        return None
    text = without_bot_mention(message.content, bot_id)
    if not text.strip():
        return None
    return InboundMessage(
        thread_id=thread_id_for(message.channel.id),
        sender=identity_for(author.id),
        text=text,
        event_id=f"message:{message.id}",
        received_at=message.created_at,
        # A DM, outside any server (a server's channel the client has not cached is a PartialMessageable).
        direct=isinstance(message.channel, discord.DMChannel),
    )
