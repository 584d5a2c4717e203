"""The prompt-settled channel: the scripts publish on it as a prompt settles, every process listens."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

from gateway.store import keys


class SettledSubscription:
    """One subscription to ``tg:settled`` on a connection of its own."""

    def __init__(self, pubsub: Any) -> None:
        self._pubsub = pubsub

    async def next(self, timeout_s: float) -> str | None:
        """The next message's data (``"<prompt id> <how it settled>"``), or None if none came in time."""
        message = await self._pubsub.get_message(timeout=timeout_s)
        if message and message.get("type") == "message":
            return str(message["data"])
        return None


@contextlib.asynccontextmanager
async def settled_subscription(redis: Any) -> AsyncIterator[SettledSubscription]:
    """Subscribed once the block begins; the connection is closed when it ends, however it ends."""
    pubsub = redis.pubsub(ignore_subscribe_messages=True)
    try:
        await pubsub.subscribe(keys.SETTLED_CHANNEL)
        yield SettledSubscription(pubsub)
    finally:
        with contextlib.suppress(Exception):
            await pubsub.aclose()
