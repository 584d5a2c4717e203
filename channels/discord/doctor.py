"""``threadgate doctor`` for Discord: the bot token asked who it is."""

from __future__ import annotations

import asyncio

from channels.discord.settings import DiscordSettings
from gateway.sdk import Check, probe, secret_text


async def check(settings: DiscordSettings) -> list[Check]:
    """``GET /users/@me`` with the bot token, through discord.py's own HTTP client."""
    import discord

    from channels.discord.channel import point_discord_py_at

    token = secret_text(settings.discord_bot_token)
    if not token:
        return []
    point_discord_py_at(settings.discord_api_base_url, settings.discord_gateway_url)
    http = discord.http.HTTPClient(asyncio.get_running_loop())
    try:
        return [
            await probe(
                "discord",
                lambda: http.static_login(token),
                lambda me: f"bot token works: {me.get('username')}",
                (discord.LoginFailure,),
                lambda _: "Discord refused DISCORD_BOT_TOKEN; reset it in the developer portal",
                ("DISCORD_API_BASE_URL", settings.discord_api_base_url),
            )
        ]
    finally:
        await http.close()
