"""Settling prompts: read and wait for them, answer on a person's behalf (REST), cancel, expire, and the
drafts an answer in progress keeps."""

from __future__ import annotations

import asyncio
from collections.abc import Collection
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from gateway.base.errors import GatewayError, not_found
from gateway.base.ids import new_id, parse_thread_id
from gateway.base.logs import event
from gateway.base.models import (
    APPROVE,
    Answer,
    Prompt,
    PromptState,
    ReasonCode,
    Resolution,
    ToolCall,
    from_ms,
)
from gateway.decision.claiming import Claiming, claimed_error
from gateway.delivery.waiters import READ_AGAIN, Settled
from gateway.rules.authz import may_answer, person_of
from gateway.rules.grants import GrantMatch
from gateway.rules.mapper import map_reply
from gateway.rules.outcomes import Draft, DraftStatus
from gateway.rules.verdicts import EditRefused, Verdict, check_edit, verdict
from gateway.store import Settlement
from gateway.store.codec import with_settlement
from gateway.store.results import SettlementStatus

EXPIRED_REASON = "nobody answered before it expired"
WATCH_GRACE_MS = 10_000
DRAFT_GRACE_MS = 60_000


class AnswerStatus(StrEnum):
    ANSWERED = "answered"  # this call settled it
    SAME = "same"  # it was already answered exactly this way
    CONFLICT = "conflict"  # it had already settled otherwise
    VOTED = "voted"  # an approval recorded; more approvers are needed (the prompt stays pending)
    ALREADY_VOTED = "already_voted"  # this person had voted on it already: nothing changed


@dataclass(frozen=True, slots=True)
class AnswerResult:
    status: AnswerStatus
    prompt: Prompt


