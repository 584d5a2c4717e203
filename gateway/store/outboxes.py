"""Threads' outboxes: the posts and events a thread owes, the dirty sets that say which threads owe some,
and the passes that drain them under each thread's lock."""

from __future__ import annotations

import json
import time
from typing import Any

from redis.asyncio.cluster import RedisCluster

from gateway.base.models import Prompt
from gateway.store import calls, keys
from gateway.store.base import oldest, pairs
from gateway.store.feeds import Feeds
from gateway.store.results import HeldOutbox, OutboxBatch, OutboxClaim, OutboxPass


def outbox_batch(reply: list[Any]) -> OutboxBatch | None:
    """A ``take_outbox`` reply (or the batch a settling script appended): ``None`` when the lock is another's
    (``busy``), an empty batch when it was released or only renewed, else the batch decoded."""
    if reply[0] == "busy":
        return None
    if reply[0] in ("released", "renewed"):
        return OutboxBatch([], [], {})
    _, pub, chat, prompts = reply
    return OutboxBatch(
        [json.loads(raw) for raw in pub],
        [json.loads(raw) for raw in chat],
        {str(prompts[i]): pairs(prompts[i + 1]) for i in range(0, len(prompts), 2)},
    )


def held(claim: OutboxClaim | None, rest: list[Any]) -> HeldOutbox | None:
    """The outbox a settling script took under ``claim``: its reply's trailing batch, when it has one."""
    if claim is None or not rest:
        return None
    batch = outbox_batch(rest[0])
    return HeldOutbox(claim.token, batch) if batch is not None else None


def dirty_sets(thread_id: str) -> list[str]:
    """The dirty sets a thread may be marked in: its partition's, and the one set of earlier versions
    (until ``legacy.move_legacy_indexes`` has emptied it)."""
    return [keys.dirty_threads(keys.partition(thread_id)), keys.DIRTY]


class Outboxes(Feeds):
    """Which threads owe posts or events, and the passes that take them."""

    async def dirty_threads(self, cutoff_ms: int, limit: int = 100) -> list[str]:
        """Up to ``limit`` threads marked dirty at or before ``cutoff_ms``, the longest waiting first."""
        return await self._scored_up_to(keys.dirty_threads, cutoff_ms, limit)

    async def drop_dirty(self, thread_id: str, cutoff_ms: int) -> None:
        """Forget a drained thread in the dirty sets (its partition's and the legacy one), unless it was
        marked again after ``cutoff_ms``: one round trip."""
        drops = [calls.drop_dirty(key, thread_id, cutoff_ms) for key in dirty_sets(thread_id)]
        await self.scripts.call_many(self.redis, drops)

    async def queue_depths(self, sample: int) -> tuple[int, int, int]:
        """Threads with outbox work, the posts and events the first ``sample`` of them still owe, and
        webhook deliveries waiting: what a metrics scrape reports."""

        def read(pipe: Any, part: int) -> None:
            pipe.zrange(keys.dirty_threads(part), 0, sample - 1, withscores=True)
            pipe.zcard(keys.dirty_threads(part))

        replies = await self._each_partition(read)  # each partition's first members, then its size
        dirty = oldest(replies[0::2], sample)
        threads = sum(int(n) for n in replies[1::2])
        depth = 0
        if dirty:
            pipe = self.redis.pipeline(transaction=False)
            for thread_id in dirty:
                pipe.llen(keys.chat_outbox(thread_id))
                pipe.llen(keys.pub_outbox(thread_id))
            depth = sum(int(n) for n in await pipe.execute())
        return threads, depth, int(await self.redis.zcard(keys.WEBHOOK_DUE))

    async def take_outboxes(
        self, passes: list[OutboxPass], settled: list[Prompt] | None = None
    ) -> list[OutboxBatch | None]:
        """One round trip for many threads' passes: each acknowledges its last pass, then takes its next
        batch or releases its lock (see ``OutboxPass``). ``None`` where another process holds the lock
        (or ours lapsed); an empty batch where the lock was released.

        The passes' ``entries`` (the events they acknowledge) and ``settled`` (the prompts those events
        settled, dropped from the indexes) go out in the same round trip: on one server each pass appends
        its own events in the step that acknowledges them; on a cluster they are published first (see
        ``publish``), so an event leaves its list only once it is in its feed."""
        if isinstance(self.redis, RedisCluster):
            takes = [calls.take_outbox(self._lead(), one, self.items_maxlen) for one in passes]
            entries = [entry for one in passes for entry in one.entries]
            if entries or settled:
                replies = await self._publish_then(entries, settled or [], takes)
            else:
                replies = await self.scripts.call_many(self.redis, takes)
            return [outbox_batch(reply) for reply in replies]
        now_ms = int(time.time() * 1000)
        takes = [
            calls.take_outbox(self._lead(), one, self.items_maxlen, lambda feed: self._caps(feed, now_ms)[0])
            for one in passes
        ]
        replies = await self.scripts.run_commands(
            self.redis, [*self._unlisted(settled or []), *(self.scripts.command(*call) for call in takes)]
        )
        return [outbox_batch(reply) for reply in replies[len(replies) - len(takes) :]]

    async def push_chat(self, thread_id: str, effect: dict[str, Any], now_ms: int) -> None:
        """Queue a chat post for a thread (an agent message), marking the thread dirty first."""
        pipe = self.redis.pipeline(transaction=False)
        pipe.zadd(keys.dirty_threads(keys.partition(thread_id)), {thread_id: now_ms})
        pipe.rpush(keys.chat_outbox(thread_id), json.dumps(effect, ensure_ascii=False))
        # A list this creates lives the idle time; the drain's script then gives it the thread's lifetime.
        pipe.pexpire(keys.chat_outbox(thread_id), self.thread_idle_ms, nx=True)
        pipe.delete(keys.thread_kept(thread_id))
        await pipe.execute()
