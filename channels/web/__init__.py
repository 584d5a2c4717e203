"""The web chat channel: ``web:<room>`` threads served by the gateway itself."""

from __future__ import annotations

import logging

from channels.web.channel import WebChannel
from channels.web.limits import WebLimits
from gateway.logs import event
from gateway.settings import Settings


def build(settings: Settings) -> WebChannel:
    """The channel for ``threadgate serve``: sign-in by ``THREADGATE_WEB_TOKEN``.

    ``THREADGATE_WEB_CHAT=on`` refuses to start without a token; ``open`` lets anyone who reaches the
    page pick a name (a trusted network only), and says so in a warning.
    """
    tokens = settings.threadgate_web_token.get_secret_value() if settings.threadgate_web_token else None
    if tokens is None and settings.threadgate_web_chat != "open":
        raise ValueError(
            "THREADGATE_WEB_CHAT is on but THREADGATE_WEB_TOKEN is unset: set a token (name:token entries, "
            "or a bare token), or THREADGATE_WEB_CHAT=open to let anyone who reaches the page pick a name"
        )
    channel = WebChannel(tokens, limits=WebLimits.from_settings(settings))
    if channel.access.open:
        event(
            "web.open_sign_in",
            logging.WARNING,
            warning="THREADGATE_WEB_TOKEN is unset: anyone who reaches /chat/<room> may post under any name",
        )
    return channel


__all__ = ["WebChannel", "WebLimits", "build"]