class Settling(Claiming):
    """Every way a prompt settles but a chat reply: answered through the API, cancelled, expired."""

    async def get_prompt(self, prompt_id: str) -> Prompt:
        prompt = await self.store.get_prompt(prompt_id)
        if prompt is None:
            raise not_found("PROMPT_NOT_FOUND", "prompt", prompt_id)
        return prompt

    async def wait_prompt(self, prompt_id: str, timeout: float) -> Prompt:
        """The prompt, once settled or after ``timeout`` seconds. Woken by Redis pub/sub, not polling:
        while it waits, the caller holds no Redis connection."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        with self.waiters.watch(prompt_id) as watch:
            # One round trip reads the prompt and, while it is pending, marks that the agent waits.
            watch_ms = int(timeout * 1000) + WATCH_GRACE_MS if timeout > 0 else 0
            prompt = await self.store.get_prompt(prompt_id, watch_ms=watch_ms)
            if prompt is None:
                raise not_found("PROMPT_NOT_FOUND", "prompt", prompt_id)
            if not prompt.pending or timeout <= 0:
                return prompt
            while prompt.pending:
                remaining = deadline - loop.time()
                if remaining <= 0 or self.waiters.draining:  # draining: answered pending, as on timeout
                    break
                settled = await _settled_within(watch.future, remaining, loop)
                if settled.prompt is not None:  # settled by this process, which handed it over
                    return settled.prompt
                if settled.fields is not None:  # the wake-up said how it settled
                    return with_settlement(prompt, settled.fields)
                # Registered again before reading, so a settlement landing meanwhile still wakes the next
                # wait; a wake can be spurious (every waiter is woken after the subscription was re-made).
                watch.renew()
                prompt = await self.get_prompt(prompt_id)
            return prompt

    async def cancel_prompt(
        self,
        prompt_id: str,
        reason: str = "cancelled",
        code: ReasonCode = ReasonCode.CANCELLED,
        *,
        by: str = "",
    ) -> Settlement:
        """Cancel a pending prompt; ``by`` names the person on whose behalf (none for the agent): refused
        (``claimed``) while someone else holds its claim."""
        prompt = await self.get_prompt(prompt_id)
        opts = Verdict(person=await person_of(self.store, by)).opts() if by else ""
        settlement = await self.store.cancel(
            prompt.thread_id, prompt_id, reason, code, self.now_ms(), by=by, opts=opts
        )
        self.outbox.kick(prompt.thread_id)
        if settlement.ok:
            event(
                "prompt.cancelled",
                prompt_id=prompt_id,
                thread_id=prompt.thread_id,
                run_id=prompt.run_id,
                reason_code=code.value,
            )
        return settlement

    async def answer(
        self,
        prompt_id: str,
        identity: str,
        *,
        text: str = "",
        answers: list[dict[str, Any]] | None = None,
        note: str | None = None,
        arguments: dict[str, Any] | None = None,
        grant: GrantMatch | None = None,
        asserted_by: str | None = None,
        groups: Collection[str] = (),
    ) -> AnswerResult:
        """Answer on a person's behalf (REST): the same rule, mapper and script as a chat reply.

        ``note`` is the person's words on an approval; ``arguments`` the call as they edited it, which
        approves it (400 NOT_EDITABLE on a prompt not raised editable, VALIDATION_FAILED off its schema);
        ``grant`` the pattern an approve lets through for the rest of the run (``check_grant`` checked it);
        ``groups`` a signed-in person's (see ``may_answer``).
        """
        prompt = await self.get_prompt(prompt_id)
        if not await may_answer(self.store, prompt, identity, groups):
            raise GatewayError(
                "FORBIDDEN", f"{identity} may not answer this prompt.", 403, {"prompt_id": prompt_id}
            )
        mapped = map_reply(prompt.kind, prompt.questions, text, answers)
        edited = None
        if arguments is not None:
            edited = edited_call(prompt, arguments)
            if mapped[0].answer != [APPROVE]:
                raise GatewayError(
                    "VALIDATION_FAILED",
                    "Edited arguments approve the call; send them with the Approve answer.",
                    400,
                    {"errors": [{"field": "arguments", "problem": "sent with a Deny"}]},
                )
        return await self.settle_answers(
            prompt, mapped, identity, note=note, edited=edited, grant=grant, asserted_by=asserted_by
        )

    async def settle_answers(
        self,
        prompt: Prompt,
        answers: list[Answer],
        identity: str | None,
        content: dict[str, Any] | None = None,
        *,
        note: str | None = None,
        edited: ToolCall | None = None,
        grant: GrantMatch | None = None,
        asserted_by: str | None = None,
    ) -> AnswerResult:
        """Resolve with answers already checked (a form's with its validated ``content``); an earlier
        settlement wins and is reported. On an approval, ``note`` and ``edited`` (a call checked by
        ``edited_call``) are recorded, and where several approvers are needed the answer is a vote; an
        approve's ``grant`` is kept with it (``gateway.decision.granting.record_grant`` confirms it)."""
        now_ms, turn_id = self.now_ms(), new_id("turn")
        most = self.store.grants.max_per_run
        decided = verdict(
            prompt,
            answers,
            identity,
            now_ms,
            note=note,
            edited=edited,
            grant=grant,
            most_grants=most,
            person=await person_of(self.store, identity),
            starter_person=await person_of(self.store, prompt.started_by),
            asserted_by=asserted_by,
        )
        settlement = await self.store.resolve(
            prompt.thread_id,
            prompt.prompt_id,
            answers,
            identity,
            turn_id,
            now_ms,
            content,
            decided.opts(),
            self.outbox.claim(),
        )
        self.outbox.kick(prompt.thread_id, settlement.held)
        if settlement.status is SettlementStatus.MISSING:
            raise not_found("PROMPT_NOT_FOUND", "prompt", prompt.prompt_id)
        if settlement.status is SettlementStatus.VOTED:
            return AnswerResult(AnswerStatus.VOTED, await self.get_prompt(prompt.prompt_id))
        if settlement.status is SettlementStatus.ALREADY_VOTED:
            return AnswerResult(AnswerStatus.ALREADY_VOTED, await self.get_prompt(prompt.prompt_id))
        if settlement.status is SettlementStatus.CLAIMED:  # someone else holds it: 409 on every API path
            raise claimed_error(await self.get_prompt(prompt.prompt_id))
        if settlement.ok:
            answered = await self._answered_now(
                prompt, answers, identity, settlement.resolution, turn_id, now_ms, content, decided
            )
            self.waiters.notify(prompt.prompt_id, prompt=answered)
            return AnswerResult(AnswerStatus.ANSWERED, answered)
        settled = settlement.prompt
        assert settled is not None
        same = settled.answers is not None and [a.answer for a in settled.answers] == [
            a.answer for a in answers
        ]
        return AnswerResult(AnswerStatus.SAME if same else AnswerStatus.CONFLICT, settled)

    async def save_draft(self, prompt_id: str, sender: str, name: str, values: dict[str, str]) -> Draft:
        """Keep part of an answer in progress (a step of a multi-step control) in the prompt's thread.

        Only while the prompt is pending and only for a person who may answer it: the same rule as an
        answer. The draft ``name`` lives until the prompt expires, and is deleted when it settles; empty
        ``values`` only checks and reads.
        """
        prompt = await self.get_prompt(prompt_id)
        if not prompt.pending:
            return Draft(DraftStatus.STALE, {})
        if not await may_answer(self.store, prompt, sender):
            return Draft(DraftStatus.NOT_ALLOWED, {})
        # Relative to this process's clock, as the prompt's expiry is; due but not yet swept: a minute.
        ttl_ms = max(int(prompt.expires_at.timestamp() * 1000) - self.now_ms(), DRAFT_GRACE_MS)
        merged = await self.store.update_draft(prompt.thread_id, prompt.prompt_id, name, values, ttl_ms)
        if merged is None:  # settled meanwhile: settling deleted its drafts
            return Draft(DraftStatus.STALE, {})
        return Draft(DraftStatus.SAVED, merged)

    async def get_draft(self, thread_id: str, name: str) -> dict[str, str]:
        """The thread's draft ``name`` (empty when there is none, or it expired with its prompt)."""
        thread = parse_thread_id(thread_id)
        return await self.store.get_draft(thread.thread_id, name)

    async def expire_due(self) -> int:
        """Cancel every prompt whose expiry has passed (reason_code ``expired``)."""
        now_ms = self.now_ms()
        expired = 0
        for prompt_id in await self.store.due_prompts(now_ms):
            thread = await self.store.prompt_thread(prompt_id)
            if thread is None:
                await self.store.forget_pending(prompt_id, "")
                continue
            settlement = await self.store.expire(thread, prompt_id, EXPIRED_REASON, now_ms)
            self.outbox.kick(thread)
            if settlement.ok:
                expired += 1
                event("prompt.expired", prompt_id=prompt_id, thread_id=thread)
            elif settlement.status is not SettlementStatus.NOT_DUE:
                prompt = settlement.prompt
                await self.store.forget_pending(prompt_id, prompt.agent if prompt else "", thread)
        return expired

    async def escalate_due(self) -> int:
        """Take every due escalation step of a pending prompt, once across processes (see
        ``gateway.decision.escalation``)."""
        return await self.outbox.escalator.run_due()

    async def _answered_now(
        self,
        prompt: Prompt,
        answers: list[Answer],
        identity: str | None,
        resolution: Resolution | None,
        turn_id: str,
        now_ms: int,
        content: dict[str, Any] | None,
        decided: Verdict,
    ) -> Prompt:
        """The prompt as this call answered it; one decided by several votes is read back with them all."""
        answered = _answered(prompt, answers, identity, resolution, turn_id, now_ms, content)
        if decided.vote is not None:
            return await self.get_prompt(prompt.prompt_id)
        return answered.model_copy(
            update={
                "note": decided.note,
                "approved_call": decided.approved_call,
                "person": decided.person,
                "asserted_by": decided.asserted_by,
            }
        )


def edited_call(prompt: Prompt, arguments: dict[str, Any]) -> ToolCall:
    """The call a person's edited ``arguments`` make, or 400 NOT_EDITABLE / VALIDATION_FAILED naming the
    fields the tool's schema refuses."""
    try:
        return check_edit(prompt, arguments)
    except EditRefused as exc:
        errors = [{"field": error.field, "problem": error.problem} for error in exc.errors]
        raise GatewayError(
            exc.code, exc.message, 400, {"prompt_id": prompt.prompt_id, "errors": errors}
        ) from None


def _answered(
    prompt: Prompt,
    answers: list[Answer],
    identity: str | None,
    resolution: Resolution | None,
    turn_id: str,
    now_ms: int,
    content: dict[str, Any] | None = None,
) -> Prompt:
    """The prompt as this call answered it (logged once, here, for every answer path)."""
    event(
        "prompt.answered",
        prompt_id=prompt.prompt_id,
        thread_id=prompt.thread_id,
        run_id=prompt.run_id,
        resolution=resolution.value if resolution else None,
    )
    return prompt.model_copy(
        update={
            "prompt_state": PromptState.ANSWERED,
            "answers": answers,
            "content": content,
            "answered_by": identity,
            "resolution": resolution,
            "turn_id": turn_id if resolution is Resolution.PARKED else None,
            "settled_at": from_ms(now_ms),
        }
    )


async def _settled_within(
    future: asyncio.Future[Settled], timeout: float, loop: asyncio.AbstractEventLoop
) -> Settled:
    """How the watched prompt settled, or ``READ_AGAIN`` after ``timeout`` seconds: one timer handle
    resolves the future itself, so a held wait costs no task, no ``asyncio.timeout`` and no event."""
    timer = loop.call_later(timeout, _time_up, future)
    try:
        return await future
    finally:
        timer.cancel()


def _time_up(future: asyncio.Future[Settled]) -> None:
    if not future.done():
        future.set_result(READ_AGAIN)
