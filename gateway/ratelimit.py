"""A fixed-window rate limit counted in Redis, so it holds across every gateway process."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from gateway.errors import GatewayError

# One round trip, atomic: count the hit, start the window on the first one, say how long it has left.
_HIT = """
local count = redis.call('INCR', KEYS[1])
if count == 1 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {count, ttl}
"""


@dataclass(frozen=True, slots=True)
class Verdict:
    allowed: bool
    count: int
    retry_after: int  # whole seconds until the window resets (at least 1)


class RateLimiter:
    """At most ``limit`` hits per ``window_s`` seconds per key (one key per person)."""

    def __init__(self, redis: Any, *, limit: int, window_s: int, prefix: str = "tg:rl") -> None:
        self.redis = redis
        self.limit = limit
        self.window_ms = window_s * 1000
        self.prefix = prefix

    def key(self, who: str) -> str:
        digest = hashlib.sha256(who.encode("utf-8", "surrogateescape")).hexdigest()[:32]
        return f"{self.prefix}:{digest}"

    async def hit(self, who: str, limit: int | None = None, window_s: int | None = None) -> Verdict:
        """Count one hit for ``who``; allowed while within ``limit`` per ``window_s`` (default: the
        limiter's). A ``who`` is counted in one window only: name the rule in it."""
        window_ms = self.window_ms if window_s is None else window_s * 1000
        count, ttl_ms = await self.redis.eval(_HIT, 1, self.key(who), window_ms)
        retry_after = max(1, math.ceil(int(ttl_ms) / 1000))
        return Verdict(int(count) <= (self.limit if limit is None else limit), int(count), retry_after)

    async def enforce(self, hits: Iterable[tuple[str, int, int | None]], what: str) -> None:
        """Count each ``(who, limit, window_s)`` in turn; the first over its limit raises 429 RATE_LIMITED
        (later ones are not counted)."""
        for who, limit, window_s in hits:
            verdict = await self.hit(who, limit, window_s)
            if not verdict.allowed:
                raise too_many(verdict, what)


def too_many(verdict: Verdict, what: str) -> GatewayError:
    """429 RATE_LIMITED with ``retry_after``, which the response also sends as ``Retry-After``."""
    return GatewayError(
        "RATE_LIMITED",
        f"Too many {what}; try again in {verdict.retry_after} s.",
        429,
        {"retry_after": verdict.retry_after},
    )
