"""Leases: exactly one process per bot token holds a long-lived platform connection.

A lease is a Redis key holding the holder's id, renewed well before its TTL runs out. Each acquisition
takes a new fencing token (a counter), so work started under an older token can be told apart. When the
holder dies, the key expires and another process takes over within one TTL plus one retry interval.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import os
import socket
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from gateway.base import metrics
from gateway.base.logs import event
from gateway.store.leases import LeaseRecords
from gateway.store.outage import StoreHealth

Work = Callable[[int], Awaitable[None]]


def lease_name(platform: str, secret: str) -> str:
    """A lease name per bot token that does not reveal the token."""
    return f"{platform}:{hashlib.sha256(secret.encode()).hexdigest()[:16]}"


class Lease:
    """Run ``work(fence)`` only while this process holds the lease ``name``."""

    def __init__(
        self,
        redis: Any,
        name: str,
        *,
        ttl_ms: int = 15_000,
        holder: str | None = None,
        health: StoreHealth | None = None,
    ) -> None:
        self.records = LeaseRecords(redis)
        self.health = health or StoreHealth(redis)
        self.name = name
        self.ttl_ms = ttl_ms
        self.holder = holder or f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.fence: int | None = None
        self._stopping = asyncio.Event()

    @property
    def held(self) -> bool:
        return self.fence is not None

    async def current_holder(self) -> str | None:
        return await self.records.holder(self.name)

    async def try_acquire(self) -> bool:
        fence = await self.records.take(self.name, self.holder, self.ttl_ms)
        if fence is not None:
            self.fence = fence
            event("lease.acquired", lease=self.name, holder=self.holder, fence=self.fence)
            metrics.lease_held(self.name, True)
            return True
        return False

    async def renew(self) -> bool:
        return await self.records.renew(self.name, self.holder, self.ttl_ms)

    async def release(self) -> None:
        if self.fence is not None:
            with contextlib.suppress(Exception):
                await self.records.release(self.name, self.holder)
            event("lease.released", lease=self.name, holder=self.holder)
            metrics.lease_held(self.name, False)
        self.fence = None

    def stop(self) -> None:
        self._stopping.set()

    async def _store_says(self, ask: Callable[[], Awaitable[bool]], failed: str) -> bool:
        """``ask``'s answer; False when the store failed (an outage reported once, else ``failed`` logged)."""
        try:
            return await ask()
        except Exception as exc:
            if not self.health.report(exc, f"lease:{self.name}"):
                event(failed, logging.WARNING, lease=self.name, error=str(exc))
            return False

    async def run(self, work: Work) -> None:
        """Acquire, run ``work`` while renewing, release on stop; retry acquisition while another holds it."""
        interval = self.ttl_ms / 3000
        while not self._stopping.is_set():
            if await self._store_says(self.try_acquire, "lease.error"):
                assert self.fence is not None
                await self._hold(work(self.fence), interval)
                await self.release()
            if not self._stopping.is_set():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stopping.wait(), interval)

    async def _hold(self, work: Awaitable[None], interval: float) -> None:
        task = asyncio.ensure_future(work)
        try:
            while not task.done() and not self._stopping.is_set():
                # wait(), not wait_for(): work that failed must reach the finally below (logged, then
                # the lease is released and retried), not escape run() and end the retries.
                await asyncio.wait({task}, timeout=interval)
                if task.done():
                    break
                if not await self._store_says(self.renew, "lease.renew_failed"):
                    event("lease.lost", logging.WARNING, lease=self.name, holder=self.holder)
                    break
        finally:
            if not task.done():
                task.cancel()
            with contextlib.suppress(BaseException):
                await task
            if task.done() and not task.cancelled() and task.exception() is not None:
                event("lease.work_failed", logging.WARNING, lease=self.name, error=str(task.exception()))
