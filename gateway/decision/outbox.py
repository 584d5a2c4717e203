"""The outbox: what a state change owes the world, delivered after the change is safe in Redis.

Each thread has two lists written by the same Lua script that changed its state: ``pub`` (events and
queued messages for the global feeds) and ``chat`` (audit items and agent messages to post, in order).
Any process may drain any thread, one at a time under a per-thread lock; an item leaves its list only
after it was delivered, so a crash delivers it again: a chat post at least once; an event or queued message
once, since on one server the script that takes it off its list appends it (``take_outbox.lua``), and on a
cluster the feeds append each id once (``publish_feed.lua``). A pass posts a batch's chat items, then
appends its events to the feeds in the round trip that acknowledges both; each list keeps the order it was
queued in. A drain holds the thread's lock for
``lock_ttl_ms`` and renews it while a pass runs, so a dead process's outbox is taken over that soon after.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

from gateway.base import jsontext, metrics
from gateway.base.errors import GatewayError
from gateway.base.ids import new_ulid, parse_thread_id
from gateway.base.logs import event
from gateway.base.models import Prompt, PromptState, ThreadItem, from_ms, utcnow
from gateway.decision.escalation import EVENT_TYPES as ESCALATION_EVENTS
from gateway.decision.escalation import Escalator, event_data
from gateway.decision.history import history_entry
from gateway.delivery.channel import ChannelError, Channels, EditsMessages, MessageRef
from gateway.rules.render import (
    answers_summary,
    message_item,
    resolved_item,
    settled_prompt_item,
    votes_item,
)
from gateway.store import FeedEntry, OutboxBatch, OutboxPass, Store, keys
from gateway.store.lru import drop_oldest
from gateway.store.outage import StoreHealth
from gateway.store.results import HeldOutbox, OutboxClaim, OutboxMode

DRAINER_TASK = "threadgate.outbox.drainer"
RENEWER_TASK = "threadgate.outbox.renewer"
PASS_THREADS = 64  # threads drained together in one pass
LOCK_TTL_MS = 10_000  # a dead process's outbox is taken over this long after its last renewal
SWEEP_AGE_MS = 10_000
MAX_BACKOFF_S = 300.0
BATCH = 100  # effects taken from each of a thread's two lists per pass
FAILURES_KEPT = 10_000  # threads whose last post failed, remembered for their backoff (the oldest forgotten)


def pending_view(prompt: Prompt) -> Prompt:
    """The prompt as it was when asked (for ``input.requested``)."""
    if prompt.pending:
        return prompt
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


def feed_event_json(event_id: str, kind: str, data: str) -> str:
    """A feed event as JSON text (id, type, created_at, data), around ``data`` already serialised."""
    head = jsontext.dumps({"id": event_id, "type": kind, "created_at": utcnow().isoformat()})
    return f'{head[:-1]},"data":{data}}}'


def log_entry(role: str, item: ThreadItem) -> str:
    """A posted item as the thread's item log records it, as JSON text."""
    return f'{{"role":{jsontext.dumps(role)},{item.model_dump_json()[1:]}'


@dataclass(frozen=True, slots=True)
class Posted:
    """What a pass posted to one thread: how many items, their log entries, and whether all of them."""

    posted: int
    logged: list[str]
    complete: bool


