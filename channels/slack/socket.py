"""Slack Socket Mode: one websocket per app, held only while this process holds the app's lease."""

from __future__ import annotations

import asyncio

from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_bolt.async_app import AsyncApp

from gateway.sdk import event


class SocketModeLink:
    """Connects the Bolt app over Socket Mode for as long as ``hold`` runs (the lease's work)."""

    def __init__(self, app: AsyncApp, app_token: str, *, ping_interval: float = 10.0) -> None:
        self.app = app
        self.app_token = app_token
        self.ping_interval = ping_interval
        self._closing = asyncio.Event()

    async def hold(self, fence: int) -> None:
        """Connect, then stay connected until ``close()`` or until cancelled (the lease was lost).

        The SDK reconnects by itself when Slack drops or refreshes the connection.
        """
        handler = AsyncSocketModeHandler(self.app, self.app_token, ping_interval=self.ping_interval)
        try:
            await handler.connect_async()  # type: ignore[no-untyped-call]
            event("slack.socket.connected", fence=fence)
            await self._closing.wait()
        finally:
            await handler.close_async()  # type: ignore[no-untyped-call]
            event("slack.socket.closed", fence=fence)

    def open(self) -> None:
        self._closing.clear()

    def close(self) -> None:
        self._closing.set()
