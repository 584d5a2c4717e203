"""The Discord channel adapter (discord.py): gateway connection in, REST posts out."""

from __future__ import annotations

from gateway.sdk import lazy_exports

__getattr__ = lazy_exports(__name__, {"DiscordChannel": "channels.discord.channel"})
__all__ = ["DiscordChannel"]
