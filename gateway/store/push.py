"""People's Web Push subscriptions in Redis: a hash per person, by a hash of each endpoint."""

from __future__ import annotations

import hashlib
import json
import time
from typing import Any

from gateway.store import keys

MAX_PER_PERSON = 10  # browsers a person may subscribe; the oldest is dropped for a new one beyond


def endpoint_key(endpoint: str) -> str:
    return hashlib.sha256(endpoint.encode()).hexdigest()[:32]


class PushSubscriptions:
    """Subscriptions as browsers give them (``PushSubscription.toJSON()``), a few per person."""

    def __init__(self, client: Any) -> None:
        self.redis = client

    async def add(self, person: str, subscription: dict[str, Any]) -> bool:
        """Keep ``subscription`` for ``person`` (replacing one with the same endpoint); True when new. Past
        ``MAX_PER_PERSON`` the one kept longest is dropped."""
        key = keys.push_subscriptions(person)
        record = json.dumps({**subscription, "added": int(time.time() * 1000)}, separators=(",", ":"))
        created = bool(await self.redis.hset(key, endpoint_key(subscription["endpoint"]), record))
        held = await self.redis.hgetall(key)
        if len(held) > MAX_PER_PERSON:
            oldest = sorted(held.items(), key=lambda item: json.loads(item[1]).get("added", 0))
            await self.redis.hdel(key, *(field for field, _ in oldest[: len(held) - MAX_PER_PERSON]))
        return created

    async def remove(self, person: str, endpoint: str | None = None) -> int:
        """Drop one subscription (by its endpoint) or, with None, every one of ``person``'s; how many."""
        key = keys.push_subscriptions(person)
        if endpoint is None:
            held = int(await self.redis.hlen(key))
            await self.redis.delete(key)
            return held
        return int(await self.redis.hdel(key, endpoint_key(endpoint)))

    async def of(self, person: str) -> list[dict[str, Any]]:
        """``person``'s subscriptions, as the browser gave them."""
        held = await self.redis.hgetall(keys.push_subscriptions(person))
        found = []
        for raw in held.values():
            record = json.loads(raw)
            record.pop("added", None)
            found.append(record)
        return found

