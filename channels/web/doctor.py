"""``threadgate doctor`` for the web chat: who may sign in."""

from __future__ import annotations

from channels.web.access import parse_tokens
from channels.web.settings import WebSettings
from gateway.sdk import Check


async def check(settings: WebSettings) -> list[Check]:
    if settings.threadgate_web_chat == "off":
        return []
    if settings.threadgate_web_token is None:
        if settings.threadgate_web_chat == "open":
            return [
                Check.warn(
                    "web",
                    "THREADGATE_WEB_CHAT=open: anyone who reaches /chat/<room> may post under any name; "
                    "set THREADGATE_WEB_TOKEN outside a trusted network",
                )
            ]
        return [
            Check.fail(
                "web",
                "THREADGATE_WEB_CHAT is on without THREADGATE_WEB_TOKEN: set a token (name:token "
                "entries such as alice:<secret>, or a bare token), or THREADGATE_WEB_CHAT=open for a "
                "trusted network",
            )
        ]
    try:
        parse_tokens(settings.threadgate_web_token.get_secret_value())
    except ValueError as exc:
        return [Check.fail("web", str(exc))]
    return [Check.ok("web", "the web chat needs its access token")]
