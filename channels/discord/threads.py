"""Thread ids ``discord:<channel_id>`` and their channels; starting a thread for an agent session."""

from __future__ import annotations

import uuid
from typing import Final, Literal

import discord

from gateway.sdk import ThreadRef

THREAD_NAME_CHARS = 100  # Discord's limit for a thread name
ARCHIVE_AFTER_MINUTES: Final[Literal[10080]] = 10080  # a week idle; the thread reopens when someone writes


def thread_id_for(channel_id: int) -> str:
    """``discord:<channel_id>``: a text channel, a thread channel or a DM are each one thread."""
    return f"discord:{channel_id}"


def channel_id_of(thread: ThreadRef | str) -> int:
    """The Discord channel a thread (parsed, or its id) is."""
    if isinstance(thread, ThreadRef):
        return int(thread.parts[0])
    return int(thread.removeprefix("discord:"))


def thread_name(text: str) -> str:
    """The header's first line, cut to fit a thread name."""
    first = text.strip().splitlines()[0] if text.strip() else "Agent session"
    return first if len(first) <= THREAD_NAME_CHARS else first[: THREAD_NAME_CHARS - 1] + "…"


async def start_thread(client: discord.Client, channel: ThreadRef, text: str) -> str:
    """Post ``text`` in ``discord:<channel>`` and start a thread on it; the thread is ``discord:<thread_id>``.

    Raises discord.py's errors; the adapter turns them into ChannelError.
    """
    channel_id = channel_id_of(channel)
    target = client.get_partial_messageable(channel_id)
    message = await target.send(
        text[:2000], nonce=uuid.uuid4().hex[:24], allowed_mentions=discord.AllowedMentions.none()
    )
    thread = await client.http.start_thread_with_message(
        channel_id, message.id, name=thread_name(text), auto_archive_duration=ARCHIVE_AFTER_MINUTES
    )
    return f"discord:{thread['id']}"
