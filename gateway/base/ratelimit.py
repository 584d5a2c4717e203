"""A fixed-window rate limit counted in the store, so it holds across every gateway process."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from gateway.base.errors import GatewayError


class HitCounter(Protocol):
    """Counts hits in fixed windows shared by every process (the store)."""

    async def count_hit(self, name: str, window_ms: int) -> tuple[int, int]:
        """One more hit in window ``name``: the hits so far and the milliseconds it has left."""
        ...


@dataclass(frozen=True, slots=True)
class Verdict:
    allowed: bool
    count: int
    retry_after: int  # whole seconds until the window resets (at least 1)


class RateLimiter:
    """At most ``limit`` hits per ``window_s`` seconds per key (one key per person)."""

    def __init__(self, counter: HitCounter, *, limit: int, window_s: int) -> None:
        self.counter = counter
        self.limit = limit
        self.window_ms = window_s * 1000

    @staticmethod
    def window(who: str) -> str:
        """The window's name: a digest, so no caller's text becomes part of a key."""
        return hashlib.sha256(who.encode("utf-8", "surrogateescape")).hexdigest()[:32]

    async def hit(self, who: str, limit: int | None = None, window_s: int | None = None) -> Verdict:
        """Count one hit for ``who``; allowed while within ``limit`` per ``window_s`` (default: the
        limiter's). A ``who`` is counted in one window only: name the rule in it."""
        window_ms = self.window_ms if window_s is None else window_s * 1000
        count, left_ms = await self.counter.count_hit(self.window(who), window_ms)
        retry_after = max(1, math.ceil(left_ms / 1000))
        return Verdict(count <= (self.limit if limit is None else limit), count, retry_after)

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
