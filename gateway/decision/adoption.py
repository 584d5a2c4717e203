"""Adopting the prompts left waiting in Redis, in the background while the process already serves.

Everything a waiting prompt needs is in Redis, so a process serves it from its first request; adoption
only counts what is waiting, drops inbox entries of prompts that settled without leaving the indexes
(a process that died in between), and moves the one-key indexes of earlier versions into the partitions.
With a million waiting that takes a while, so it never holds up start.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from gateway.base.backoff import Retry
from gateway.base.logs import event
from gateway.store import Store
from gateway.store.legacy import move_legacy_indexes
from gateway.store.outage import StoreHealth

PROGRESS_EVERY_S = 5.0
RETRY = Retry(base_s=1.0, max_s=60.0)


class Adoption:
    """One pass over the inbox (``adopt``), and the background task that runs it until it succeeds."""

    def __init__(
        self, store: Store, health: StoreHealth, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.store = store
        self.health = health
        self.clock = clock
        self.seen = 0
        self.total = 0  # the inbox's size when the pass began
        self.adopted: int | None = None  # set once a pass finished
        self.running = False

    @property
    def done(self) -> bool:
        return self.adopted is not None

    def describe(self) -> str:
        """Where adoption stands, in a few words (readiness details)."""
        if self.adopted is not None:
            return f"done: {self.adopted:,} waiting prompts"
        if self.running:
            return f"in progress: {self.seen:,} of {self.total:,} read"
        return "not run by this process"

    async def adopt(self) -> int:
        """Read every inbox entry with its prompt's state: count the pending ones, forget settled ones.

        Requests go on meanwhile: the inbox is scanned with a cursor that a prompt raised or settled
        during the pass cannot make it skip (one seen twice is counted twice, which only the log sees)."""
        self.running, self.seen, self.total = True, 0, await self.store.pending_count()
        pending, stale = 0, []
        began = last_said = self.clock()
        async for batch in self.store.pending_states():
            self.seen += len(batch)
            for prompt_id, state in batch:
                if state == "pending":
                    pending += 1
                else:
                    stale.append(prompt_id)
            if self.clock() - last_said >= PROGRESS_EVERY_S:
                last_said = self.clock()
                event("startup.adopting", read=self.seen, of=self.total, seconds=round(last_said - began, 1))
        for prompt_id in stale:  # after the scan, so the scan reads the inbox as it was
            prompt = await self.store.get_prompt(prompt_id)
            agent, thread = (prompt.agent, prompt.thread_id) if prompt else ("", None)
            await self.store.forget_pending(prompt_id, agent, thread)
        moved = await move_legacy_indexes(self.store.redis)
        self.adopted = pending
        seconds = round(self.clock() - began, 1)
        event("startup.adopted", pending=pending, forgotten=len(stale), moved=moved, seconds=seconds)
        return pending

    def start(self) -> asyncio.Task[None]:
        """Adopt in a background task (see ``run``)."""
        self.running = True
        return asyncio.create_task(self.run(), name="threadgate.adopt")

    async def run(self) -> None:
        """Adopt until a pass succeeds: a failure is logged (a store outage once, by the health record)
        and the pass retried with backoff, never raised into the process."""
        failures = 0
        while True:
            try:
                await self.adopt()
                return
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                failures += 1
                delay = RETRY.delay(failures)
                if not self.health.report(exc, "adopt"):
                    event(
                        "startup.adoption_failed",
                        logging.WARNING,
                        error=str(exc) or type(exc).__name__,
                        retry_in_s=round(delay, 1),
                    )
            await asyncio.sleep(delay)
