"""Discord as a Threadgate platform: its grammar, settings and checks. Imports no Discord SDK."""

from __future__ import annotations

from typing import TYPE_CHECKING

from channels.discord.settings import DiscordSettings, check_settings
from gateway.sdk import channel_spec, lazy_doctor, when_set

if TYPE_CHECKING:
    from channels.discord.channel import DiscordChannel


def build(settings: DiscordSettings) -> DiscordChannel:
    """The Discord channel from ``DISCORD_BOT_TOKEN``, ``DISCORD_API_BASE_URL``, ``DISCORD_GATEWAY_URL``."""
    from channels.discord.channel import DiscordChannel

    if settings.discord_bot_token is None:
        raise ValueError("DISCORD_BOT_TOKEN is not set; the Discord channel needs the bot's token")
    return DiscordChannel(
        settings.discord_bot_token.get_secret_value(),
        api_base_url=settings.discord_api_base_url,
        gateway_url=settings.discord_gateway_url,
    )


SPEC = channel_spec(
    "discord",
    "Discord",
    DiscordSettings,
    threads=r"discord:(?P<channel>\d{5,25})",
    thread_example="discord:<channel_id>",
    person_example="discord:80351110224678912",
    enabled=when_set("discord_bot_token"),
    build=build,
    doctor=lazy_doctor("channels.discord.doctor"),
    check_settings=check_settings,
    secrets=(r"[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,}",),
    extra="discord",
    direct_messages=True,  # a person and the bot alone: where a link code may be typed
)
