"""The feeds (events, messages, history): entries appended once each, bounded by count and age, read back."""

from __future__ import annotations

import time
from typing import Any

from redis.asyncio.cluster import RedisCluster

from gateway.base.models import Prompt
from gateway.store import keys
from gateway.store.base import StoreBase
from gateway.store.escalations import unscheduled
from gateway.store.inbox import unindexed
from gateway.store.publishing import plan
from gateway.store.results import FeedEntry
from gateway.store.scripts import ScriptCall


def share(maxlen: int) -> int:
    """A partition's share of a feed's length cap (rounded up: the feed keeps at least ``maxlen``)."""
    return -(-maxlen // keys.PARTITIONS)


class Feeds(StoreBase):
    """Appending to, trimming and reading the partitioned feeds."""

    async def publish(
        self, entries: list[FeedEntry], settled: list[Prompt], now_ms: int | None = None
    ) -> None:
        """Append feed entries, each once by its id (see ``publish_feed.lua``), and drop settled prompts
        from the inbox and expiry indexes: one round trip. A settled prompt's id index keeps the lifetime
        its opening gave it (the prompt's expiry plus the retain time)."""
        await self._publish_then(entries, settled, [], now_ms)

    async def _publish_then(
        self,
        entries: list[FeedEntry],
        settled: list[Prompt],
        then: list[ScriptCall],
        now_ms: int | None = None,
    ) -> list[Any]:
        """``publish``, then the scripts ``then`` (each on its own keys) once it is done: on one server all
        in one round trip, in that order. Returns the replies of ``then``."""
        now_ms = now_ms if now_ms is not None else int(time.time() * 1000)
        drops = [*unindexed(settled), *unscheduled(settled)]
        cluster = isinstance(self.redis, RedisCluster)
        publishes = [
            group.call(lambda stream: self._caps(stream, now_ms)[0], self.feed_dedupe_s)
            for group in plan(entries, drops, by_slot=cluster)
        ]
        if cluster:  # the partitions live on several nodes: the publish first, then the rest
            if publishes:
                await self.scripts.call_many(self.redis, publishes)
            return await self.scripts.call_many(self.redis, then) if then else []
        commands = [
            *(self.scripts.command(*call) for call in publishes),
            *(self.scripts.command(*call) for call in then),
        ]
        if not commands:
            return []
        replies = await self.scripts.run_commands(self.redis, commands)
        return replies[len(replies) - len(then) :]

    def _unlisted(self, settled: list[Prompt]) -> list[tuple[Any, ...]]:
        """On one server: the plain commands that drop settled prompts from the indexes and schedules
        (each idempotent, so they need no marker)."""
        return [*unindexed(settled), *unscheduled(settled)]

    def _caps(self, stream: str, now_ms: int) -> tuple[int, str]:
        """A feed partition's bounds at ``now_ms``: about how many entries it keeps (its share of the
        feed's), and the oldest stream id it keeps (entries before it are past the retention). The history
        has its own."""
        if keys.is_history(stream):
            return share(self.history_maxlen), f"{max(now_ms - self.history_max_age_ms, 0)}-0"
        return share(self.feed_maxlen), f"{max(now_ms - self.feed_max_age_ms, 0)}-0"

    async def trim_feeds(self, now_ms: int) -> None:
        """Drop feed entries past the retention while no new entry comes to trim them (the sweeper)."""
        pipe = self.redis.pipeline(transaction=False)
        for part in keys.EVERY_PARTITION:
            for stream in (keys.events_feed(part), keys.messages_feed(part), keys.history_feed(part)):
                pipe.xtrim(stream, minid=self._caps(stream, now_ms)[1], approximate=False)
        await pipe.execute()

    async def history_rows(
        self, part: int, low: str, high: str, count: int, *, newest_first: bool
    ) -> list[tuple[str, str]]:
        """Up to ``count`` records of history partition ``part`` (``keys.history_feed``) with stream ids
        between ``low`` and ``high`` (XRANGE bounds: ``-``, ``+``, ``<ms>``, ``(<id>``), newest or oldest
        first: (stream id, record JSON) pairs."""
        stream = keys.history_feed(part)
        if newest_first:
            rows = await self.redis.xrevrange(stream, max=high, min=low, count=count)
        else:
            rows = await self.redis.xrange(stream, min=low, max=high, count=count)
        return [(str(entry_id), str(fields.get("j", ""))) for entry_id, fields in rows]
