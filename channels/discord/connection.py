"""The Discord gateway connection: a websocket session that hands people's messages and presses on."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import discord

from channels.discord.inbound import inbound_message
from channels.discord.unreadable import event_id_of, guard_parsers
from gateway.sdk import InboundMessage, event, failure

# The gateway never joins voice: without this discord.py warns on start that voice libraries are missing.
discord.VoiceClient.warn_nacl = False
discord.VoiceClient.warn_dave = False

Deliver = Callable[[InboundMessage], None]
Press = Callable[[discord.Interaction[Any]], Awaitable[None]]


async def ignore_presses(interaction: discord.Interaction[Any]) -> None:
    """For a connection that serves no controls."""


def gateway_intents() -> discord.Intents:
    """Servers, their messages and DMs, with message text (the privileged Message Content intent)."""
    intents = discord.Intents.none()
    intents.guilds = True
    intents.guild_messages = True
    intents.dm_messages = True
    intents.message_content = True
    return intents


class GatewayClient(discord.Client):
    """A discord.py client that keeps no caches it does not need and forwards messages and presses."""

    def __init__(self, deliver: Deliver, press: Press, *, accept_bots: bool, fence: int) -> None:
        super().__init__(
            intents=gateway_intents(),
            max_messages=None,
            chunk_guilds_at_startup=False,
            member_cache_flags=discord.MemberCacheFlags.none(),
        )
        self._deliver = deliver
        self._press = press
        self._accept_bots = accept_bots
        self._fence = fence
        guard_parsers(self._connection.parsers)

    async def on_connect(self) -> None:
        event("discord.gateway.connected", fence=self._fence)

    async def on_resumed(self) -> None:
        event("discord.gateway.resumed", fence=self._fence)

    async def on_message(self, message: discord.Message) -> None:
        if self.user is None:
            return
        inbound = inbound_message(message, bot_id=self.user.id, accept_bots=self._accept_bots)
        if inbound is not None:
            self._deliver(inbound)

    async def on_interaction(self, interaction: discord.Interaction[Any]) -> None:
        # discord.py runs each event handler as its own task, so presses are handled concurrently.
        await self._press(interaction)

    async def on_error(self, event_method: str, /, *args: Any, **kwargs: Any) -> None:
        """A handler that raised (discord.py calls this inside the handler's except block): one line with
        the event's id, and the session goes on."""
        _, exc, _ = sys.exc_info()
        subject = args[0] if args else None
        event(
            "discord.event.failed",
            logging.WARNING,
            handler=event_method,
            event_id=event_id_of({"id": getattr(subject, "id", None)}),
            **failure(exc, with_traceback=True),
        )


class GatewayConnection:
    """Runs one gateway session at a time; ``run`` is the work a lease holder does."""

    def __init__(
        self,
        token: str,
        deliver: Deliver,
        press: Press = ignore_presses,
        *,
        accept_bots: bool = False,
        fatal_pause: float = 60.0,
    ) -> None:
        self._token = token
        self._deliver = deliver
        self._press = press
        self._accept_bots = accept_bots
        self._fatal_pause = fatal_pause
        self.stopping = asyncio.Event()

    async def run(self, fence: int) -> None:
        """Connect and stay connected (discord.py resumes and reconnects) until cancelled or stopping."""
        client = GatewayClient(self._deliver, self._press, accept_bots=self._accept_bots, fence=fence)
        session = asyncio.ensure_future(self._connect(client))
        stopping = asyncio.ensure_future(self.stopping.wait())
        try:
            await asyncio.wait({session, stopping}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (session, stopping):
                task.cancel()
            await asyncio.gather(session, stopping, return_exceptions=True)
            with contextlib.suppress(Exception):
                await client.close()
        failure = None if session.cancelled() else session.exception()
        if failure is not None:
            raise failure

    async def _connect(self, client: GatewayClient) -> None:
        try:
            await client.login(self._token)
            await client.connect(reconnect=True)
        except discord.LoginFailure:
            await self._pause(
                "discord.gateway.bad_token",
                "Discord rejected DISCORD_BOT_TOKEN; copy the bot token from the Developer Portal",
            )
            raise
        except discord.PrivilegedIntentsRequired:
            await self._pause(
                "discord.gateway.intents_missing",
                "turn on the Message Content intent (Developer Portal: Bot → Privileged Gateway Intents)",
            )
            raise

    async def _pause(self, name: str, advice: str) -> None:
        """Say what to fix, then wait before the lease retries, rather than reconnecting in a hot loop."""
        event(name, logging.ERROR, advice=advice, retry_in=self._fatal_pause)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.stopping.wait(), self._fatal_pause)
