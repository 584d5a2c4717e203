"""Who is calling: the connection's peer, or the client a proxy in ``THREADGATE_TRUSTED_PROXIES`` names.

The server (uvicorn) rewrites the client from ``X-Forwarded-For`` and the scheme from
``X-Forwarded-Proto`` only for connections from those proxies, and for none by default: anyone else who
sends the headers is counted by the address they connect from. ``Forwarded`` is never read.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import HTTPConnection

from gateway.base.settings import Settings

UNKNOWN = "unknown"


def proxy_options(settings: Settings) -> dict[str, Any]:
    """uvicorn's forwarded-header options for ``settings``: off unless trusted proxies are named."""
    trusted = settings.trusted_proxies()
    if not trusted:
        return {"proxy_headers": False, "forwarded_allow_ips": []}
    return {"proxy_headers": True, "forwarded_allow_ips": trusted}


def client_address(connection: HTTPConnection) -> str:
    """The address every per-client limit counts against (see the module's docstring for trust)."""
    client = connection.client
    return client.host if client is not None and client.host else UNKNOWN
