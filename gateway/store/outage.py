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

from gateway.base.errors import GatewayError
from gateway.base.logs import event, redact
from gateway.base.tasks import cancel_and_wait

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
    if isinstance(exc, (OSError, RuntimeError)):
        # A socket error the client did not wrap, e.g. uvloop's RuntimeError for a write to a transport
        # that Redis closed while the connection was being set up.
        return _raised_in_the_redis_client(exc)
    return isinstance(exc, ResponseError) and str(exc).startswith(_OUTAGE_REPLIES)


def _raised_in_the_redis_client(exc: BaseException) -> bool:
    trace = exc.__traceback__
    while trace is not None:
        if str(trace.tb_frame.f_globals.get("__name__", "")).startswith("redis."):
            return True
        trace = trace.tb_next
    return False


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
    A call begun while Redis was away can fail after it came back (its retries take about 0.4 s): that is
    the end of the old outage, not a new one, so such a late failure is checked with a PING first. A caller
    that knows when its call began says so (``began_at``, on ``clock``); otherwise a failure within
    ``late_failure_s`` of a recovery counts as late.
    """

    def __init__(
        self,
        redis: Any,
        *,
        probe_every_s: float = 0.25,
        probe_timeout_s: float = 1.0,
        late_failure_s: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.redis = redis
        self.probe_every_s = probe_every_s
        self.probe_timeout_s = probe_timeout_s
        self.late_failure_s = late_failure_s
        self.clock = clock
        self.down_since: float | None = None
        self.recovered_at: float | None = None
        self._probe: asyncio.Task[None] | None = None

    @property
    def available(self) -> bool:
        return self.down_since is None

    @property
    def probing(self) -> bool:
        """Whether a probe is PINGing Redis (during an outage, or to confirm a late failure)."""
        return self._probe is not None and not self._probe.done()

    def report(self, exc: BaseException, where: str) -> bool:
        """Note ``exc`` if it is a store outage (True), so the caller need not log it itself."""
        if not is_store_outage(exc):
            return False
        self.failed(exc, where)
        return True

    def failed(self, exc: BaseException, where: str, began_at: float | None = None) -> None:
        """A round trip (begun at ``began_at`` when known) failed because of the store: the first one
        starts an outage."""
        if self.down_since is not None:
            return
        late = self._late(began_at)
        if not late:
            self._went_down(exc, where)
        if self.probing:  # the running probe ends the outage, or confirms the late failure
            return
        unconfirmed = (exc, where) if late else None
        try:
            loop = asyncio.get_running_loop()
            self._probe = loop.create_task(self._probe_until_up(unconfirmed), name="threadgate.store_probe")
        except RuntimeError:  # no loop (a synchronous caller): the next round trip that works ends it
            self._probe = None
            if unconfirmed is not None:
                self._went_down(exc, where)

    def _late(self, began_at: float | None) -> bool:
        """Whether a failure may belong to the outage that just ended rather than start a new one."""
        if self.recovered_at is None:
            return False
        if began_at is not None:
            return began_at < self.recovered_at
        return self.clock() - self.recovered_at < self.late_failure_s

    def answered(self) -> None:
        """A round trip worked: ends an outage."""
        if self.down_since is None:
            return
        now = self.clock()
        down_for = round(now - self.down_since, 3)
        self.down_since = None
        self.recovered_at = now
        event("store.recovered", down_for_s=down_for)

    def _went_down(self, exc: BaseException, where: str) -> None:
        self.down_since = self.clock()
        error = redact(str(exc)) or type(exc).__name__
        event("store.unavailable", logging.ERROR, error=error, kind=type(exc).__name__, seen_by=where)

    async def _probe_until_up(self, unconfirmed: tuple[BaseException, str] | None) -> None:
        """PING until Redis answers. With ``unconfirmed``, PING at once, and declare the outage only if
        that fails too. Another caller (readiness) may see the recovery before the probe does; a PING that
        fails after that is a new outage, and the probe declares it."""
        confirm_now = unconfirmed is not None
        while True:
            if not confirm_now:
                await asyncio.sleep(self.probe_every_s)
            confirm_now = False
            try:
                await asyncio.wait_for(self.redis.ping(), self.probe_timeout_s)
            except Exception as exc:
                if self.down_since is None:
                    self._went_down(*(unconfirmed or (exc, "probe")))
                unconfirmed = None
                continue
            self.answered()
            return

    async def close(self) -> None:
        if self._probe is not None:
            with contextlib.suppress(Exception):
                await cancel_and_wait([self._probe])
            self._probe = None