class Outbox:
    """Drains threads' outboxes: right away for the changes this process made, and by sweeping.

    Threads kicked in the same moment are drained together, in passes shared by all of them: one round
    trip takes a batch of each thread's lists (none when an answer's script handed the first batch back),
    the chat posts go out (in order within a thread, threads side by side), and one round trip publishes
    all their events and acknowledges them all.
    """

    def __init__(
        self,
        store: Store,
        channels: Channels,
        clock: Callable[[], float] = time.time,
        health: StoreHealth | None = None,
        lock_ttl_ms: int = LOCK_TTL_MS,
    ) -> None:
        self.store = store
        self.lock_ttl_ms = lock_ttl_ms
        self.channels = channels
        self.clock = clock
        self.health = health or StoreHealth(store.redis)
        self._due: dict[str, None] = {}  # kicked threads, in order, not yet in a pass
        self._active: set[str] = set()  # threads in the drainer's pass now
        self._flushing: dict[str, int] = {}  # threads a flush is draining itself
        self._passing: dict[str, int] = {}  # threads in a drain of this process now, by any path
        self._drainer: asyncio.Task[None] | None = None
        self._passed = asyncio.Event()  # set as each drain pass of this process ends (and replaced)
        self._retry_at: dict[str, float] = {}
        self._failures: dict[str, int] = {}
        self._edits: dict[type, bool] = {}
        self._holding: dict[str, str] = {}  # thread -> token of each lock this process holds now
        # Locks a settling script took for this process (see ``claim``): thread -> (token, first batch).
        self._handed: dict[str, HeldOutbox] = {}
        self._renewer: asyncio.Task[None] | None = None
        self._released = asyncio.Event()
        # Reminders and copies of escalation steps, and the outcome for those copies.
        self.escalator = Escalator(store, channels, clock, self.kick)

    def claim(self) -> OutboxClaim:
        """A claim for a settling script to take a thread's outbox lock with (see ``kick``'s ``held``)."""
        return OutboxClaim(new_ulid(), self.lock_ttl_ms, BATCH)

    def kick(self, thread_id: str, held: HeldOutbox | None = None) -> None:
        """Drain ``thread_id`` soon, in the background, with whatever else is due. ``held``: the lock and
        first batch a settling script took under this process's claim (the drain starts from that batch,
        without a step of its own to acquire the lock)."""
        if held is not None:
            self._handed[thread_id] = held
        self._due[thread_id] = None
        if self._drainer is None or self._drainer.done():
            self._drainer = asyncio.create_task(self._drain_due(), name=DRAINER_TASK)

    def busy(self, thread_id: str) -> bool:
        """Whether this process has a drain of ``thread_id`` running or due."""
        return (
            thread_id in self._due
            or thread_id in self._active
            or thread_id in self._flushing
            or thread_id in self._passing
        )

    async def flush(self, thread_id: str) -> bool:
        """Drain one thread now, after any drain of it this process already has running (the drainer's,
        a sweep's, another flush's): theirs holds the thread's lock, so this one would find it busy."""
        self._flushing[thread_id] = self._flushing.get(thread_id, 0) + 1
        self._due.pop(thread_id, None)
        try:
            while thread_id in self._active or thread_id in self._passing:  # after that pass, then
                await self._passed.wait()
            return await self.drain(thread_id)
        finally:
            left = self._flushing.pop(thread_id) - 1
            if left:
                self._flushing[thread_id] = left
            elif thread_id in self._due:  # kicked meanwhile: the drainer passed over it
                self.kick(thread_id)

    async def idle(self) -> None:
        """Wait until no drain started by this process is running (tests, shutdown)."""
        while self._drainer is not None and not self._drainer.done():
            await asyncio.gather(self._drainer, return_exceptions=True)

    async def _drain_due(self) -> None:
        while True:
            threads = [thread for thread in self._due if thread not in self._flushing][:PASS_THREADS]
            if not threads:
                return
            for thread in threads:
                del self._due[thread]
            self._active.update(threads)
            try:
                await self.drain_many(threads)
            except Exception as exc:  # what it owed stays in Redis, marked dirty, for the sweeper
                if not self.health.report(exc, "outbox"):  # an outage is logged once, by the health record
                    event("outbox.drain_failed", logging.WARNING, error=str(exc) or type(exc).__name__)
            finally:
                self._active.difference_update(threads)
                self._passed.set()  # also when no drain ran (every thread backing off)
                self._passed = asyncio.Event()

    async def drain(self, thread_id: str) -> bool:
        """Deliver everything owed for one thread. True when both lists are empty afterwards."""
        return (await self.drain_many([thread_id]))[thread_id]

    async def drain_many(self, thread_ids: list[str]) -> dict[str, bool]:
        """Deliver everything owed for these threads, in shared passes. For each thread: True when both
        of its lists are empty afterwards (False: another process holds it, or a post failed)."""
        now = self.clock()
        done = dict.fromkeys(thread_ids, False)
        ready = [
            thread
            for thread in dict.fromkeys(thread_ids)
            if self._retry_at.get(thread, 0.0) <= now or thread in self._handed  # its lock is ours
        ]
        if not ready:
            return done
        for thread in ready:
            self._passing[thread] = self._passing.get(thread, 0) + 1
        try:
            return await self._take_and_drain(ready, done)
        finally:
            for thread in ready:
                left = self._passing.pop(thread) - 1
                if left:
                    self._passing[thread] = left
            self._passed.set()
            self._passed = asyncio.Event()

    async def _take_and_drain(self, ready: list[str], done: dict[str, bool]) -> dict[str, bool]:
        handed = {thread: self._handed.pop(thread) for thread in ready if thread in self._handed}
        acquire = [thread for thread in ready if thread not in handed]
        tokens = {thread: new_ulid() for thread in acquire}
        tokens.update((thread, held.token) for thread, held in handed.items())
        taken = (
            await self.store.take_outboxes(
                [
                    OutboxPass(thread, tokens[thread], self.lock_ttl_ms, OutboxMode.ACQUIRE, size=BATCH)
                    for thread in acquire
                ]
            )
            if acquire
            else []
        )
        held: dict[str, OutboxBatch] = {thread: one.batch for thread, one in handed.items()}
        for thread, batch in zip(acquire, taken, strict=True):
            if batch is not None and batch.empty:
                done[thread] = True
            elif batch is not None:
                held[thread] = batch
        if not held:
            return done
        holding = [(thread, tokens[thread]) for thread in held]
        self._holding.update(holding)
        if self._renewer is None or self._renewer.done():
            self._renewer = asyncio.create_task(self._renew(), name=RENEWER_TASK)
        try:
            return await self._drain_held(held, tokens, done)
        finally:
            for thread, token in holding:
                if self._holding.get(thread) == token:
                    del self._holding[thread]
            if not self._holding:
                self._released.set()  # the renewer ends now rather than after its next wait

    async def _renew(self) -> None:
        """Renew the locks this process holds every third of their TTL while its passes run (a slow post
        must not let another process deliver the same batch); ends when it holds none. A lock that lapsed
        anyway is not taken back: its renewal, and the drain's acknowledgement, find it is not ours.

        A release only wakes it to see whether any lock is left: renewals keep their own clock, so passes
        back to back do not each cost a renewal, and a long-held lock is renewed in time whatever ends."""
        loop = asyncio.get_running_loop()
        every_s = self.lock_ttl_ms / 3000
        due = loop.time() + every_s
        while self._holding:
            self._released.clear()
            if (left := due - loop.time()) > 0:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._released.wait(), left)
                continue
            due = loop.time() + every_s
            held = list(self._holding.items())
            if held:
                with contextlib.suppress(Exception):  # the next acknowledgement says whether it held
                    await self.store.take_outboxes(
                        [
                            OutboxPass(thread, token, self.lock_ttl_ms, OutboxMode.RENEW)
                            for thread, token in held
                        ]
                    )

    async def _drain_held(
        self, held: dict[str, OutboxBatch], tokens: dict[str, str], done: dict[str, bool]
    ) -> dict[str, bool]:
        """The passes of ``drain_many`` over the threads whose lock it took (``held``, emptied as it goes)."""
        while held:
            try:
                prompts = {
                    pid: self.store.codec.decode(fields)
                    for batch in held.values()
                    for pid, fields in batch.prompts.items()
                    if fields
                }
                outcomes = await self._post_threads(held, prompts)
                entries, settled = self._feed_entries(held, prompts)
            except BaseException:
                with contextlib.suppress(Exception):
                    await self.store.take_outboxes(
                        [
                            OutboxPass(thread, tokens[thread], self.lock_ttl_ms, OutboxMode.RELEASE)
                            for thread in held
                        ]
                    )
                raise
            passes = [
                OutboxPass(
                    thread,
                    tokens[thread],
                    self.lock_ttl_ms,
                    OutboxMode.CONTINUE if outcomes[thread].complete else OutboxMode.RELEASE,
                    pub_done=len(batch.pub),
                    chat_done=outcomes[thread].posted,
                    logged=outcomes[thread].logged,
                    size=BATCH,
                    entries=entries.get(thread, []),
                )
                for thread, batch in held.items()
            ]
            following: dict[str, OutboxBatch] = {}
            taken = await self.store.take_outboxes(passes, settled)  # published, and acknowledged
            for one, batch in zip(passes, taken, strict=True):
                if one.mode is OutboxMode.RELEASE or batch is None:  # a post failed, or our lock lapsed
                    continue
                if batch.empty:
                    done[one.thread_id] = True
                else:
                    following[one.thread_id] = batch
            held.clear()
            held.update(following)
        return done

    async def _post_threads(
        self, held: dict[str, OutboxBatch], prompts: dict[str, Prompt]
    ) -> dict[str, Posted]:
        """Each thread's chat items, in order within the thread; the threads side by side."""
        posting = [thread for thread, batch in held.items() if batch.chat]
        outcomes = {thread: Posted(0, [], True) for thread in held if thread not in posting}
        if len(posting) == 1:
            outcomes[posting[0]] = await self._post_all(posting[0], held[posting[0]], prompts)
        elif posting:
            results = await asyncio.gather(
                *(self._post_all(thread, held[thread], prompts) for thread in posting)
            )
            outcomes.update(zip(posting, results, strict=True))
        return outcomes

    async def _post_all(self, thread_id: str, batch: OutboxBatch, prompts: dict[str, Prompt]) -> Posted:
        """Post the batch's chat items in order: how many were posted, their log entries, all of them."""
        logged: list[str] = []
        for posted, effect in enumerate(batch.chat):
            try:
                entry = await self._post(thread_id, effect, batch.prompts, prompts)
            except GatewayError as exc:  # no channel for this platform here: another process may have it
                event("outbox.no_channel", logging.DEBUG, thread_id=thread_id, error=exc.message)
                return Posted(posted, logged, False)
            except ChannelError as exc:
                self._back_off(thread_id, exc)
                return Posted(posted, logged, False)
            self._failures.pop(thread_id, None)
            self._retry_at.pop(thread_id, None)
            if entry is not None:
                logged.append(entry)
        return Posted(len(batch.chat), logged, True)

    def _back_off(self, thread_id: str, exc: ChannelError) -> None:
        failures = self._failures.get(thread_id, 0) + 1
        self._failures[thread_id] = failures
        delay = exc.retry_after if exc.retry_after is not None else min(2.0**failures, MAX_BACKOFF_S)
        self._retry_at[thread_id] = self.clock() + delay
        # A thread whose posts never succeed again (it went idle) would stay here: the oldest are forgotten,
        # and retried at the next sweep.
        drop_oldest(self._failures, FAILURES_KEPT)
        drop_oldest(self._retry_at, FAILURES_KEPT)
        event("outbox.post_failed", logging.WARNING, thread_id=thread_id, error=str(exc), retry_in=delay)
        metrics.platform_error(thread_id, exc)

    async def _publish(self, batches: dict[str, OutboxBatch], prompts: dict[str, Prompt]) -> None:
        """The batches' events and queued messages, appended to the feeds in one round trip."""
        by_thread, settled = self._feed_entries(batches, prompts)
        entries = [entry for listed in by_thread.values() for entry in listed]
        if entries or settled:
            await self.store.publish(entries, settled)

    def _feed_entries(
        self, batches: dict[str, OutboxBatch], prompts: dict[str, Prompt]
    ) -> tuple[dict[str, list[FeedEntry]], list[Prompt]]:
        """The batches' events and queued messages as feed entries by thread, each for its thread's
        partition of the feed (so a thread's entries keep their order), and the prompts they settled."""
        by_thread: dict[str, list[FeedEntry]] = {}
        settled: list[Prompt] = []
        for thread_id, batch in batches.items():
            entries = by_thread.setdefault(thread_id, [])
            part = keys.partition(thread_id)
            for effect in batch.pub:
                kind = effect["t"]
                if kind == "message":
                    entries.extend(_message_entries(part, json.loads(effect["m"]), effect["m"]))
                    continue
                prompt = prompts.get(effect["pid"])
                if prompt is None:  # retained records expired before delivery; nothing left to say
                    continue
                if kind == "requested":
                    metrics.prompt_raised(prompt)
                    data = pending_view(prompt).public_json()
                    entries.append(_event(part, f"{prompt.prompt_id}.requested", "input.requested", data))
                elif kind == "resolved":
                    metrics.prompt_settled(prompt)
                    # One dump of the prompt serves the event and the history record (a stored prompt's
                    # numbers are finite, so orjson writes the document pydantic would).
                    public = prompt.public()
                    data = jsontext.dumps(public)
                    entries.append(_event(part, f"{prompt.prompt_id}.resolved", "input.resolved", data))
                    entries.append(history_entry(prompt, batch.prompts.get(effect["pid"], {}), public))
                    settled.append(prompt)
                elif kind == "parked":
                    entries.extend(_message_entries(part, parked_message(prompt, effect["turn"])))
                elif kind == "claimed":
                    event_id = f"{prompt.prompt_id}.claimed.{effect['n']}"
                    entries.append(_event(part, event_id, "input.claimed", claimed_json(prompt, effect)))
                elif kind in ESCALATION_EVENTS:
                    event_id = f"{prompt.prompt_id}.{kind}.{effect['step']}"
                    data = event_data(prompt, effect["step"])
                    entries.append(_event(part, event_id, ESCALATION_EVENTS[kind], data))
        return by_thread, settled

    async def _post(
        self,
        thread_id: str,
        effect: dict[str, Any],
        fields: dict[str, dict[str, str]],
        prompts: dict[str, Prompt],
    ) -> str | None:
        """Post one chat item; returns what the thread's item log should record of it (JSON)."""
        thread = parse_thread_id(thread_id)
        channel = self.channels.for_thread(thread)
        if effect["t"] == "audit":
            prompt = prompts.get(effect["pid"])
            if prompt is None:
                return None
            by = fields[effect["pid"]].get("cancelled_by")
            item = resolved_item(prompt, by)
            ref = fields[effect["pid"]].get("msg")
            if ref:  # lets a channel post the audit item as a reply to the prompt
                item.metadata["prompt_message_id"] = ref
            await channel.post(thread, item)
            await self._retire_controls(channel, thread_id, prompt, ref, by, item)
            await self.escalator.settled(prompt, fields[effect["pid"]])
            return log_entry("gateway", item)
        if effect["t"] == "message":
            item = ThreadItem.model_validate(effect["item"])
            await channel.post(thread, item)
            return log_entry("agent", item)
        if effect["t"] == "claimed":  # "Alice is on it", once per new holder
            prompt = prompts.get(effect["pid"])
            if prompt is None or not prompt.pending:
                return None
            item = message_item(effect["text"], {"type": "claimed", "prompt_id": prompt.prompt_id})
            item.metadata["claimed_by"] = effect["by"]
            await channel.post(thread, item)
            return log_entry("gateway", item)
        if effect["t"] == "votes":
            prompt = prompts.get(effect["pid"])
            if prompt is None or not prompt.pending:  # settled since: its audit item says how
                return None
            item = votes_item(prompt)
            ref = fields[effect["pid"]].get("msg")
            if ref:
                item.metadata["prompt_message_id"] = ref
            await channel.post(thread, item)
            return log_entry("gateway", item)
        return await self._post_escalation(thread_id, effect, fields, prompts)

    async def _post_escalation(
        self,
        thread_id: str,
        effect: dict[str, Any],
        fields: dict[str, dict[str, str]],
        prompts: dict[str, Prompt],
    ) -> str | None:
        """An escalation step's reminder or copies, or a settled prompt's outcome for its copy here."""
        if effect["t"] == "copy_settled":
            return await self.escalator.copy_settled(thread_id, effect)
        prompt = prompts.get(effect.get("pid", ""))
        if prompt is None:
            return None
        if effect["t"] == "remind":
            item = await self.escalator.remind(prompt)
            return log_entry("gateway", item) if item is not None else None
        if effect["t"] == "escalate":
            await self.escalator.escalate(prompt, int(effect["step"]), fields[effect["pid"]])
        return None

    async def _retire_controls(
        self,
        channel: object,
        thread_id: str,
        prompt: Prompt,
        ref: str | None,
        by: str | None = None,
        audit: ThreadItem | None = None,
    ) -> None:
        """Show the outcome on the prompt's own message (``ref``), where the platform can edit it
        (``audit``: the audit item just posted for it, whose metadata the edit repeats)."""
        if not ref or not self._can_edit(channel):
            return
        editor = cast(EditsMessages, channel)  # checked once per channel type by _can_edit
        try:
            await editor.edit(MessageRef(thread_id, ref), settled_prompt_item(prompt, by, audit=audit))
        except ChannelError as exc:  # the audit item already says how it settled
            event("outbox.edit_failed", logging.WARNING, thread_id=thread_id, error=str(exc))
            metrics.platform_error(thread_id, exc)

    def _can_edit(self, channel: object) -> bool:
        """Whether the channel can edit a posted message (a Protocol check, made once per channel type)."""
        kind = type(channel)
        known = self._edits.get(kind)
        if known is None:
            known = self._edits[kind] = isinstance(channel, EditsMessages)
        return known

    async def sweep(self, *, everything: bool = False) -> int:
        """Drain threads marked dirty a while ago (left by a crashed process or a failed post)."""
        now_ms = int(self.clock() * 1000)
        cutoff = now_ms if everything else now_ms - SWEEP_AGE_MS
        await self.store.trim_feeds(now_ms)
        threads = [thread for thread in await self.store.dirty_threads(cutoff) if not self.busy(thread)]
        drained = 0
        for start in range(0, len(threads), PASS_THREADS):
            done = await self.drain_many(threads[start : start + PASS_THREADS])
            for thread, empty in done.items():
                if empty:
                    await self.store.drop_dirty(thread, now_ms - SWEEP_AGE_MS)
                    drained += 1
        return drained

    async def run(self, interval: float = 2.0) -> None:
        """Sweep forever (a background task of the service)."""
        while True:
            with contextlib.suppress(Exception):
                await self.sweep()
            await asyncio.sleep(interval)


