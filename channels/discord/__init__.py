"""The Discord channel adapter (discord.py): gateway connection in, REST posts out."""

from __future__ import annotations

from importlib import import_module
from typing import Any

# Exported lazily: ``channels.discord.spec`` is read at every start, and must not load the platform's SDK.
_LAZY = {"DiscordChannel": "channels.discord.channel"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["DiscordChannel"]
