"""The Discord channel adapter (discord.py): gateway connection in, REST posts out."""

from __future__ import annotations

from channels.discord.channel import DiscordChannel
from gateway.settings import Settings


def build(settings: Settings) -> DiscordChannel:
    """The Discord channel from ``DISCORD_BOT_TOKEN``, ``DISCORD_API_BASE_URL``, ``DISCORD_GATEWAY_URL``."""
    if settings.discord_bot_token is None:
        raise ValueError("DISCORD_BOT_TOKEN is not set; the Discord channel needs the bot's token")
    return DiscordChannel(
        settings.discord_bot_token.get_secret_value(),
        api_base_url=settings.discord_api_base_url,
        gateway_url=settings.discord_gateway_url,
    )


__all__ = ["DiscordChannel", "build"]
