"""The webhook queue's Redis side: the consumer group on the event streams, and the delivery queue."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple

from redis.asyncio.cluster import RedisCluster
from redis.exceptions import ResponseError

from gateway.store import calls, keys
from gateway.store.scripts import Scripts

STREAMS = tuple(keys.events_feed(part) for part in keys.EVERY_PARTITION)  # every stream the group reads
LEGACY_STREAM = keys.events_feed(keys.LEGACY)  # the single stream of earlier versions
PARTITION_STREAMS = tuple(stream for stream in STREAMS if stream != LEGACY_STREAM)
POLL_MS = 200  # on a cluster, the pause after a read that found nothing on any stream


class Row(NamedTuple):
    """A stream entry taken for the group: its stream, its id and its fields (empty once trimmed away)."""

    stream: str
    entry_id: str
    fields: dict[str, str] | None


class GroupMissing(Exception):
    """The consumer group is gone (Redis restarted empty, or a stream was deleted): create it again."""


class WebhookQueue:
    """Events taken off every partition's event stream by one consumer of the group each, and deliveries
    queued by (event id, URL) once, claimed for a lease, rescheduled or forgotten. Every delivery queue key
    shares one hash tag, so each script and transaction here stays in one Cluster slot.

    On one server (and the embedded store) one blocking ``XREADGROUP`` names every stream. A Cluster keeps
    the streams in different slots, which one command may not span: there each is read on its own without
    blocking, all at once, and a read that found nothing pauses for a short poll instead of blocking.
    """

    def __init__(self, redis: Any) -> None:
        self.redis = redis
        self.scripts = Scripts()
        self.per_stream = isinstance(redis, RedisCluster)

    # The consumer group ----------------------------------------------------------------------------

    async def ensure_group(self, start: str) -> list[str]:
        """The consumer group on every event stream: kept where it exists, made where it does not, reading
        after ``start``. Except when the legacy stream already had it: webhooks ran on this Redis before, so
        nothing on a partition's stream was delivered yet, and a new group there reads it from its start.
        Returns the streams it was made on."""
        made_legacy = await self._create(LEGACY_STREAM, start)
        start = start if made_legacy else "0"
        made = await asyncio.gather(*(self._create(stream, start) for stream in PARTITION_STREAMS))
        fresh = [stream for stream, new in zip(PARTITION_STREAMS, made, strict=True) if new]
        return [*fresh, LEGACY_STREAM] if made_legacy else fresh

    async def _create(self, stream: str, start: str) -> bool:
        """Make the group on ``stream`` (and the stream if need be); False when it was there."""
        try:
            await self.redis.xgroup_create(stream, keys.WEBHOOK_GROUP, id=start, mkstream=True)
        except ResponseError as exc:
            if "BUSYGROUP" not in str(exc):
                raise
            return False
        return True

    async def read_new(self, consumer: str, count: int, block_ms: int | None) -> list[Row]:
        """Events no consumer of the group has taken yet, now held by ``consumer`` until acknowledged: up to
        ``count`` from each stream, waiting up to ``block_ms`` (None: not at all) while there are none."""
        if not self.per_stream:
            return await self._read(consumer, dict.fromkeys(STREAMS, ">"), count, block_ms)
        rows = await self._read_each(consumer, ">", count)
        if not rows and block_ms is not None:
            await asyncio.sleep(min(block_ms or POLL_MS, POLL_MS) / 1000)
        return rows

    async def read_held(self, consumer: str, count: int) -> list[Row]:
        """Events ``consumer`` took and has not acknowledged (a fan-out that failed part way): up to
        ``count`` from each stream, without waiting."""
        if not self.per_stream:
            return await self._read(consumer, dict.fromkeys(STREAMS, "0"), count, None)
        return await self._read_each(consumer, "0", count)

    async def _read_each(self, consumer: str, after: str, count: int) -> list[Row]:
        """One ``XREADGROUP`` per stream, all at once, none blocking."""
        reads = [self._read(consumer, {stream: after}, count, None) for stream in STREAMS]
        return [row for rows in await asyncio.gather(*reads) for row in rows]

    async def _read(
        self, consumer: str, streams: dict[str, str], count: int, block_ms: int | None
    ) -> list[Row]:
        with _group_present():
            reply = await self.redis.xreadgroup(
                keys.WEBHOOK_GROUP, consumer, streams, count=count, block=block_ms
            )
        return [
            Row(str(stream), str(ident), fields) for stream, rows in reply or [] for ident, fields in rows
        ]

    async def claim_stale(self, consumer: str, min_idle_ms: int, count: int) -> list[Row]:
        """Events another consumer took over ``min_idle_ms`` ago and never acknowledged (it crashed): up to
        ``count`` from each stream."""
        claims = [self._claim(stream, consumer, min_idle_ms, count) for stream in STREAMS]
        return [row for rows in await asyncio.gather(*claims) for row in rows]

    async def _claim(self, stream: str, consumer: str, min_idle_ms: int, count: int) -> list[Row]:
        with _group_present():
            reply = await self.redis.xautoclaim(
                stream,
                keys.WEBHOOK_GROUP,
                consumer,
                min_idle_time=min_idle_ms,
                start_id="0-0",
                count=count,
            )
        return [Row(stream, str(ident), fields) for ident, fields in reply[1]]

    async def ack(self, stream: str, entry_ids: Sequence[str]) -> None:
        """The events of ``stream`` are queued for every URL (or had nothing to queue): no consumer takes
        them again."""
        if entry_ids:
            await self.redis.xack(stream, keys.WEBHOOK_GROUP, *entry_ids)

    async def leave(self, consumer: str) -> None:
        """Remove ``consumer`` from the group on each stream where it holds no event (another consumer
        claims those it still holds, later)."""
        await asyncio.gather(*(self._leave(stream, consumer) for stream in STREAMS))

    async def _leave(self, stream: str, consumer: str) -> None:
        with contextlib.suppress(GroupMissing), _group_present():
            pending = await self.redis.xpending_range(
                stream, keys.WEBHOOK_GROUP, min="-", max="+", count=1, consumername=consumer
            )
            if not pending:
                await self.redis.xgroup_delconsumer(stream, keys.WEBHOOK_GROUP, consumer)

    # The delivery queue ----------------------------------------------------------------------------

    async def enqueue(self, body: str, deliveries: list[tuple[str, str]], now_ms: int, ttl_s: int) -> int:
        """Queue ``body`` for each (delivery id, URL) pair not queued within ``ttl_s``; how many were."""
        call = calls.enqueue_webhooks(body, deliveries, now_ms, ttl_s)
        return int(await self.scripts.call(self.redis, *call))

    async def claim_due(self, now_ms: int, lease_ms: int, count: int) -> list[str]:
        """Up to ``count`` deliveries due now, each held for ``lease_ms`` (then due again if not settled)."""
        ids = await self.scripts.call(self.redis, *calls.claim_webhooks(now_ms, lease_ms, count))
        return [str(ident) for ident in ids or []]

    async def record(self, delivery_id: str) -> dict[str, str]:
        """A delivery's URL, body, attempts and first-try time (empty once it is gone)."""
        record: dict[str, str] = await self.redis.hgetall(keys.webhook_delivery(delivery_id))
        return record

    async def retry_at(self, delivery_id: str, attempts: int, due_ms: int) -> None:
        """Count a failed attempt and make the delivery due again at ``due_ms``."""
        pipe = self.redis.pipeline(transaction=True)
        pipe.hset(keys.webhook_delivery(delivery_id), "attempts", attempts)
        pipe.zadd(keys.WEBHOOK_DUE, {delivery_id: due_ms})
        await pipe.execute()

    async def forget(self, delivery_id: str) -> None:
        """Drop a delivery (delivered, given up, or no longer wanted); its dedupe marker stays."""
        pipe = self.redis.pipeline(transaction=True)
        pipe.delete(keys.webhook_delivery(delivery_id))
        pipe.zrem(keys.WEBHOOK_DUE, delivery_id)
        await pipe.execute()

    async def depth(self) -> int:
        """Deliveries waiting, due or not."""
        return int(await self.redis.zcard(keys.WEBHOOK_DUE))


@contextlib.contextmanager
def _group_present() -> Iterator[None]:
    """Redis's NOGROUP reply (the embedded store's: a stream that is gone) raised as ``GroupMissing``."""
    try:
        yield
    except ResponseError as exc:
        if str(exc).startswith("NOGROUP") or "requires the key to exist" in str(exc):
            raise GroupMissing(str(exc)) from exc
        raise
