"""Writes a browser sends from another site's page are refused: a foreign ``Origin`` or ``Sec-Fetch-Site``.

A page on any site can make a visitor's browser POST a form or a ``text/plain`` body to the gateway, with
the visitor's network position (an open chat page on a trusted network, ``threadgate demo`` on loopback).
Browsers say where such a request comes from (``Origin``, ``Sec-Fetch-Site``); clients that are not
browsers send neither and are let through. Guarded: the API, MCP, and the routes of every platform whose
spec asks for it (``ChannelSpec.same_origin``: one that serves pages people write from).
"""

from __future__ import annotations

from urllib.parse import urlsplit

from starlette.types import ASGIApp, Receive, Scope, Send

from gateway.api.asgi import HttpMiddleware, send_error
from gateway.base.errors import GatewayError

WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})
GUARDED = ("/v1/", "/mcp")  # the API (the inbox answers through it) and MCP; channels add their own
# Checked whatever the method: MCP (2025-11-25) validates the Origin of every connection, GET streams too.
EVERY_METHOD = ("/mcp",)
DEFAULT_PORTS = {"http": "80", "https": "443"}


def origin_of(url: str) -> str:
    """``scheme://host[:port]`` of an absolute http(s) URL, lower-cased, default port dropped."""
    parts = urlsplit(url.strip())
    if parts.scheme not in DEFAULT_PORTS or not parts.hostname:
        raise ValueError(f"{url!r} is not an absolute http(s) URL")
    return f"{parts.scheme}://{_netloc(parts.scheme, parts.netloc)}"


def _netloc(scheme: str, netloc: str) -> str:
    host = netloc.rsplit("@", 1)[-1].lower()
    default = DEFAULT_PORTS.get(scheme)
    return host[: -len(default) - 1] if default and host.endswith(f":{default}") else host


def cross_site(origin: str | None, fetch_site: str | None, host: str, public: str | None) -> bool:
    if fetch_site == "cross-site":
        return True
    if origin is None:
        return False  # not a browser (browsers send Origin on every cross-origin write)
    try:
        claimed = origin_of(origin)
    except ValueError:
        return True  # "null" (a sandboxed frame, a file) or garbage
    if claimed == public:
        return False
    scheme = claimed.split("://", 1)[0]
    return claimed.split("://", 1)[1] != _netloc(scheme, host)


def refusal(
    method: str,
    path: str,
    headers: dict[str, str],
    public_origin: str | None = None,
    guarded: tuple[str, ...] = GUARDED,
) -> GatewayError | None:
    """Why this request is refused (403: it came from another site's page), or None to let it through.
    ``guarded`` are the path prefixes whose writes are checked."""
    if not path.startswith(guarded) or (method not in WRITES and not path.startswith(EVERY_METHOD)):
        return None
    origin = headers.get("origin")
    if cross_site(origin, headers.get("sec-fetch-site"), headers.get("host", ""), public_origin):
        return GatewayError(
            "CROSS_SITE_REQUEST",
            "This request came from another site's page; the gateway only takes writes from its own pages. "
            "Behind a proxy, set THREADGATE_PUBLIC_URL to the address people open.",
            403,
            {"origin": origin},
        )
    return None


class SameOriginWrites(HttpMiddleware):
    """ASGI middleware applying ``refusal`` before any body is read; ``channel_prefixes`` are guarded beside
    the gateway's own ``GUARDED`` paths."""

    def __init__(
        self, app: ASGIApp, public_origin: str | None = None, channel_prefixes: tuple[str, ...] = ()
    ) -> None:
        super().__init__(app)
        self.public_origin = public_origin
        self.guarded = GUARDED + channel_prefixes

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        refused = self._refusal(scope)
        if refused is None:
            await self.app(scope, receive, send)
            return
        await send_error(send, refused)

    def _refusal(self, scope: Scope) -> GatewayError | None:
        # Its own frame: the headers read here are not kept alive while a long-poll below is held.
        raw = scope.get("headers", [])
        headers = {name.decode("latin-1").lower(): value.decode("latin-1") for name, value in raw}
        return refusal(scope["method"], scope["path"], headers, self.public_origin, self.guarded)
