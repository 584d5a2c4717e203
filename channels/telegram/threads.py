"""Starting a Telegram thread for an agent session: the header goes into the chat (or forum topic) named.

Telegram has no reply threads to start, so the session's thread is that chat or topic itself.
"""

from __future__ import annotations

from channels.telegram.inbound import address_of
from channels.telegram.render import Outgoing
from channels.telegram.send import Sender
from gateway.sdk import ThreadRef


async def start_thread(sender: Sender, channel: ThreadRef, text: str) -> str:
    """Post ``text`` into ``telegram:<chat>[:<topic>]``; the thread is that same chat or topic."""
    await sender.send(address_of(channel), Outgoing(text))
    return channel.thread_id
