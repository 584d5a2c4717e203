"""Chat platform adapters. Each turns platform events into InboundMessage and posts thread items back."""

from __future__ import annotations

from gateway.channel import ChannelRuntime
from gateway.settings import Settings


def build_channels(settings: Settings) -> list[ChannelRuntime]:
    """The channels whose settings are present. Platform SDKs are imported only when configured."""
    built: list[ChannelRuntime] = []
    return built
