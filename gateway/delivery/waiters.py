"""Waking the agents that wait on a prompt, in any process: a Redis pub/sub fan-in to local futures."""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass
from typing import Any

from gateway.base.logs import event
from gateway.base.models import Prompt
from gateway.base.tasks import cancel_and_wait
from gateway.store.outage import StoreHealth
from gateway.store.settled import settled_subscription


@dataclass(frozen=True, slots=True)
class Settled:
    """How a watched prompt settled, when the wake-up said (so nobody reads it again).

    ``prompt`` is the settled prompt when this process settled it; ``fields`` the prompt's settled hash
    fields when another process did. Both ``None``: read the prompt (it may not have settled at all).
    """

    prompt: Prompt | None = None
    fields: dict[str, str] | None = None


READ_AGAIN = Settled()


class Watch:
    """One waiter's registration: a future the prompt's settlement resolves, dropped when the block ends.

    A future per waiter, not an ``asyncio.Event``: it costs a tenth of the memory, and a wake-up resolves
    it once (a waiter that must wait again after a spurious wake takes a new one)."""

    __slots__ = ("_waiters", "future", "prompt_id")

    def __init__(self, waiters: Waiters, prompt_id: str) -> None:
        self._waiters = waiters
        self.prompt_id = prompt_id
        self.future: asyncio.Future[Settled] = waiters._register(prompt_id)

    def renew(self) -> asyncio.Future[Settled]:
        """A fresh future, registered before the caller reads the prompt again: no wake-up is lost."""
        self._waiters._forget(self.prompt_id, self.future)
        self.future = self._waiters._register(self.prompt_id)
        return self.future

    def __enter__(self) -> Watch:
        return self

    def __exit__(self, *_exc: object) -> None:
        self._waiters._forget(self.prompt_id, self.future)
        if not self.future.done():
            self.future.cancel()


def settled_message(data: str) -> tuple[str, dict[str, str] | None]:
    """A ``tg:settled`` message: the prompt id, and its settled fields when the message carries them."""
    prompt_id, _, payload = data.partition(" ")
    if not payload:
        return prompt_id, None
    flat = json.loads(payload)
    return prompt_id, {str(flat[i]): str(flat[i + 1]) for i in range(0, len(flat) - 1, 2)}


class Waiters:
    """One subscription per process to the prompt-settled channel, fanned out to local waiters."""

    def __init__(self, redis: Any, health: StoreHealth | None = None, max_retry_s: float = 1.0) -> None:
        self._redis = redis
        self.health = health or StoreHealth(redis)
        self.max_retry_s = max_retry_s
        self._futures: dict[str, set[asyncio.Future[Settled]]] = {}
        self._task: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()
        self.draining = False  # set at shutdown: every wait ends now with the prompt as it stands

    async def start(self) -> None:
        self._task = asyncio.create_task(self._listen(), name="threadgate.waiters")
        await asyncio.wait_for(self._ready.wait(), timeout=10)

    async def stop(self) -> None:
        if self._task is not None:
            await cancel_and_wait([self._task])
            self._task = None

    def watch(self, prompt_id: str) -> Watch:
        """A registration resolved when ``prompt_id`` settles. Register before reading state: no wake-up is
        lost. Use it as a context manager (``with waiters.watch(id) as watch``) so it is dropped after."""
        return Watch(self, prompt_id)

    def _register(self, prompt_id: str) -> asyncio.Future[Settled]:
        future: asyncio.Future[Settled] = asyncio.get_running_loop().create_future()
        self._futures.setdefault(prompt_id, set()).add(future)
        return future

    def _forget(self, prompt_id: str, future: asyncio.Future[Settled]) -> None:
        futures = self._futures.get(prompt_id)
        if futures is not None:
            futures.discard(future)
            if not futures:
                del self._futures[prompt_id]

    def notify(
        self, prompt_id: str, *, fields: dict[str, str] | None = None, prompt: Prompt | None = None
    ) -> None:
        """Wake the prompt's local waiters, handing them how it settled when that is known."""
        futures = self._futures.pop(prompt_id, None)
        if futures:
            told = prompt is not None or fields is not None
            _resolve(futures, Settled(prompt, fields) if told else READ_AGAIN)

    def notify_all(self) -> None:
        """Wake every waiter to read its prompt again (a settlement may have gone unheard)."""
        every, self._futures = self._futures, {}
        for futures in every.values():
            _resolve(futures, READ_AGAIN)

    def drain(self) -> None:
        """The process is stopping: wake every waiter, and let no new wait hold (a long-poll answers the
        prompt as it stands, still pending, as a timeout does, so the agent simply polls again)."""
        self.draining = True
        self.notify_all()

    def _heard(self, data: str) -> None:
        prompt_id = data.partition(" ")[0]
        if prompt_id not in self._futures:  # most settlements are waited on in another process, or not
            return
        try:
            _, fields = settled_message(data)
        except (ValueError, TypeError):  # an unreadable payload: the waiter reads the prompt itself
            fields = None
        self.notify(prompt_id, fields=fields)

    async def _listen(self) -> None:
        delay = 0.1
        lost = False
        while True:
            try:
                async with settled_subscription(self._redis) as subscription:
                    self._ready.set()
                    delay = 0.1
                    if lost:  # what settled while the subscription was down was not heard
                        lost = False
                        self.notify_all()
                        event("waiters.resubscribed")
                    while True:
                        data = await subscription.next(timeout_s=5.0)
                        if data is not None:
                            self._heard(data)
                        # redis-py can swallow a cancellation that lands mid-read; honour it here.
                        if (task := asyncio.current_task()) is not None and task.cancelling():
                            raise asyncio.CancelledError
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # connection lost: waiters fall back to their timeouts meanwhile
                if not lost and not self.health.report(exc, "waiters"):
                    event("waiters.disconnected", logging.WARNING, error=str(exc), retry_in=delay)
                lost = True
                await asyncio.sleep(delay)
                delay = min(delay * 2, self.max_retry_s)


def _resolve(futures: set[asyncio.Future[Settled]], settled: Settled) -> None:
    for future in futures:
        if not future.done():  # a waiter cancelled meanwhile leaves its future cancelled
            future.set_result(settled)
