"""What ``threadgate serve`` and ``demo`` settle before they say they listen: the address and the store."""

from __future__ import annotations

import asyncio
import os
import socket

REDIS_TIMEOUT_S = 3.0


class CannotListen(OSError):
    """The address is taken or not this machine's; the message says what to do."""


def bind(host: str, port: int) -> socket.socket:
    """The listening socket, or CannotListen with a sentence that says what to do."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise CannotListen(
            f"cannot listen on {host}:{port}: {plain_reason(exc)}; pass --port or set THREADGATE_PORT"
        ) from exc
    return sock


def plain_reason(exc: BaseException) -> str:
    """``connection refused``, ``address already in use``: the operating system's words for the first
    OSError behind ``exc``, else the exception's own text."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, OSError) and seen.errno is not None and seen.errno > 0:
            return os.strerror(seen.errno).lower()
        if isinstance(seen, OSError) and seen.strerror:
            return seen.strerror.lower()  # name resolution: gaierror's negative errno
        if isinstance(seen, TimeoutError):
            return "timed out"
        seen = seen.__cause__ or seen.__context__
    return str(exc) or type(exc).__name__


async def store_problem(url: str) -> str | None:
    """PING the Redis at ``url`` on a connection of its own: None when it answers, else one sentence."""
    from gateway.base.logs import redact
    from gateway.store.connection import connect, ping

    connection = connect(url, max_connections=2)
    try:
        async with asyncio.timeout(REDIS_TIMEOUT_S):
            await ping(connection.client)
        return None
    except Exception as exc:
        reason = plain_reason(exc)
        if reason == "timed out":  # a busy process may time out first: what does the address say?
            reason = await _connect_reason(url) or reason
        return f"{connection.description} did not answer ({redact(reason)}); check REDIS_URL"
    finally:
        await connection.client.aclose()


async def _connect_reason(url: str) -> str | None:
    """Why a plain TCP connection to a ``redis://`` URL's address fails (``connection refused``), so the
    same dead address reads the same from ``serve`` and ``doctor`` however busy each is; None when it
    connects, or for a URL of another kind."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    if parts.scheme not in ("redis", "rediss") or not parts.hostname:
        return None
    try:
        async with asyncio.timeout(REDIS_TIMEOUT_S):
            _, writer = await asyncio.open_connection(parts.hostname, parts.port or 6379)
    except Exception as exc:
        return plain_reason(exc)
    writer.close()
    return None


def reachable_url(host: str, port: int) -> str:
    """How to reach a server bound to ``host`` from this machine: every interface is reached on loopback."""
    local = {"0.0.0.0": "127.0.0.1", "::": "::1"}.get(host, host)
    return f"http://[{local}]:{port}" if ":" in local else f"http://{local}:{port}"
