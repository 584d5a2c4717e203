"""A follower outlives a lost Redis connection: it logs once, reconnects and misses no entry."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import pytest

from gateway.delivery.feeds import Feeds
from gateway.store import connect, keys
from tests.support.redis_server import RedisServer


async def _blocked_reader(client: Any) -> str:
    """The id of the connection blocked in the follower's XREAD (waited for, not assumed)."""
    async with asyncio.timeout(5):
        while True:
            for line in await client.client_list():
                if line.get("cmd") == "xread":
                    return str(line["id"])
            await asyncio.sleep(0.01)


async def test_a_follower_whose_connection_is_killed_logs_once_and_resumes_without_a_gap(
    redis_server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    redis_server.flush()
    client = connect(redis_server.url).client
    feeds = Feeds(client)
    await feeds.start()
    try:
        start = await feeds.head(feeds.events)
        with caplog.at_level(logging.INFO, logger="threadgate"):
            await client.client_kill_filter(_id=await _blocked_reader(client))
            stream = keys.events_feed(0)
            ids = [str(await client.xadd(stream, {"j": json.dumps({"n": n})})) for n in range(3)]
            rows = await feeds.read(feeds.events, start, 10, wait_s=10)
            async with asyncio.timeout(10):
                while len(rows) < 3:
                    at = start
                    for row in rows:
                        at = feeds.events.advance(at, row)
                    rows += await feeds.read(feeds.events, at, 10, wait_s=5)
        assert [row.id for row in rows] == ids
        logged = [record.getMessage() for record in caplog.records]
        # one line for the outage and one for the recovery (none if the client's own retry hid it)
        assert logged.count("feeds.read_failed") == logged.count("feeds.recovered") <= 1
    finally:
        await feeds.stop()
        await client.aclose()
