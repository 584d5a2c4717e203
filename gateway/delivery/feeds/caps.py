"""How many streams (SSE and long-polls) may be open at once in this process: per credential and in all."""

from __future__ import annotations

from collections import Counter

from gateway.base import metrics
from gateway.base.errors import GatewayError

RETRY_AFTER_S = 5  # streams end as their clients leave; a short wait usually finds room


class StreamSlot:
    """One open stream, counted until ``release()`` (safe to call more than once)."""

    __slots__ = ("_caps", "_credential")

    def __init__(self, caps: StreamCaps, credential: str) -> None:
        self._caps = caps
        self._credential: str | None = credential

    def release(self) -> None:
        if self._credential is not None:
            self._caps._release(self._credential)
            self._credential = None

    def __enter__(self) -> StreamSlot:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.release()


class StreamCaps:
    """At most ``per_credential`` open streams per credential and ``total`` in the process.

    ``open()`` beyond either raises 429 RATE_LIMITED with ``retry_after`` (sent as ``Retry-After``).
    """

    def __init__(self, per_credential: int = 1_000, total: int = 10_000) -> None:
        self.per_credential = per_credential
        self.total = total
        self._open: Counter[str] = Counter()
        self._count = 0

    @property
    def open_streams(self) -> int:
        return self._count

    def open(self, credential: str) -> StreamSlot:
        """Count a stream for ``credential`` (a token's name, never the token), or refuse it."""
        if self._count >= self.total:
            raise _refused(f"This gateway process holds its limit of {self.total} open streams.", self.total)
        if self._open[credential] >= self.per_credential:
            raise _refused(
                f"This credential holds its limit of {self.per_credential} open streams on this process; "
                "close one (or share one stream between waiters) and retry.",
                self.per_credential,
            )
        self._open[credential] += 1
        self._count += 1
        metrics.OPEN_STREAMS.inc()
        return StreamSlot(self, credential)

    def _release(self, credential: str) -> None:
        self._count -= 1
        metrics.OPEN_STREAMS.dec()
        self._open[credential] -= 1
        if self._open[credential] <= 0:
            del self._open[credential]


def _refused(message: str, limit: int) -> GatewayError:
    return GatewayError("RATE_LIMITED", message, 429, {"retry_after": RETRY_AFTER_S, "limit": limit})
