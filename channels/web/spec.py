"""The web chat as a Threadgate platform: served by the gateway itself, so ``threadgate demo`` runs it."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from channels.web.settings import WebSettings
from gateway.sdk import LocalChat, channel_spec, event, lazy_doctor

if TYPE_CHECKING:
    from channels.web.channel import WebChannel

_ROOM = r"web:(?P<room>[A-Za-z0-9_-]{1,64})"


def build(settings: WebSettings) -> WebChannel:
    """The channel for ``threadgate serve``: sign-in by ``THREADGATE_WEB_TOKEN``.

    ``THREADGATE_WEB_CHAT=on`` refuses to start without a token; ``open`` lets anyone who reaches the
    page pick a name (a trusted network only), and says so in a warning.
    """
    from channels.web.channel import WebChannel
    from channels.web.limits import WebLimits

    tokens = settings.threadgate_web_token.get_secret_value() if settings.threadgate_web_token else None
    if tokens is None and settings.threadgate_web_chat != "open":
        raise ValueError(
            "THREADGATE_WEB_CHAT is on but THREADGATE_WEB_TOKEN is unset: set a token (name:token entries, "
            "or a bare token), or THREADGATE_WEB_CHAT=open to let anyone who reaches the page pick a name"
        )
    channel = WebChannel(
        tokens,
        heartbeat_s=settings.threadgate_web_heartbeat_s,
        limits=WebLimits.from_settings(settings),
        lobby=settings.threadgate_web_lobby or None,
    )
    if channel.access.open:
        event(
            "web.open_sign_in",
            logging.WARNING,
            warning="THREADGATE_WEB_TOKEN is unset: anyone who reaches /chat/<room> may post under any name",
        )
    return channel


def enabled(settings: WebSettings) -> bool:
    return settings.threadgate_web_chat != "off"


def build_local(lobby: str, heartbeat_s: float) -> WebChannel:
    """The chat ``threadgate demo`` serves: anyone on this machine picks a name (no token, whatever the
    environment says), and each visitor of ``lobby`` tours in a room of their own."""
    return build(
        WebSettings(
            threadgate_web_chat="open",
            threadgate_web_token=None,
            threadgate_web_heartbeat_s=heartbeat_s,
            threadgate_web_lobby=lobby,
        )
    )


def visitor_room(lobby: str, name: str) -> str:
    from channels.web.channel import own_room

    return own_room(lobby, name)


def room_url(base_url: str, room: str) -> str:
    from channels.web.channel import room_url

    return room_url(base_url, room)


SPEC = channel_spec(
    "web",
    "the web chat",
    WebSettings,
    threads=_ROOM,
    thread_example="web:<room>",
    person_example="web:alice",
    enabled=enabled,
    build=build,
    doctor=lazy_doctor("channels.web.doctor"),
    local=LocalChat(build_local, visitor_room, room_url),
    paths=("/chat/", "/chat-assets/"),
    same_origin=True,  # people write from its pages
    direct_messages=False,  # a room is shared by whoever holds its link: a link code is taken in any room
)
