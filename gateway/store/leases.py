"""A lease's keys in Redis: who holds it (for a TTL) and its fencing counter."""

from __future__ import annotations

from typing import Any

from gateway.store import calls, keys
from gateway.store.scripts import Scripts


class LeaseRecords:
    """Takes, renews and gives up leases by name for a holder; each take draws a new fencing token."""

    def __init__(self, redis: Any) -> None:
        self.redis = redis
        self.scripts = Scripts()

    async def holder(self, name: str) -> str | None:
        value: str | None = await self.redis.get(keys.lease(name))
        return value

    async def take(self, name: str, holder: str, ttl_ms: int) -> int | None:
        """Take the lease if it is free or already ``holder``'s: the new fencing token, else None."""
        if not await self.scripts.call(self.redis, *calls.take_lease(name, holder, ttl_ms)):
            return None
        return int(await self.redis.incr(keys.lease_fence(name)))

    async def renew(self, name: str, holder: str, ttl_ms: int) -> bool:
        """Extend the lease if ``holder`` still holds it."""
        return bool(await self.scripts.call(self.redis, *calls.renew_lease(name, holder, ttl_ms)))

    async def release(self, name: str, holder: str) -> None:
        """Give the lease up if ``holder`` still holds it."""
        await self.scripts.call(self.redis, *calls.release_held(keys.lease(name), holder))
