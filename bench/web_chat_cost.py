"""``python -m bench.web_chat_cost``: Redis memory per web chat message, measured on a private redis-server.

Posts ``--count`` messages of each size through ``POST /chat/{room}/messages`` (a room with no prompt, so
each is logged in the room and queued for agents), waits for the outbox to publish their events, and
divides the growth of ``INFO memory`` ``used_memory`` by the count.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import string

import httpx
import redis.asyncio as aioredis

from bench.redis_proc import PrivateRedis
from channels.web import WebChannel, WebLimits
from channels.web.limits import MAX_MESSAGE_CHARS
from gateway.api import create_app
from gateway.base.settings import Settings
from gateway.process.runtime import Runtime
from gateway.store import keys

TYPICAL_CHARS = 200
UNLIMITED = WebLimits(posts_per_name=10**9, posts_per_client=10**9, new_rooms_per_client=10**9)


async def used_memory(client: aioredis.Redis) -> int:
    return int((await client.info("memory"))["used_memory"])


def text_of(chars: int, seed: int) -> str:
    """Varied text (not one repeated letter, which a stream's listpack would not store any smaller)."""
    letters = string.ascii_letters + " "
    return "".join(letters[(seed * 7 + n * 13) % len(letters)] for n in range(chars))


async def key_sizes(client: aioredis.Redis, room: str) -> dict[str, int]:
    """Bytes held by the room's log and by the two feeds (``MEMORY USAGE`` over every entry; the room's
    own partition of each feed, where all its entries go)."""
    part = keys.partition(f"web:{room}")
    names = {
        "room log": keys.items(f"web:{room}"),
        "tg:messages": keys.messages_feed(part),
        "tg:events": keys.events_feed(part),
    }
    return {label: int(await client.memory_usage(key, samples=0) or 0) for label, key in names.items()}


async def bytes_per_message(url: str, chars: int, count: int) -> dict[str, float]:
    settings = Settings(_env_file=None, redis_url=url, threadgate_web_chat="open")
    runtime = Runtime.build(settings, channels=[WebChannel(limits=UNLIMITED)])
    app = create_app(runtime)
    probe = aioredis.Redis.from_url(url)
    await runtime.start()
    try:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            room = f"cost-{chars}"
            await client.post(f"/chat/{room}/messages", json={"name": "warm", "text": "x"})  # keys exist
            await runtime.gateway.outbox.sweep(everything=True)
            await runtime.gateway.outbox.idle()
            before, parts_before = await used_memory(probe), await key_sizes(probe, room)
            for n in range(count):
                body = {"name": f"p{n % 50}", "text": text_of(chars, n)}
                response = await client.post(f"/chat/{room}/messages", json=body)
                assert response.status_code == 202, response.text
            await runtime.gateway.outbox.sweep(everything=True)
            await runtime.gateway.outbox.idle()
            after, parts_after = await used_memory(probe), await key_sizes(probe, room)
    finally:
        await runtime.stop()
        await probe.flushall()
        await probe.aclose()
    per_key = {label: (parts_after[label] - parts_before[label]) / count for label in parts_after}
    return {"used_memory": (after - before) / count, **per_key}


async def measure(count: int) -> dict[str, dict[str, float]]:
    """Bytes per message, in all and per key, for a typical and a largest message."""
    with PrivateRedis() as redis:
        return {
            f"{chars} chars": await bytes_per_message(redis.url, chars, count)
            for chars in (TYPICAL_CHARS, MAX_MESSAGE_CHARS)
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=400, help="messages of each size (default 400)")
    figures = asyncio.run(measure(parser.parse_args().count))
    rounded = {size: {part: round(value) for part, value in parts.items()} for size, parts in figures.items()}
    print(json.dumps(rounded, indent=2))


if __name__ == "__main__":
    main()
