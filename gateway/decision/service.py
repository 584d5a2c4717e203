"""The gateway's core service: raise, receive, resolve, cancel, expire, adopt; the outbox does the rest.

``Gateway`` is the parts put together (``gateway.decision.raising``, ``gateway.decision.settling``,
``gateway.decision.receiving``)
with the process's lifecycle: its background sweepers, adoption and the Redis pool's trim."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

from gateway.base.ids import parse_thread_id
from gateway.base.logs import event
from gateway.base.models import Resolution
from gateway.base.tasks import cancel_and_wait
from gateway.decision.adoption import Adoption
from gateway.decision.outbox import LOCK_TTL_MS as OUTBOX_LOCK_MS
from gateway.decision.outbox import Outbox
from gateway.decision.raising import ABORTED_REASON, RUN_ENDED_REASON, SUPERSEDED_REASON, unavailable_message
from gateway.decision.receiving import DECLINED_REASON, Receiving
from gateway.decision.settling import (
    DRAFT_GRACE_MS,
    EXPIRED_REASON,
    WATCH_GRACE_MS,
    AnswerResult,
    AnswerStatus,
    edited_call,
)
from gateway.delivery.channel import Channels
from gateway.delivery.feeds import Feeds
from gateway.delivery.waiters import Waiters
from gateway.rules.outcomes import Draft, DraftStatus, Outcome, Received
from gateway.store import Store, trim_idle
from gateway.store.outage import StoreHealth

POOL_TRIM_S = 10.0  # how often Redis connections a burst opened and left idle are closed
IDLE_CONNECTIONS_KEPT = 2


class Gateway(Receiving):
    """The core: every path (chat reply, control press, REST) comes through here."""

    def __init__(
        self,
        store: Store,
        channels: Channels,
        *,
        clock: Callable[[], float] = time.time,
        sweep_interval: float = 2.0,
        health: StoreHealth | None = None,
        outbox_lock_ms: int = OUTBOX_LOCK_MS,
    ) -> None:
        self.store = store
        self.channels = channels
        self.clock = clock
        self.health = health or StoreHealth(store.redis)
        self.outbox = Outbox(store, channels, clock, health=self.health, lock_ttl_ms=outbox_lock_ms)
        self.waiters = Waiters(store.redis, health=self.health)
        self.feeds = Feeds(store.redis, report=self.health.report)
        self.sweep_interval = sweep_interval
        self.adoption = Adoption(store, self.health)
        self._tasks: list[asyncio.Task[Any]] = []

    # Lifecycle -------------------------------------------------------------------------------------

    async def start(self, *, adopt: bool = True) -> None:
        """Load scripts and listen for settled prompts, then serve at once: adopting the waiting prompts
        (unless ``adopt`` is False: another process of the same start does it), the first sweep of
        outboxes left behind and the periodic sweepers all run in the background."""
        await self.store.load()
        await self.waiters.start()
        await self.feeds.start()
        self._tasks = [
            asyncio.create_task(self._sweep_all_then_every(self.sweep_interval), name="threadgate.sweep"),
            asyncio.create_task(self._every(self.sweep_interval, self.expire_due), name="threadgate.expiry"),
            asyncio.create_task(
                self._every(self.sweep_interval, self.escalate_due), name="threadgate.escalation"
            ),
            asyncio.create_task(self._every(POOL_TRIM_S, self.trim_pool), name="threadgate.pool_trim"),
        ]
        if adopt:
            self._tasks.append(self.adoption.start())

    async def stop(self) -> None:
        await cancel_and_wait(self._tasks)
        self._tasks = []
        await self.outbox.idle()
        await self.feeds.stop()
        await self.waiters.stop()

    async def _sweep_all_then_every(self, interval: float) -> None:
        """Deliver every outbox left behind (by a process that died, however recently), retried every
        ``interval`` until it went through; then sweep the ones left a while ago every ``interval``."""
        swept_all = False
        while True:
            if swept_all:
                await self._attempt(self.outbox.sweep)
            else:
                swept_all = await self._attempt(self.sweep_left_behind)
            await asyncio.sleep(interval)

    async def sweep_left_behind(self) -> int:
        """Drain every thread marked dirty, however recently."""
        return await self.outbox.sweep(everything=True)

    async def _every(self, interval: float, job: Callable[[], Any]) -> None:
        while True:
            await self._attempt(job)
            await asyncio.sleep(interval)

    async def _attempt(self, job: Callable[[], Any]) -> bool:
        """Run a background job once: False when it failed (logged; a store outage once, by the health
        record)."""
        try:
            await job()
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            name = getattr(job, "__name__", "?")
            if not self.health.report(exc, name):
                event("background.failed", logging.WARNING, job=name, error=str(exc))
            return False
        finally:
            # redis-py may swallow a cancellation that lands mid-command; honour it here, or stop() hangs.
            if (task := asyncio.current_task()) is not None and task.cancelling():
                raise asyncio.CancelledError
        return True

    async def trim_pool(self) -> None:
        """Close the Redis connections a burst of requests opened and left idle: waiting agents hold
        none, so an idle process keeps only a few (plus the stream follower and the pub/sub)."""
        await trim_idle(self.store.redis, IDLE_CONNECTIONS_KEPT)

    async def adopt(self) -> int:
        """Take back every pending prompt from Redis: count it, forget settled ones (see ``Adoption``)."""
        return await self.adoption.adopt()

    async def read_thread(
        self, thread_id: str, after: str | None = None, limit: int = 100, wait: float = 0
    ) -> list[tuple[str, dict[str, Any]]]:
        """The thread's item log after the cursor ``after``, oldest first, as (cursor, entry) pairs.

        While nothing is there yet, waits up to ``wait`` seconds for the next item: the process follows the
        log once for all its readers (see ``gateway.delivery.feeds``), so a waiting reader holds no Redis
        connection.
        """
        thread = parse_thread_id(thread_id)
        async with self.feeds.thread_log(thread.thread_id) as log:
            rows = await self.feeds.read(log, log.vector(after), limit, wait)
        return [(entry.id, entry.data) for entry in rows]


__all__ = [
    "ABORTED_REASON",
    "DECLINED_REASON",
    "DRAFT_GRACE_MS",
    "EXPIRED_REASON",
    "RUN_ENDED_REASON",
    "SUPERSEDED_REASON",
    "WATCH_GRACE_MS",
    "AnswerResult",
    "AnswerStatus",
    "Draft",
    "DraftStatus",
    "Gateway",
    "Outcome",
    "Received",
    "Resolution",
    "edited_call",
    "unavailable_message",
]
