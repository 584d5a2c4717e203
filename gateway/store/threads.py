"""A thread's conversation: a person's message decided in one step (answer, queue, refuse or hand back
the active prompt), and the thread's item log."""

from __future__ import annotations

import json
from typing import Any

from gateway.base.cursors import exclusive_start
from gateway.base.models import Resolution
from gateway.store import calls, keys
from gateway.store.base import StoreBase, pairs
from gateway.store.codec import RecordCodec
from gateway.store.outboxes import held
from gateway.store.results import Decision, DecisionStatus, Kept, OutboxClaim, ReadyAnswer, Refusal

# What leaves the thread with no prompt of its own open (so this process's guess at it is dropped).
CLOSED = frozenset(
    {DecisionStatus.ANSWERED, DecisionStatus.QUEUED, DecisionStatus.SETTLED, DecisionStatus.CANCELLED}
)


def decision(reply: list[Any], codec: RecordCodec, claim: OutboxClaim | None) -> Decision:
    """A ``receive_message`` reply as a value."""
    status = DecisionStatus(reply[0])
    if status is DecisionStatus.ANSWERED:
        return Decision(status, resolution=Resolution(reply[1]), held=held(claim, reply[2:]))
    if status is DecisionStatus.ACTIVE:
        return Decision(status, codec.pending(reply[2]))
    if status is DecisionStatus.SETTLED:
        return Decision(status, codec.decode(pairs(reply[1:])))
    if status is DecisionStatus.MIRROR:
        return Decision(status, mirror=(str(reply[1]), str(reply[2])))
    return Decision(status)


class Threads(StoreBase):
    """People's messages reaching a thread, and what the thread logs."""

    async def receive(
        self,
        thread_id: str,
        event_id: str | None,
        prompt_hint: str | None,
        message: dict[str, Any],
        now_ms: int,
        ready: ReadyAnswer | Refusal | Kept | None = None,
        claim: OutboxClaim | None = None,
    ) -> Decision:
        """Dedupe a person's message, then answer, queue or refuse it, or hand back the active prompt.

        ``ready`` is what the caller decided on a prompt: a guess (the prompt it believes is active) is
        applied only if that prompt is still the active one and pending, else the script decides as if
        nothing were given. The event is marked seen in the same script that applies its effect; an
        ``active`` decision marks nothing, so the caller's second call (``ready`` decided on the prompt
        handed back) does. With ``claim``, an answer also takes the thread's outbox lock when free
        (``Decision.held``).
        """
        call = calls.receive_message(
            self._lead(now_ms, claim),
            thread_id,
            event_id or "",
            self.dedupe_ttl_s,
            prompt_hint or "",
            message,
            self.items_maxlen,
            ready,
            now_ms,
            self.retain_ms,
        )
        decided = decision(await self._thread_script(thread_id, call, now_ms), self.codec, claim)
        if decided.status in CLOSED:
            self._latest.pop(thread_id, None)
        elif decided.status is DecisionStatus.ACTIVE and decided.prompt is not None:
            self._latest.put(thread_id, decided.prompt)
        return decided

    async def note_copy_reply(
        self, thread_id: str, event_id: str | None, entry: dict[str, Any] | None
    ) -> None:
        """A message handed to another thread (a reply to a copy of its prompt): its platform event is
        marked seen here as well, so a redelivery after the copy is gone is still a duplicate; ``entry``,
        when given, is logged here too."""
        prelude: list[tuple[Any, ...]] = []
        if event_id:
            prelude.append(("SET", keys.seen(thread_id, event_id), "1", "EX", self.dedupe_ttl_s))
        if entry is None:
            if prelude:
                await self.scripts.run_commands(self.redis, prelude)
            return
        call = calls.append_item(self._lead(), thread_id, self.items_maxlen, entry, None)
        await self.scripts.run_after(self.redis, prelude, *call)

    async def log_item(self, thread_id: str, entry: dict[str, Any]) -> str:
        return await self._append_item(thread_id, entry, None)

    async def record_post(
        self, thread_id: str, prompt_id: str, message_id: str, entry: dict[str, Any]
    ) -> None:
        """Remember where a prompt was posted (to retire its controls later) and log the item."""
        await self._append_item(thread_id, entry, (prompt_id, message_id))

    async def _append_item(
        self, thread_id: str, entry: dict[str, Any], posted: tuple[str, str] | None
    ) -> str:
        call = calls.append_item(self._lead(), thread_id, self.items_maxlen, entry, posted)
        return str(await self.scripts.call(self.redis, *call))

    async def thread_items(
        self, thread_id: str, after: str | None, limit: int
    ) -> list[tuple[str, dict[str, Any]]]:
        start = exclusive_start(after)
        if start is None:
            return []
        rows = await self.redis.xrange(keys.items(thread_id), min=start, max="+", count=limit)
        return [(entry_id, json.loads(fields["j"])) for entry_id, fields in rows]
