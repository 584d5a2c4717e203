"""Chat platform adapters. Each turns platform events into InboundMessage and posts thread items back."""

from __future__ import annotations

from gateway.channel import ChannelRuntime
from gateway.settings import Settings


def build_channels(settings: Settings) -> list[ChannelRuntime]:
    """The channels whose settings are present. Platform SDKs are imported only when configured."""
    built: list[ChannelRuntime] = []
    if settings.web_enabled:
        from channels.web import build as build_web

        built.append(build_web(settings))
    if settings.slack_enabled:
        from channels.slack import build as build_slack

        built.append(build_slack(settings))
    if settings.telegram_enabled:
        from channels.telegram import build as build_telegram

        built.append(build_telegram(settings))
    if settings.discord_enabled:
        from channels.discord import build as build_discord

        built.append(build_discord(settings))
    return built
