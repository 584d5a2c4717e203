"""Opening the Redis the gateway keeps its state in: a server from ``REDIS_URL``, or an embedded one."""

from __future__ import annotations

import contextlib
import socket
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialWithJitterBackoff

from gateway.store.quickpool import QuickBlockingPool

Redis = aioredis.Redis

CONNECT_TIMEOUT_S = 2.0
HEALTH_CHECK_INTERVAL_S = 10
# A dead peer that sends nothing (a host gone from the network) is noticed within about 20 s, even by a
# connection blocked in a long read, which no socket timeout may cut short.
_KEEPALIVE = {
    option: value
    for name, value in (("TCP_KEEPIDLE", 10), ("TCP_KEEPINTVL", 5), ("TCP_KEEPCNT", 2))
    if (option := getattr(socket, name, None)) is not None
}


def command_retry() -> Retry:
    """Retry a command that failed on its connection (refused, reset, closed, LOADING) on a fresh one.

    After Redis restarts, the pool still holds the old, dead connections: each is dropped on its first
    failure and the command sent again on a new one, so a request gets a working connection rather than a
    500. Three retries take about 0.4 s, then the failure is reported (503 while Redis stays away).
    """
    return Retry(ExponentialWithJitterBackoff(base=0.05, cap=0.25), retries=3)


@dataclass(frozen=True, slots=True)
class Connection:
    """A Redis client and a one-line description that is safe to log (no password)."""

    client: Any
    description: str
    durable: bool


def redact_url(url: str) -> str:
    """``redis://:secret@host:6379/0`` → ``redis://:***@host:6379/0``."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    user = parts.username or ""
    host = parts.hostname or ""
    netloc = f"{user}:***@{host}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def connect(url: str | None, max_connections: int = 256) -> Connection:
    """A client for ``url``; with no URL, an embedded in-process store whose state dies with the process."""
    if not url:
        import fakeredis

        fake = fakeredis.FakeAsyncRedis(decode_responses=True, server=fakeredis.FakeServer())
        return Connection(fake, "embedded in-process store (state is lost when the process exits)", False)
    if url.startswith(("redis+cluster://", "rediss+cluster://")):
        # Any one node is enough: the client learns the others and follows resharding. Keys are
        # hash-tagged (see keys.py) so each script and transaction stays in one slot. A burst beyond
        # max_connections waits for a turn, as on one server (cluster_client).
        from gateway.store.cluster_client import WaitingRedisCluster

        plain = url.replace("+cluster", "", 1)
        client = WaitingRedisCluster.from_url(plain, decode_responses=True, max_connections=max_connections)
        return Connection(client, f"Redis Cluster at {redact_url(plain)}", True)
    # A blocking pool: a burst beyond max_connections waits for a free connection instead of failing.
    # An idle connection is PINGed before reuse (health check), and a failed command is retried on a new one.
    # Its checkout and command packing take the fast path of quickpool (half the client CPU per command).
    pool = QuickBlockingPool.from_url(
        url,
        decode_responses=True,
        health_check_interval=HEALTH_CHECK_INTERVAL_S,
        retry=command_retry(),
        socket_connect_timeout=CONNECT_TIMEOUT_S,
        socket_keepalive=True,
        socket_keepalive_options=_KEEPALIVE,
        max_connections=max_connections,
        timeout=20,
    )
    # from_pool: closing the client closes its connections too.
    return Connection(aioredis.Redis.from_pool(pool), f"Redis at {redact_url(url)}", True)


async def trim_idle(client: Any, keep: int) -> int:
    """Close pooled connections left idle by a burst, beyond the ``keep`` most recently used; the pool
    opens new ones when a later burst needs them. Returns how many were closed (none off a plain pool)."""
    free = getattr(getattr(client, "connection_pool", None), "_available_connections", None)
    if not isinstance(free, list) or len(free) <= keep:
        return 0
    # The pool hands out the newest first (a stack); the oldest are the surplus. Taken out of the pool in
    # one step, with no await between, so no request can be handed one of them meanwhile.
    surplus = free[: len(free) - keep]
    del free[: len(free) - keep]
    for connection in surplus:
        with contextlib.suppress(Exception):
            await connection.disconnect()
    return len(surplus)


async def ping(client: Any) -> None:
    """One round trip (raises when Redis cannot answer)."""
    await client.ping()


async def appendonly(client: Any) -> str | None:
    """The server's ``appendonly`` setting (``yes``/``no``); raises where CONFIG is refused."""
    config: dict[str, str] = await client.config_get("appendonly")
    return config.get("appendonly")