def _event(part: int, event_id: str, kind: str, data: str) -> FeedEntry:
    return FeedEntry(keys.events_feed(part), event_id, feed_event_json(event_id, kind, data))


def _message_entries(part: int, message: dict[str, Any], text: str | None = None) -> list[FeedEntry]:
    """A message queued for agents (``text``: its JSON, when already at hand): on the messages feed, and
    announced on the events feed. Both carry ids stable across drains (the message's own)."""
    message_id = str(message["message_id"])
    text = text if text is not None else json.dumps(message, ensure_ascii=False)
    return [
        FeedEntry(keys.messages_feed(part), message_id, text),
        _event(part, f"{message_id}.received", "message.received", text),
    ]


def claimed_json(prompt: Prompt, effect: dict[str, Any]) -> str:
    """``input.claimed``'s data: the prompt with who holds it as this claim or release left it (a release:
    ``claimed_by`` null), whatever has happened to the claim since."""
    until = effect.get("u")
    update = {
        "claimed_by": effect.get("by") or None,
        "claimed_until": from_ms(until) if until else None,
    }
    return prompt.model_copy(update=update).public_json()


def parked_message(prompt: Prompt, turn_id: str) -> dict[str, Any]:
    """An answer that arrived while the agent was not waiting, re-driven as its next turn's message."""
    answers = [answer.model_dump(mode="json") for answer in prompt.answers or []]
    text = answers_summary(prompt.answers or [])
    metadata: dict[str, Any] = {"answers": answers, "prompt_id": prompt.prompt_id}
    if prompt.content is not None:  # a form's typed values
        metadata["content"] = prompt.content
    if prompt.note is not None:  # an approval's reason (why it was denied), in the person's words
        metadata["note"] = prompt.note
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
