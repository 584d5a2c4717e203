"""The thread an agent session's prompts go to: a fixed one, or the session's own, started with a header."""

from __future__ import annotations

from gateway.client.async_client import Threadgate
from gateway.client.target import Target


class NotConfigured(Exception):
    """Neither a fixed thread nor a session channel is set: there is nowhere to ask."""


async def thread_for(tg: Threadgate, target: Target, *, key: str, header: str) -> str:
    """The fixed thread if one is named, else the session's thread (the gateway starts it on first use)."""
    if target.thread is not None:
        return target.thread
    if target.session_channel is None:
        raise NotConfigured(
            "Set THREADGATE_SESSION_CHANNEL (a channel, <platform>:<channel>) or THREADGATE_THREAD to say "
            "where to ask."
        )
    return await tg.session_thread(key, target.session_channel, header)
