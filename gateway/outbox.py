"""The outbox: what a state change owes the world, delivered after the change is safe in Redis.

Each thread has two lists written by the same Lua script that changed its state: ``pub`` (events and
queued messages for the global feeds) and ``chat`` (audit items and agent messages to post, in order).
Any process may drain any thread, one at a time under a per-thread lock; an item leaves its list only
after it was delivered, so a crash delivers it again (at least once; ids let readers dedupe).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
import uuid
from collections.abc import Callable
from typing import Any

from gateway import metrics
from gateway.channel import ChannelError, Channels, EditsMessages, MessageRef
from gateway.errors import GatewayError
from gateway.ids import parse_thread_id
from gateway.logs import event
from gateway.models import Prompt, PromptState, ThreadItem, from_ms, utcnow
from gateway.render import answers_summary, resolved_item, settled_prompt_item
from gateway.store import OutboxBatch, Store, keys
from gateway.store.outage import StoreHealth
from gateway.store.store import prompt_from_fields

LOCK_TTL_MS = 30_000
SWEEP_AGE_MS = 10_000
MAX_BACKOFF_S = 300.0
BATCH = 100  # effects taken from each of a thread's two lists per pass


def pending_view(prompt: Prompt) -> Prompt:
    """The prompt as it was when asked (for ``input.requested``)."""
    return prompt.model_copy(
        update={
            "prompt_state": PromptState.PENDING,
            "answers": None,
            "answered_by": None,
            "resolution": None,
            "turn_id": None,
            "reason": None,
            "reason_code": None,
            "settled_at": None,
        }
    )


def feed_event(event_id: str, kind: str, data: dict[str, Any]) -> dict[str, Any]:
    return {"id": event_id, "type": kind, "created_at": utcnow().isoformat(), "data": data}


class Outbox:
    """Drains threads' outboxes: right away for the changes this process made, and by sweeping."""

    def __init__(
        self,
        store: Store,
        channels: Channels,
        clock: Callable[[], float] = time.time,
        health: StoreHealth | None = None,
    ) -> None:
        self.store = store
        self.channels = channels
        self.clock = clock
        self.health = health or StoreHealth(store.redis)
        self._running: dict[str, asyncio.Task[bool]] = {}
        self._again: set[str] = set()
        self._retry_at: dict[str, float] = {}
        self._failures: dict[str, int] = {}

    def kick(self, thread_id: str) -> None:
        """Drain ``thread_id`` soon, in the background (coalesced with a drain already running)."""
        running = self._running.get(thread_id)
        # A finished drain stays listed until its done-callback runs; new work then needs a new drain.
        if running is not None and not running.done():
            self._again.add(thread_id)
            return
        task = asyncio.create_task(self._drain_loop(thread_id), name=f"threadgate.outbox.{thread_id}")
        self._running[thread_id] = task
        task.add_done_callback(lambda done: self._forget(thread_id, done))

    def _forget(self, thread_id: str, task: asyncio.Task[bool]) -> None:
        if self._running.get(thread_id) is task:
            del self._running[thread_id]
        # Read every drain's failure here, so none ends as "Task exception was never retrieved". What it
        # owed stays in Redis, marked dirty, for the sweeper to deliver once the failure has passed.
        if task.cancelled() or (exc := task.exception()) is None:
            return
        if not self.health.report(exc, "outbox"):
            error = str(exc) or type(exc).__name__
            event("outbox.drain_failed", logging.WARNING, thread_id=thread_id, error=error)

    def busy(self, thread_id: str) -> bool:
        """Whether this process has a drain of ``thread_id`` running or due."""
        running = self._running.get(thread_id)
        return running is not None and not running.done()

    async def flush(self, thread_id: str) -> bool:
        """Drain one thread now, after any drain of it this process already has running."""
        running = self._running.get(thread_id)
        if running is not None:
            await asyncio.gather(running, return_exceptions=True)
        return await self.drain(thread_id)

    async def idle(self) -> None:
        """Wait until no drain started by this process is running (tests, shutdown)."""
        while self._running:
            await asyncio.gather(*list(self._running.values()), return_exceptions=True)

    async def _drain_loop(self, thread_id: str) -> bool:
        done = False
        while True:
            self._again.discard(thread_id)
            done = await self.drain(thread_id)
            if thread_id not in self._again:
                return done

    async def drain(self, thread_id: str) -> bool:
        """Deliver everything owed for one thread. True when both lists are empty afterwards.

        Each pass is one round trip to take a batch (acknowledging the pass before), one to publish its
        events, and the chat posts themselves.
        """
        if self._retry_at.get(thread_id, 0.0) > self.clock():
            return False
        token = uuid.uuid4().hex
        batch = await self.store.take_outbox(thread_id, token, LOCK_TTL_MS, "acquire", size=BATCH)
        while batch is not None and not batch.empty:
            try:
                await self._publish(batch)
                posted, logged, complete = await self._post_all(thread_id, batch)
            except BaseException:
                with contextlib.suppress(Exception):
                    await self.store.take_outbox(thread_id, token, LOCK_TTL_MS, "release")
                raise
            batch = await self.store.take_outbox(
                thread_id,
                token,
                LOCK_TTL_MS,
                "continue" if complete else "release",
                pub_done=len(batch.pub),
                chat_done=posted,
                logged=logged,
                size=BATCH,
            )
            if not complete:
                return False
        return batch is not None

    async def _post_all(self, thread_id: str, batch: OutboxBatch) -> tuple[int, list[dict[str, Any]], bool]:
        """Post the batch's chat items in order: (how many were posted, their log entries, all of them)."""
        logged: list[dict[str, Any]] = []
        for posted, effect in enumerate(batch.chat):
            try:
                entry = await self._post(thread_id, effect, batch.prompts)
            except GatewayError as exc:  # no channel for this platform here: another process may have it
                event("outbox.no_channel", logging.DEBUG, thread_id=thread_id, error=exc.message)
                return posted, logged, False
            except ChannelError as exc:
                self._back_off(thread_id, exc)
                return posted, logged, False
            self._failures.pop(thread_id, None)
            self._retry_at.pop(thread_id, None)
            if entry is not None:
                logged.append(entry)
        return len(batch.chat), logged, True

    def _back_off(self, thread_id: str, exc: ChannelError) -> None:
        failures = self._failures.get(thread_id, 0) + 1
        self._failures[thread_id] = failures
        delay = exc.retry_after if exc.retry_after is not None else min(2.0**failures, MAX_BACKOFF_S)
        self._retry_at[thread_id] = self.clock() + delay
        event("outbox.post_failed", logging.WARNING, thread_id=thread_id, error=str(exc), retry_in=delay)
        metrics.platform_error(thread_id, exc)

    async def _publish(self, batch: OutboxBatch) -> None:
        """The batch's events and queued messages, appended to the feeds in one round trip."""
        entries: list[tuple[str, dict[str, Any]]] = []
        settled: list[Prompt] = []
        for effect in batch.pub:
            kind = effect["t"]
            if kind == "message":
                entries.extend(_message_entries(json.loads(effect["m"])))
                continue
            fields = batch.prompts.get(effect["pid"])
            if not fields:  # retained records expired before delivery; nothing left to say
                continue
            prompt = prompt_from_fields(fields)
            if kind == "requested":
                metrics.prompt_raised(prompt)
                data = pending_view(prompt).public()
                entries.append(
                    (keys.EVENTS, feed_event(f"{prompt.prompt_id}.requested", "input.requested", data))
                )
            elif kind == "resolved":
                metrics.prompt_settled(prompt)
                data = prompt.public()
                entries.append(
                    (keys.EVENTS, feed_event(f"{prompt.prompt_id}.resolved", "input.resolved", data))
                )
                settled.append(prompt)
            elif kind == "parked":
                entries.extend(_message_entries(parked_message(prompt, effect["turn"])))
        if entries or settled:
            await self.store.publish(entries, settled)

    async def _post(
        self, thread_id: str, effect: dict[str, Any], prompts: dict[str, dict[str, str]]
    ) -> dict[str, Any] | None:
        """Post one chat item; returns what the thread's item log should record of it."""
        thread = parse_thread_id(thread_id)
        channel = self.channels.for_thread(thread)
        if effect["t"] == "audit":
            fields = prompts.get(effect["pid"])
            if not fields:
                return None
            prompt = prompt_from_fields(fields)
            item = resolved_item(prompt)
            if fields.get("msg"):  # lets a channel post the audit item as a reply to the prompt
                item.metadata["prompt_message_id"] = fields["msg"]
            await channel.post(thread, item)
            await self._retire_controls(channel, thread_id, prompt, fields.get("msg"))
            return {"role": "gateway", **item.model_dump(mode="json")}
        if effect["t"] == "message":
            item = ThreadItem.model_validate(effect["item"])
            await channel.post(thread, item)
            return {"role": "agent", **item.model_dump(mode="json")}
        return None

    async def _retire_controls(
        self, channel: object, thread_id: str, prompt: Prompt, ref: str | None
    ) -> None:
        """Show the outcome on the prompt's own message (``ref``), where the platform can edit it."""
        if not isinstance(channel, EditsMessages) or not ref:
            return
        try:
            await channel.edit(MessageRef(thread_id, ref), settled_prompt_item(prompt))
        except ChannelError as exc:  # the audit item already says how it settled
            event("outbox.edit_failed", logging.WARNING, thread_id=thread_id, error=str(exc))
            metrics.platform_error(thread_id, exc)

    async def sweep(self, *, everything: bool = False) -> int:
        """Drain threads marked dirty a while ago (left by a crashed process or a failed post)."""
        now_ms = int(self.clock() * 1000)
        cutoff = now_ms if everything else now_ms - SWEEP_AGE_MS
        drained = 0
        for thread_id in await self.store.dirty_threads(cutoff):
            if thread_id in self._running:
                continue
            if await self.drain(thread_id):
                await self.store.drop_dirty(thread_id, now_ms - SWEEP_AGE_MS)
                drained += 1
        return drained

    async def run(self, interval: float = 2.0) -> None:
        """Sweep forever (a background task of the service)."""
        while True:
            with contextlib.suppress(Exception):
                await self.sweep()
            await asyncio.sleep(interval)


def _message_entries(message: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """A message queued for agents: on the messages feed, and announced on the events feed."""
    event_id = f"{message['message_id']}.received"
    return [(keys.MESSAGES, message), (keys.EVENTS, feed_event(event_id, "message.received", message))]


def parked_message(prompt: Prompt, turn_id: str) -> dict[str, Any]:
    """An answer that arrived while the agent was not waiting, re-driven as its next turn's message."""
    answers = [answer.model_dump(mode="json") for answer in prompt.answers or []]
    text = answers_summary(prompt.answers or [])
    metadata: dict[str, Any] = {"answers": answers, "prompt_id": prompt.prompt_id}
    if prompt.content is not None:  # a form's typed values
        metadata["content"] = prompt.content
    return {
        "message_id": turn_id,
        "thread_id": prompt.thread_id,
        "sender": prompt.answered_by,
        "text": text,
        "content": [{"type": "text", "text": text}],
        "metadata": metadata,
        "received_at": (prompt.settled_at or from_ms(int(time.time() * 1000))).isoformat(),
        "tag": "parked_answer",
    }
