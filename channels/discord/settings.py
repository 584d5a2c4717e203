"""Discord's settings (``DISCORD_*``): the bot token, and where its API and gateway are."""

from __future__ import annotations

import re

from pydantic import SecretStr

from gateway.sdk import Check, PlatformSettings

# The bot's id, a timestamp and a signature, each base64url, joined by dots.
BOT_TOKEN = re.compile(r"[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+", re.ASCII)
BOT_TOKEN_EXAMPLE = (
    "<part>.<part>.<part>, three dot-separated parts (Bot > Reset Token in the developer portal)"
)


class DiscordSettings(PlatformSettings):
    discord_bot_token: SecretStr | None = None
    discord_api_base_url: str = "https://discord.com/api/v10"
    discord_gateway_url: str | None = None


def check_settings(settings: DiscordSettings) -> list[Check]:
    """A bot token of another shape cannot work: Discord's has three dot-separated parts."""
    token = settings.discord_bot_token
    if token is not None and not BOT_TOKEN.fullmatch(token.get_secret_value().strip()):
        return [Check.warn("discord", f"DISCORD_BOT_TOKEN is not a bot token; expected {BOT_TOKEN_EXAMPLE}")]
    return []
