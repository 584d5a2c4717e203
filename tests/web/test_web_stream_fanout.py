"""The web chat's event streams share the process's follower of the room's log: no Redis connection per
open page, every page gets each item live, and too many open pages are refused with 429."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import redis.asyncio as aioredis

from tests.support.redis_server import RedisServer
from tests.web.conftest import AGENT_AUTH, web_gateway

PAGES = 30


async def redis_connections(url: str) -> int:
    client = aioredis.Redis.from_url(url, decode_responses=True)
    try:
        return len(await client.client_list()) - 1
    finally:
        await client.aclose()


@contextlib.asynccontextmanager
async def open_page(client: httpx.AsyncClient, room: str) -> AsyncIterator[AsyncIterator[str]]:
    """A page's event stream, yielded once its first line came (the page is following from then on)."""
    async with client.stream("GET", f"/chat/{room}/events") as response:
        assert response.status_code == 200
        lines = response.aiter_lines()
        async with asyncio.timeout(5):
            await lines.__anext__()
        yield lines


async def next_item(lines: AsyncIterator[str]) -> dict[str, Any]:
    async with asyncio.timeout(5):
        async for line in lines:
            if line.startswith("data: "):
                item: dict[str, Any] = json.loads(line[6:])
                return item
    raise AssertionError("the stream ended")


async def test_open_chat_pages_hold_no_redis_connection_each_and_all_see_a_new_item_live(
    redis_server: RedisServer,
) -> None:
    redis_server.flush()
    limits = httpx.Limits(max_connections=PAGES + 10)
    async with (
        web_gateway(redis_server.url) as web,
        contextlib.AsyncExitStack() as stack,
        web.client(AGENT_AUTH) as agent,
    ):
        client = await stack.enter_async_context(
            httpx.AsyncClient(base_url=web.base_url, timeout=10, limits=limits)
        )
        pages = [await stack.enter_async_context(open_page(client, "hall"))]
        before = await redis_connections(redis_server.url)
        for _ in range(PAGES - 1):
            pages.append(await stack.enter_async_context(open_page(client, "hall")))
        after = await redis_connections(redis_server.url)
        posted = await agent.post(
            "/v1/threads/web:hall/items", json={"content": [{"type": "text", "text": "hi"}]}
        )
        assert posted.status_code == 202
        items = await asyncio.gather(*(next_item(lines) for lines in pages))
    assert after <= before + 2, f"{PAGES} pages took {after - before} more Redis connections"
    assert {item["content"][0]["text"] for item in items} == {"hi"}


async def test_chat_pages_beyond_the_cap_are_refused_with_429_and_retry_after() -> None:
    async with web_gateway() as web, web.client() as client:
        web.channel.streams.per_credential = 2
        async with open_page(client, "hall"), open_page(client, "hall"):
            refused = await client.get("/chat/hall/events")
    assert refused.status_code == 429
    assert refused.json()["error"]["code"] == "RATE_LIMITED"
    assert int(refused.headers["Retry-After"]) >= 1
