"""Discord failures as ChannelError values: what went wrong, what to do, when to retry."""

from __future__ import annotations

import asyncio

import aiohttp
import discord

from gateway.sdk import ChannelError, retry_after


def channel_error(exc: BaseException, doing: str) -> ChannelError:
    """A ChannelError for ``exc`` raised while ``doing`` (e.g. ``posting to channel 123``)."""
    if isinstance(exc, discord.RateLimited):
        return ChannelError(
            f"Discord is rate-limiting {doing}; retry in {exc.retry_after:.1f} s", retry_after=exc.retry_after
        )
    if isinstance(exc, discord.LoginFailure):
        return ChannelError(
            "Discord rejected DISCORD_BOT_TOKEN; copy the bot token from the Developer Portal", permanent=True
        )
    if isinstance(exc, discord.Forbidden):
        return ChannelError(
            f"Discord refused {doing} ({exc.status} {exc.code}: {exc.text}); check that the bot can see "
            "the channel and has Send Messages (and Send Messages in Threads) there",
            permanent=True,
        )
    if isinstance(exc, discord.NotFound):
        return ChannelError(
            f"Discord found no target for {doing} ({exc.code}: {exc.text}); the channel may be deleted or "
            "the bot removed from its server",
            permanent=True,
        )
    if isinstance(exc, discord.HTTPException) and exc.status == 429:
        return ChannelError(
            f"Discord kept rate-limiting {doing} ({exc.text})",
            retry_after=retry_after(getattr(exc.response, "headers", None)),
        )
    if isinstance(exc, discord.HTTPException):
        permanent = 400 <= exc.status < 500
        return ChannelError(
            f"Discord answered {exc.status} ({exc.code}: {exc.text}) to {doing}", permanent=permanent
        )
    if isinstance(exc, aiohttp.ClientError | OSError | asyncio.TimeoutError):
        return ChannelError(f"could not reach Discord while {doing} ({type(exc).__name__}: {exc})")
    return ChannelError(f"{doing} failed ({type(exc).__name__}: {exc})")
