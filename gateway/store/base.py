"""What every part of the store shares: the client, the scripts, the settings and the process's caches."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from gateway.base.models import HumanInput, Prompt, Run
from gateway.store import keys
from gateway.store.codec import RecordCodec
from gateway.store.escalations import EscalationStore
from gateway.store.grants import RunGrants
from gateway.store.lru import LATEST_KEPT, LRU, RUNS_KEPT, THREADS_OF_KEPT
from gateway.store.owners import Ownership
from gateway.store.people import PeopleStore
from gateway.store.push import PushSubscriptions
from gateway.store.results import OutboxClaim
from gateway.store.scripts import ScriptCall, Scripts, thread_lead
from gateway.store.session_runs import SessionRuns
from gateway.store.signins import SignIns

DAY_MS = 24 * 3600 * 1000
RETAIN_MS = 30 * DAY_MS  # a settled prompt, an ended run
THREAD_IDLE_MS = 30 * DAY_MS  # a thread's log, owners and outbox after its last write
FEED_MAXLEN = 100_000  # entries kept per feed (events, messages), about, a twelfth per partition
FEED_MAX_AGE_MS = 7 * DAY_MS  # and none older than this
FEED_DEDUPE_S = 3600  # how long an appended entry's id is remembered, so a second drain adds nothing
HISTORY_MAXLEN = 250_000  # records kept in the history, about, a twelfth per partition
HISTORY_MAX_AGE_MS = 90 * DAY_MS  # and none older than this (THREADGATE_HISTORY_DAYS)


def pairs(flat: list[Any]) -> dict[str, str]:
    """A flat field, value, field, value ... reply as a dict."""
    return {str(flat[i]): str(flat[i + 1]) for i in range(0, len(flat), 2)}


def ranked(replies: list[list[Any]], *, newest_first: bool) -> list[tuple[int, str]]:
    """Partitions' ``(member, score)`` replies as one list of (score, member), by score then member, each
    member once (one moved from the legacy index may briefly be in both)."""
    rows = {str(member): int(float(score)) for reply in replies for member, score in reply}
    return sorted(((score, member) for member, score in rows.items()), reverse=newest_first)


def oldest(replies: list[list[Any]], limit: int) -> list[str]:
    """The ``limit`` members with the lowest scores across the partitions' replies."""
    return [member for _, member in ranked(replies, newest_first=False)[:limit]]


class StoreBase:
    """The state the store's parts (``gateway.store.store``) share, and the helpers they call scripts with."""

    def __init__(
        self,
        client: Any,
        *,
        retain_ms: int = RETAIN_MS,
        dedupe_ttl_s: int = 48 * 3600,
        items_maxlen: int = 500,
        feed_maxlen: int = FEED_MAXLEN,
        feed_max_age_ms: int = FEED_MAX_AGE_MS,
        thread_idle_ms: int = THREAD_IDLE_MS,
        feed_dedupe_s: int = FEED_DEDUPE_S,
        history_maxlen: int = HISTORY_MAXLEN,
        history_max_age_ms: int = HISTORY_MAX_AGE_MS,
    ) -> None:
        self.redis = client
        self.clock: Callable[[], float] = time.time
        self.scripts = Scripts()
        self.codec = RecordCodec()
        self.retain_ms = retain_ms
        self.dedupe_ttl_s = dedupe_ttl_s
        self.items_maxlen = items_maxlen
        self.feed_maxlen = feed_maxlen
        self.feed_max_age_ms = feed_max_age_ms
        self.thread_idle_ms = thread_idle_ms
        self.feed_dedupe_s = feed_dedupe_s
        self.history_maxlen = history_maxlen
        self.history_max_age_ms = history_max_age_ms
        self._thread_of: LRU[str] = LRU(THREADS_OF_KEPT)
        # Immutable records this process has seen: a run (its state aside) and each thread's latest
        # prompt, so a raise and a starter's reply need not read them back before their one script.
        self._runs: LRU[Run] = LRU(RUNS_KEPT)
        self._latest: LRU[Prompt] = LRU(LATEST_KEPT)
        self._settings: dict[str, tuple[float, HumanInput]] = {}
        self.owners = Ownership(client)
        self.grants = RunGrants(client, self.scripts, thread_idle_ms)
        self.session_runs = SessionRuns(client, self.scripts, thread_idle_ms)
        self.escalations = EscalationStore(self)
        self.signins = SignIns(client)
        self.push = PushSubscriptions(client)
        self.people = PeopleStore(client, self.scripts)

    async def load(self) -> None:
        await self.scripts.load(self.redis)

    async def ping(self) -> None:
        """One round trip to Redis (raises when it cannot answer)."""
        await self.redis.ping()

    def _lead(self, now_ms: int | None = None, claim: OutboxClaim | None = None) -> list[int | str]:
        """The arguments every thread script starts with (see ``thread_lead``); the store's ``clock`` where
        the caller names no time (a read: what lapsed, such as a claim, is read as lapsed by that clock)."""
        now = now_ms if now_ms is not None else int(self.clock() * 1000)
        return thread_lead(self.thread_idle_ms, now, claim.arg if claim is not None else "")

    async def _thread_script(
        self, thread_id: str, call: ScriptCall, now_ms: int, prelude: list[tuple[Any, ...]] | None = None
    ) -> list[Any]:
        """Run a thread script after marking the thread dirty for the outbox (and any other ``prelude``
        commands), in one round trip."""
        commands = [
            ("ZADD", keys.dirty_threads(keys.partition(thread_id)), now_ms, thread_id),
            *(prelude or []),
        ]
        return list(await self.scripts.run_after(self.redis, commands, *call))

    async def _each_partition(self, read: Any) -> list[Any]:
        """``read(pipe, part)`` queued for every partition (the legacy keys too) in one pipelined round
        trip (on a cluster, one per node); the replies in partition order."""
        pipe = self.redis.pipeline(transaction=False)
        for part in keys.EVERY_PARTITION:
            read(pipe, part)
        return list(await pipe.execute())

    async def _scored_up_to(self, index: Callable[[int], str], cutoff: int, limit: int) -> list[str]:
        """Up to ``limit`` members of a partitioned sorted set (``index(part)``) scored at or below
        ``cutoff``, the lowest first."""
        replies = await self._each_partition(
            lambda pipe, part: pipe.zrangebyscore(
                index(part), "-inf", cutoff, start=0, num=limit, withscores=True
            )
        )
        return oldest(replies, limit)

    async def _indexed_thread(self, object_id: str, index_key: str) -> str | None:
        """The thread of a run or prompt: remembered here, else read from its index key."""
        thread = self._thread_of.get(object_id)
        if thread is None:
            thread = await self.redis.get(index_key)
            if thread is not None:
                self._thread_of.put(object_id, thread)
        return thread

    async def prompt_thread(self, prompt_id: str) -> str | None:
        return await self._indexed_thread(prompt_id, keys.prompt_index(prompt_id))

    async def run_thread(self, run_id: str) -> str | None:
        return await self._indexed_thread(run_id, keys.run_index(run_id))
