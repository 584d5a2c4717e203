"""Requests must name a host the gateway is served at: a DNS-rebinding page names its own, and is refused.

A page on ``rebind.example`` whose name is made to resolve to the gateway's address is same-origin with
itself, so the browser lets it read and write freely; only its ``Host`` header gives it away. The names
allowed are the loopback names, the address the server is bound to, ``THREADGATE_PUBLIC_URL``'s host and
``THREADGATE_ALLOWED_HOSTS`` (``*`` there allows any); bound to ``0.0.0.0`` or ``::``, the machine's own
addresses are not implied. The port is not compared. The probes answer any
host: they read nothing, and orchestrators call them by the pod's address.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Receive, Scope, Send

from gateway.api.asgi import header_of, send_error
from gateway.base.errors import GatewayError
from gateway.base.hosts import WILDCARDS, host_name
from gateway.base.settings import Settings

LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1"})
PROBES = frozenset({"/healthz", "/readyz"})
SHOWN_CHARS = 100


@dataclass(frozen=True, slots=True)
class HostAllowList:
    """The host names requests may name; ``any_host`` when ``THREADGATE_ALLOWED_HOSTS`` has ``*``."""

    names: frozenset[str]
    any_host: bool = False

    @classmethod
    def from_settings(cls, settings: Settings) -> HostAllowList:
        names = set(LOOPBACK_NAMES)
        for value in (settings.threadgate_host, urlsplit(settings.threadgate_public_url or "").netloc):
            if (name := host_name(value.rsplit("@", 1)[-1])) is not None:
                names.add(name)
        extra = settings.allowed_hosts()
        # Bound to every interface is no name to reach it by: the machine's addresses are not implied.
        return cls(frozenset(names - WILDCARDS | set(extra)) - {"*"}, any_host="*" in extra)

    def allows(self, host: str | None) -> bool:
        if self.any_host:
            return True
        return host is not None and host_name(host) in self.names


def misdirected(host: str | None) -> GatewayError:
    return GatewayError(
        "MISDIRECTED_REQUEST",
        "This gateway is not served under the host this request names. If it is meant to be, add the name "
        "to THREADGATE_ALLOWED_HOSTS (or set THREADGATE_PUBLIC_URL to the address people open).",
        421,
        {"host": (host or "")[:SHOWN_CHARS]},
    )


class AllowedHosts:
    """ASGI middleware: 421 MISDIRECTED_REQUEST for a ``Host`` outside the allow-list, before all else."""

    def __init__(self, app: ASGIApp, hosts: HostAllowList) -> None:
        self.app = app
        self.hosts = hosts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket") or scope.get("path") in PROBES:
            await self.app(scope, receive, send)
            return
        host = header_of(scope, b"host")
        if self.hosts.allows(host):
            await self.app(scope, receive, send)
        elif scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
        else:
            await send_error(send, misdirected(host))
