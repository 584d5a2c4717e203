"""The web chat channel: ``web:<room>`` threads served by the gateway itself."""

from __future__ import annotations

from channels.web.channel import WebChannel
from gateway.settings import Settings


def build(settings: Settings) -> WebChannel:
    token = settings.threadgate_web_token.get_secret_value() if settings.threadgate_web_token else None
    return WebChannel(token=token)


__all__ = ["WebChannel", "build"]
