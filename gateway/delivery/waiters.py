"""Waking the agents that wait on a prompt, in any process: a Redis pub/sub fan-in to local events."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator
from typing import Any

from gateway.base.logs import event
from gateway.base.models import Prompt
from gateway.base.tasks import cancel_and_wait
from gateway.store.outage import StoreHealth
from gateway.store.settled import settled_subscription


class Settled(asyncio.Event):
    """Set when a watched prompt settles; carries how, when the wake-up said (so nobody reads it again).

    ``prompt`` is the settled prompt when this process settled it; ``fields`` the prompt's settled hash
    fields when another process did. Both ``None``: read the prompt.
    """

    def __init__(self) -> None:
        super().__init__()
        self.prompt: Prompt | None = None
        self.fields: dict[str, str] | None = None


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
        self._events: dict[str, set[Settled]] = {}
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

    @contextlib.asynccontextmanager
    async def watch(self, prompt_id: str) -> AsyncIterator[Settled]:
        """An event set when ``prompt_id`` settles. Register before reading state: no wake-up is lost."""
        flag = Settled()
        self._events.setdefault(prompt_id, set()).add(flag)
        try:
            yield flag
        finally:
            watchers = self._events.get(prompt_id)
            if watchers is not None:
                watchers.discard(flag)
                if not watchers:
                    del self._events[prompt_id]

    def notify(
        self, prompt_id: str, *, fields: dict[str, str] | None = None, prompt: Prompt | None = None
    ) -> None:
        """Wake the prompt's local waiters, handing them how it settled when that is known."""
        for flag in self._events.get(prompt_id, ()):
            if prompt is not None:
                flag.prompt = prompt
            if fields is not None:
                flag.fields = fields
            flag.set()

    def notify_all(self) -> None:
        """Wake every waiter to read its prompt again (a settlement may have gone unheard)."""
        for watchers in self._events.values():
            for flag in watchers:
                flag.set()

    def drain(self) -> None:
        """The process is stopping: wake every waiter, and let no new wait hold (a long-poll answers the
        prompt as it stands, still pending, as a timeout does, so the agent simply polls again)."""
        self.draining = True
        self.notify_all()

    def _heard(self, data: str) -> None:
        prompt_id = data.partition(" ")[0]
        watchers = self._events.get(prompt_id)
        # Most settlements are waited on in another process, or not at all; one this process settled was
        # handed to its waiters already (``prompt``), and its message has nothing to add.
        if not watchers or all(flag.prompt is not None for flag in watchers):
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
