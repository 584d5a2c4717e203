"""The webhook queue's Redis side: the consumer group on the event stream, and the delivery queue."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from redis.exceptions import ResponseError

from gateway.store import keys
from gateway.store.scripts import Scripts

Row = tuple[str, dict[str, str]]  # a stream entry: its id and its fields


class GroupMissing(Exception):
    """The consumer group is gone (Redis restarted empty, or the stream was deleted): create it again."""


class WebhookQueue:
    """Events taken off ``tg:events`` by one consumer of the group each, and deliveries queued by
    (event id, URL) once, claimed for a lease, rescheduled or forgotten. Every queue key shares one hash
    tag, so each script and transaction here stays in one Cluster slot."""

    def __init__(self, redis: Any) -> None:
        self.redis = redis
        self.scripts = Scripts()

    # The consumer group ----------------------------------------------------------------------------

    async def ensure_group(self, start: str) -> None:
        """The consumer group on the event stream, reading after ``start``; kept if it exists."""
        try:
            await self.redis.xgroup_create(keys.EVENTS, keys.WEBHOOK_GROUP, id=start, mkstream=True)
        except ResponseError as exc:
            if "BUSYGROUP" not in str(exc):
                raise

    async def read_new(self, consumer: str, count: int, block_ms: int | None) -> list[Row]:
        """Events no consumer of the group has taken yet, now held by ``consumer`` until acknowledged."""
        with _group_present():
            reply = await self.redis.xreadgroup(
                keys.WEBHOOK_GROUP, consumer, {keys.EVENTS: ">"}, count=count, block=block_ms
            )
        return list(reply[0][1]) if reply else []

    async def claim_stale(self, consumer: str, min_idle_ms: int, count: int) -> list[Row]:
        """Events another consumer took over ``min_idle_ms`` ago and never acknowledged (it crashed)."""
        with _group_present():
            reply = await self.redis.xautoclaim(
                keys.EVENTS,
                keys.WEBHOOK_GROUP,
                consumer,
                min_idle_time=min_idle_ms,
                start_id="0-0",
                count=count,
            )
        return list(reply[1])

    async def ack(self, entry_id: str) -> None:
        """The event is queued for every URL (or had nothing to queue): no consumer takes it again."""
        await self.redis.xack(keys.EVENTS, keys.WEBHOOK_GROUP, entry_id)

    async def leave(self, consumer: str) -> None:
        """Remove ``consumer`` from the group, unless it still holds events (another claims those later)."""
        pending = await self.redis.xpending_range(
            keys.EVENTS, keys.WEBHOOK_GROUP, min="-", max="+", count=1, consumername=consumer
        )
        if not pending:
            await self.redis.xgroup_delconsumer(keys.EVENTS, keys.WEBHOOK_GROUP, consumer)

    # The delivery queue ----------------------------------------------------------------------------

    async def enqueue(self, body: str, deliveries: list[tuple[str, str]], now_ms: int, ttl_s: int) -> int:
        """Queue ``body`` for each (delivery id, URL) pair not queued within ``ttl_s``; how many were."""
        pairs = [part for delivery in deliveries for part in delivery]
        args = [now_ms, ttl_s, body, *pairs]
        return int(await self.scripts.call(self.redis, "enqueue_webhooks", [keys.WEBHOOK_PREFIX], args))

    async def claim_due(self, now_ms: int, lease_ms: int, count: int) -> list[str]:
        """Up to ``count`` deliveries due now, each held for ``lease_ms`` (then due again if not settled)."""
        args = [now_ms, lease_ms, count]
        ids = await self.scripts.call(self.redis, "claim_webhooks", [keys.WEBHOOK_PREFIX], args)
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
    """Redis's NOGROUP reply raised as ``GroupMissing``."""
    try:
        yield
    except ResponseError as exc:
        if str(exc).startswith("NOGROUP"):
            raise GroupMissing(str(exc)) from exc
        raise
