"""The web chat channel: rooms served by the gateway itself."""

from __future__ import annotations

from gateway.sdk import lazy_exports

__getattr__ = lazy_exports(
    __name__, {"WebChannel": "channels.web.channel", "WebLimits": "channels.web.limits"}
)
__all__ = ["WebChannel", "WebLimits"]
