"""Prompts: open one, read it, settle it (answer, cancel, expire), and what waits on it (watch marks, the
answer admission, drafts of an answer in progress)."""

from __future__ import annotations

from typing import Any

from gateway.base.models import Answer, Prompt, ReasonCode, Resolution, to_ms
from gateway.store import calls, keys
from gateway.store.base import StoreBase, pairs
from gateway.store.codec import RecordCodec
from gateway.store.escalations import schedule
from gateway.store.outboxes import held
from gateway.store.results import Claimed, ClaimRequest, OpenStatus, OutboxClaim, Settlement, SettlementStatus


def settlement(reply: list[Any], codec: RecordCodec, claim: OutboxClaim | None = None) -> Settlement:
    """A settling script's reply (``resolve_prompt``, ``cancel_prompt``, ``expire_prompt``) as a value."""
    status = SettlementStatus(reply[0])
    if status is SettlementStatus.SETTLED:
        return Settlement(status, codec.decode(pairs(reply[1:])))
    if status is SettlementStatus.OK and len(reply) > 1:  # an answer: its resolution, the outbox it took
        return Settlement(status, resolution=Resolution(reply[1]), held=held(claim, reply[2:]))
    return Settlement(status)


class Prompts(StoreBase):
    """A prompt's life in its thread, each change one script."""

    async def open_prompt(self, prompt: Prompt, supersede_reason: str, now_ms: int) -> tuple[OpenStatus, str]:
        """Open ``prompt`` as its thread's active prompt. Returns (status, superseded prompt id or '').

        The indexes are written first, in the same round
        trip, so the prompt can be found by id the moment it exists.
        """
        thread = prompt.thread_id
        expires_ms = to_ms(prompt.expires_at)
        index_ttl_ms = max(expires_ms - now_ms, 0) + self.retain_ms
        created = to_ms(prompt.created_at)
        part = keys.partition(thread)
        prelude: list[tuple[Any, ...]] = [
            ("SET", keys.prompt_index(prompt.prompt_id), thread, "PX", index_ttl_ms),
            ("ZADD", keys.expiry_index(part), expires_ms, prompt.prompt_id),
            ("ZADD", keys.pending_index(part), created, prompt.prompt_id),
            ("ZADD", keys.agent_pending(prompt.agent, part), created, prompt.prompt_id),
            ("ZADD", keys.dirty_threads(part), now_ms, thread),
            *schedule(prompt),
        ]
        call = calls.open_prompt(
            self._lead(now_ms),
            thread,
            prompt.prompt_id,
            prompt.run_id,
            self.codec.encode(prompt),
            now_ms,
            expires_ms,
            self.retain_ms,
            supersede_reason,
            prompt.agent,
        )
        reply = await self.scripts.run_after(self.redis, prelude, *call)
        self._thread_of.put(prompt.prompt_id, thread)
        status = OpenStatus(reply[0])
        if status is OpenStatus.OK:
            self._latest.put(thread, prompt)
        return status, (reply[1] if len(reply) > 1 else "")

    async def get_prompt(
        self, prompt_id: str, thread_id: str | None = None, *, watch_ms: int = 0
    ) -> Prompt | None:
        """The prompt; with ``watch_ms``, a pending one is also marked as waited on for that long (see
        ``watch``), in the same step."""
        thread = thread_id or await self.prompt_thread(prompt_id)
        if thread is None:
            return None
        call = calls.read_prompt(self._lead(), thread, prompt_id, watch_ms)
        reply = await self.scripts.call(self.redis, *call)
        fields = pairs(reply)
        return self.codec.decode(fields) if "state" in fields and "rec" in fields else None

    def latest_prompt(self, thread_id: str) -> Prompt | None:
        """The last prompt this process saw opened or active in the thread: a guess, checked by Redis."""
        return self._latest.get(thread_id)

    async def active_prompt_id(self, thread_id: str) -> str | None:
        value: str | None = await self.redis.get(keys.active(thread_id))
        return value

    async def get_prompt_field(self, thread_id: str, prompt_id: str, name: str) -> str | None:
        value: str | None = await self.redis.hget(keys.prompt(thread_id, prompt_id), name)
        return value

    async def resolve(
        self,
        thread_id: str,
        prompt_id: str,
        answers: list[Answer],
        answered_by: str | None,
        turn_id: str,
        now_ms: int,
        content: dict[str, Any] | None = None,
        opts: str = "",
        claim: OutboxClaim | None = None,
    ) -> Settlement:
        """Answer a prompt; the first resolution wins. Hot if the agent is watching, else parked.

        ``opts`` carries an approval's decision (see ``gateway.rules.verdicts``): a vote may leave it pending.
        With ``claim``, an answer also takes the thread's outbox lock when free (``Settlement.held``)."""
        call = calls.resolve_prompt(
            self._lead(now_ms, claim),
            thread_id,
            prompt_id,
            answers,
            answered_by or "",
            now_ms,
            self.retain_ms,
            turn_id,
            content,
            opts,
        )
        return settlement(await self._thread_script(thread_id, call, now_ms), self.codec, claim)

    async def cancel(
        self,
        thread_id: str,
        prompt_id: str,
        reason: str,
        code: ReasonCode,
        now_ms: int,
        *,
        audit: bool = True,
        by: str = "",
        opts: str = "",
    ) -> Settlement:
        """Cancel a pending prompt; ``by`` names the person who did (kept as ``cancelled_by``), refused
        (``claimed``) while another holds its claim (``opts``: the decision's, naming ``by``'s person)."""
        lead = self._lead(now_ms)
        call = calls.cancel_prompt(
            lead,
            thread_id,
            prompt_id,
            reason,
            code.value,
            now_ms,
            self.retain_ms,
            audit=audit,
            by=by,
            opts=opts,
        )
        return settlement(await self._thread_script(thread_id, call, now_ms), self.codec)

    async def claim(self, thread_id: str, prompt_id: str, hold: ClaimRequest, now_ms: int) -> Claimed:
        """Claim or release a pending prompt in one step (see ``claim_prompt.lua``)."""
        call = calls.claim_prompt(self._lead(now_ms), thread_id, prompt_id, hold)
        reply = await self._thread_script(thread_id, call, now_ms)
        status = SettlementStatus(reply[0])
        if status is SettlementStatus.SETTLED:
            return Claimed(status, prompt=self.codec.decode(pairs(reply[1:])))
        if status is SettlementStatus.MISSING:
            return Claimed(status)
        holder, until = str(reply[1]) or None, str(reply[2])
        changed = len(reply) > 3 and str(reply[3]) == "1"
        return Claimed(status, holder, int(until) if until else None, changed)

    async def expire(self, thread_id: str, prompt_id: str, reason: str, now_ms: int) -> Settlement:
        call = calls.expire_prompt(self._lead(now_ms), thread_id, prompt_id, reason, now_ms, self.retain_ms)
        return settlement(await self._thread_script(thread_id, call, now_ms), self.codec)

    async def watch(self, thread_id: str, prompt_id: str, ttl_ms: int) -> None:
        """Mark that the agent is waiting on a prompt right now (an answer then resolves hot)."""
        await self.redis.set(keys.watch(thread_id, prompt_id), "1", px=ttl_ms)

    async def is_watched(self, thread_id: str, prompt_id: str) -> bool:
        """Whether the agent is waiting on the prompt right now (an answer would resolve hot)."""
        return bool(await self.redis.exists(keys.watch(thread_id, prompt_id)))

    async def admit(self, thread_id: str, token: str, ttl_ms: int) -> bool:
        """Take the thread's answer admission for ``token`` (at most ``ttl_ms``); False while another
        caller holds it."""
        return bool(await self.redis.set(keys.admission(thread_id), token, nx=True, px=ttl_ms))

    async def release_admission(self, thread_id: str, token: str) -> None:
        """Give the admission back, if ``token`` still holds it."""
        await self.scripts.call(self.redis, *calls.release_held(keys.admission(thread_id), token))

    async def update_draft(
        self, thread_id: str, prompt_id: str, name: str, values: dict[str, str], ttl_ms: int
    ) -> dict[str, str] | None:
        """Merge ``values`` into the draft ``name`` kept for a pending prompt, ``ttl_ms`` more; the whole
        draft, or None when the prompt is no longer pending. The prompt settling deletes its drafts."""
        call = calls.save_draft(self._lead(), thread_id, prompt_id, name, ttl_ms, values)
        reply = await self.scripts.call(self.redis, *call)
        return pairs(reply[1]) if reply[0] == "saved" else None

    async def get_draft(self, thread_id: str, name: str) -> dict[str, str]:
        return dict(await self.redis.hgetall(keys.draft(thread_id, name)))
