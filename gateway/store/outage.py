"""Redis outages: which failures mean the store is away, and one log line when it goes and returns."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from typing import Any

from redis.exceptions import (
    ClusterError,
    ConnectionError,
    ReadOnlyError,
    ResponseError,
    SlotNotCoveredError,
    TimeoutError,
    TryAgainError,
)

from gateway.errors import GatewayError
from gateway.logs import event, redact
from gateway.tasks import cancel_and_wait

RETRY_AFTER_S = 2
# ConnectionError covers refused/reset connections, BusyLoadingError (LOADING) and an exhausted pool;
# ClusterError covers CLUSTERDOWN and MASTERDOWN; ReadOnlyError is a write sent to a replica.
_OUTAGE_ERRORS = (
    ConnectionError,
    TimeoutError,
    ReadOnlyError,
    ClusterError,
    TryAgainError,
    SlotNotCoveredError,
)
# Replies of a Redis that is up but cannot take the command now (redis-py raises them as ResponseError).
_OUTAGE_REPLIES = ("LOADING", "READONLY", "MASTERDOWN", "CLUSTERDOWN", "TRYAGAIN", "MISCONF", "NOREPLICAS")


def is_store_outage(exc: BaseException) -> bool:
    """Whether ``exc`` means Redis cannot be reached or cannot serve right now (worth retrying later)."""
    if isinstance(exc, BaseExceptionGroup):
        return all(is_store_outage(inner) for inner in exc.exceptions)
    if isinstance(exc, _OUTAGE_ERRORS):
        return True
    return isinstance(exc, ResponseError) and str(exc).startswith(_OUTAGE_REPLIES)


def store_unavailable() -> GatewayError:
    """The error every API call answers while the store is away (503, ``Retry-After``)."""
    return GatewayError(
        "STORE_UNAVAILABLE",
        f"The gateway's store (Redis) is unreachable; nothing was changed. Retry in {RETRY_AFTER_S} seconds.",
        503,
        {"retry_after": RETRY_AFTER_S},
    )


class StoreHealth:
    """Whether Redis answers, as this process last saw it.

    The first failure of an outage logs ``store.unavailable`` and starts a probe that PINGs until Redis
    answers, then logs ``store.recovered``: one line each way, however many requests fail meanwhile.
    """

    def __init__(
        self,
        redis: Any,
        *,
        probe_every_s: float = 0.25,
        probe_timeout_s: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.redis = redis
        self.probe_every_s = probe_every_s
        self.probe_timeout_s = probe_timeout_s
        self.clock = clock
        self.down_since: float | None = None
        self._probe: asyncio.Task[None] | None = None

    @property
    def available(self) -> bool:
        return self.down_since is None

    def report(self, exc: BaseException, where: str) -> bool:
        """Note ``exc`` if it is a store outage (True), so the caller need not log it itself."""
        if not is_store_outage(exc):
            return False
        self.failed(exc, where)
        return True

    def failed(self, exc: BaseException, where: str) -> None:
        """A round trip failed because of the store: the first one starts an outage."""
        if self.down_since is not None:
            return
        self.down_since = self.clock()
        error = redact(str(exc)) or type(exc).__name__
        event("store.unavailable", logging.ERROR, error=error, kind=type(exc).__name__, seen_by=where)
        try:
            loop = asyncio.get_running_loop()
            self._probe = loop.create_task(self._probe_until_up(), name="threadgate.store_probe")
        except RuntimeError:  # no loop (a synchronous caller): the next round trip that works ends it
            self._probe = None

    def answered(self) -> None:
        """A round trip worked: ends an outage."""
        if self.down_since is None:
            return
        down_for = round(self.clock() - self.down_since, 3)
        self.down_since = None
        event("store.recovered", down_for_s=down_for)

    async def _probe_until_up(self) -> None:
        while self.down_since is not None:
            await asyncio.sleep(self.probe_every_s)
            try:
                await asyncio.wait_for(self.redis.ping(), self.probe_timeout_s)
            except Exception:  # still away (the outage is logged already)
                continue
            self.answered()

    async def close(self) -> None:
        if self._probe is not None:
            with contextlib.suppress(Exception):
                await cancel_and_wait([self._probe])
            self._probe = None
