"""Reading a feed back in tests: the stream's entries as the agent receives them."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from gateway.base.cursors import position
from gateway.store import keys

# A feed by its legacy one-key name: its partitions' streams (the legacy one among them).
PARTITIONED: dict[str, Callable[[int], str]] = {
    keys.EVENTS: keys.events_feed,
    keys.MESSAGES: keys.messages_feed,
    keys.HISTORY: keys.history_feed,
}


def feed_streams(stream: str) -> list[str]:
    """The streams of a feed named by its legacy key (every partition's), or the one stream given."""
    partitioned = PARTITIONED.get(stream)
    return [partitioned(part) for part in keys.EVERY_PARTITION] if partitioned else [stream]


async def feed_rows(redis: Any, stream: str, limit: int = 100) -> list[tuple[str, dict[str, str]]]:
    """The first ``limit`` rows of a feed, its partitions merged by stream id (the order a reader that
    reads them all at once gets; each partition in its own order)."""
    rows: list[tuple[str, dict[str, str]]] = []
    for key in feed_streams(stream):
        rows += [(str(entry_id), fields) for entry_id, fields in await redis.xrange(key, count=limit)]
    return sorted(rows, key=lambda row: position(row[0]))[:limit]


async def feed_entries(redis: Any, stream: str, limit: int = 100) -> list[dict[str, Any]]:
    """The first ``limit`` entries of the feed ``stream`` (every partition of a partitioned one), decoded."""
    return [json.loads(fields["j"]) for _, fields in await feed_rows(redis, stream, limit)]


async def feed_length(redis: Any, stream: str) -> int:
    """How many entries the feed holds, in all its partitions."""
    return sum([int(await redis.xlen(key)) for key in feed_streams(stream)])
