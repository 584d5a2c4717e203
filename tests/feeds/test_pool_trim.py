"""After a burst, the pooled Redis connections it left idle are closed; the pool still serves the next."""

from __future__ import annotations

import asyncio

from gateway.store import connect, trim_idle
from tests.support.conditions import eventually
from tests.support.redis_server import RedisServer


async def test_connections_a_burst_left_idle_are_closed_beyond_the_few_kept(
    redis_server: RedisServer,
) -> None:
    redis_server.flush()
    client = connect(redis_server.url, max_connections=32).client
    observer = connect(redis_server.url, max_connections=2).client
    try:
        await observer.ping()
        before = len(await observer.client_list())
        # 20 commands in flight at once: each holds its own pooled connection until Redis answers
        await asyncio.gather(*(client.blpop([f"burst:{n}"], timeout=0.05) for n in range(20)))
        burst = len(await observer.client_list())
        closed = await trim_idle(client, keep=2)

        async def trimmed() -> bool:  # Redis sees the closed sockets go
            return len(await observer.client_list()) - before == 2

        await eventually(trimmed, "two pooled connections left")
        assert await client.set("after:trim", "1")
    finally:
        await client.aclose()
        await observer.aclose()
    assert burst - before == 20 and closed == 18
