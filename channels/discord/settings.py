"""Discord's settings (``DISCORD_*``): the bot token, and where its API and gateway are."""

from __future__ import annotations

from pydantic import SecretStr

from gateway.plugins import PlatformSettings


class DiscordSettings(PlatformSettings):
    discord_bot_token: SecretStr | None = None
    discord_api_base_url: str = "https://discord.com/api/v10"
    discord_gateway_url: str | None = None
