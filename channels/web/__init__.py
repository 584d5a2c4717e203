"""The web chat channel: rooms served by the gateway itself."""

from __future__ import annotations

from importlib import import_module
from typing import Any

# Exported lazily: ``channels.web.spec`` is read at every start, and must not load the platform's SDK.
_LAZY = {"WebChannel": "channels.web.channel", "WebLimits": "channels.web.limits"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["WebChannel", "WebLimits"]
