"""The gateway's core service: raise, receive, resolve, cancel, expire, adopt; the outbox does the rest."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from enum import StrEnum
from typing import Any

from gateway import metrics, notices, storable
from gateway.adoption import Adoption
from gateway.approval_policy import needs_approval, tool_rule
from gateway.authz import may_answer
from gateway.channel import ChannelError, Channels, PrivateNotices
from gateway.errors import GatewayError, not_found
from gateway.escalation import check_owners, check_targets
from gateway.feeds import Feeds
from gateway.granting import granted, not_recorded, record_grant
from gateway.grants import Grant, GrantMatch, GrantRequest, exact_match
from gateway.history import grant_use_entry
from gateway.ids import new_id, parse_thread_id
from gateway.logs import event
from gateway.mapper import map_reply
from gateway.models import (
    APPROVE,
    Answer,
    InboundMessage,
    Prompt,
    PromptKind,
    PromptRequest,
    PromptState,
    Question,
    ReasonCode,
    Resolution,
    Run,
    RunRequest,
    RunState,
    ToolAnnotations,
    ToolCall,
    ToolRule,
    from_ms,
)
from gateway.outbox import LOCK_TTL_MS as OUTBOX_LOCK_MS
from gateway.outbox import Outbox
from gateway.outcomes import Draft, DraftStatus, Outcome, Received
from gateway.render import message_item, pending_prompt_item
from gateway.replies import NEW_MESSAGE_REASON, Reading, ReplyAction, draft_name, read_reply
from gateway.store import Decision, Kept, ReadyAnswer, Refusal, Settlement, Store, trim_idle
from gateway.store.codec import with_settlement
from gateway.store.outage import StoreHealth
from gateway.store.results import DecisionStatus, OpenStatus, SettlementStatus
from gateway.tasks import cancel_and_wait
from gateway.verdicts import EditRefused, Verdict, check_edit, verdict
from gateway.waiters import Waiters

RUN_ENDED_REASON = "the run ended"
ABORTED_REASON = "the run was aborted"
DECLINED_REASON = "the person declined to answer"
SUPERSEDED_REASON = "a newer prompt in this thread replaced it"
EXPIRED_REASON = "nobody answered before it expired"
WATCH_GRACE_MS = 10_000
POOL_TRIM_S = 10.0  # how often Redis connections a burst opened and left idle are closed
IDLE_CONNECTIONS_KEPT = 2
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


def unavailable_message(kind: PromptKind, detail: str) -> str:
    """Never a denial: the question was not asked."""
    noun = "Approval" if kind is PromptKind.APPROVAL else "Question"
    return f"{noun} unavailable: the prompt could not be posted to the chat ({detail})."


class Gateway:
    """The core: every path (chat reply, control press, REST) comes through here."""

    def __init__(
        self,
        store: Store,
        channels: Channels,
        *,
        clock: Callable[[], float] = time.time,
        sweep_interval: float = 2.0,
        health: StoreHealth | None = None,
        outbox_lock_ms: int = OUTBOX_LOCK_MS,
    ) -> None:
        self.store = store
        self.channels = channels
        self.clock = clock
        self.health = health or StoreHealth(store.redis)
        self.outbox = Outbox(store, channels, clock, health=self.health, lock_ttl_ms=outbox_lock_ms)
        self.waiters = Waiters(store.redis, health=self.health)
        self.feeds = Feeds(store.redis, report=self.health.report)
        self.sweep_interval = sweep_interval
        self.adoption = Adoption(store, self.health)
        self._tasks: list[asyncio.Task[Any]] = []

    def now_ms(self) -> int:
        return int(self.clock() * 1000)

    # Lifecycle -------------------------------------------------------------------------------------

    async def start(self, *, adopt: bool = True) -> None:
        """Load scripts and listen for settled prompts, then serve at once: adopting the waiting prompts
        (unless ``adopt`` is False: another process of the same start does it), the first sweep of
        outboxes left behind and the periodic sweepers all run in the background."""
        await self.store.load()
        await self.waiters.start()
        await self.feeds.start()
        self._tasks = [
            asyncio.create_task(self._sweep_all_then_every(self.sweep_interval), name="threadgate.sweep"),
            asyncio.create_task(self._every(self.sweep_interval, self.expire_due), name="threadgate.expiry"),
            asyncio.create_task(
                self._every(self.sweep_interval, self.escalate_due), name="threadgate.escalation"
            ),
            asyncio.create_task(self._every(POOL_TRIM_S, self.trim_pool), name="threadgate.pool_trim"),
        ]
        if adopt:
            self._tasks.append(self.adoption.start())

    async def stop(self) -> None:
        await cancel_and_wait(self._tasks)
        self._tasks = []
        await self.outbox.idle()
        await self.feeds.stop()
        await self.waiters.stop()

    async def _sweep_all_then_every(self, interval: float) -> None:
        """Deliver every outbox left behind (by a process that died, however recently), retried every
        ``interval`` until it went through; then sweep the ones left a while ago every ``interval``."""
        swept_all = False
        while True:
            if swept_all:
                await self._attempt(self.outbox.sweep)
            else:
                swept_all = await self._attempt(self.sweep_left_behind)
            await asyncio.sleep(interval)

    async def sweep_left_behind(self) -> int:
        """Drain every thread marked dirty, however recently."""
        return await self.outbox.sweep(everything=True)

    async def _every(self, interval: float, job: Callable[[], Any]) -> None:
        while True:
            await self._attempt(job)
            await asyncio.sleep(interval)

    async def _attempt(self, job: Callable[[], Any]) -> bool:
        """Run a background job once: False when it failed (logged; a store outage once, by the health
        record)."""
        try:
            await job()
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            name = getattr(job, "__name__", "?")
            if not self.health.report(exc, name):
                event("background.failed", logging.WARNING, job=name, error=str(exc))
            return False
        finally:
            # redis-py may swallow a cancellation that lands mid-command; honour it here, or stop() hangs.
            if (task := asyncio.current_task()) is not None and task.cancelling():
                raise asyncio.CancelledError
        return True

    async def trim_pool(self) -> None:
        """Close the Redis connections a burst of requests opened and left idle: waiting agents hold
        none, so an idle process keeps only a few (plus the stream follower and the pub/sub)."""
        await trim_idle(self.store.redis, IDLE_CONNECTIONS_KEPT)

    async def adopt(self) -> int:
        """Take back every pending prompt from Redis: count it, forget settled ones (see ``Adoption``)."""
        return await self.adoption.adopt()

    # Runs ------------------------------------------------------------------------------------------

    async def create_run(self, request: RunRequest) -> Run:
        thread = parse_thread_id(request.thread_id)
        self.channels.for_thread(thread)
        run = Run(
            run_id=new_id("run"),
            thread_id=thread.thread_id,
            agent=request.agent,
            started_by=request.started_by,
            created_at=from_ms(self.now_ms()),
        )
        await self.store.create_run(run)
        return run

    async def get_run(self, run_id: str) -> Run:
        run = await self.store.get_run(run_id)
        if run is None:
            raise not_found("RUN_NOT_FOUND", "run", run_id)
        return run

    async def end_run(self, run_id: str, *, aborted: bool = False) -> Run:
        """End a run; its pending prompt is cancelled with reason ``the run ended`` (or, aborted, with
        ``the run was aborted`` and reason_code ``aborted``)."""
        run = await self.get_run(run_id)
        code = ReasonCode.ABORTED if aborted else ReasonCode.RUN_ENDED
        reason = ABORTED_REASON if aborted else RUN_ENDED_REASON
        found, cancelled = await self.store.end_run(run.thread_id, run_id, reason, self.now_ms(), code)
        if not found:
            raise not_found("RUN_NOT_FOUND", "run", run_id)
        self.outbox.kick(run.thread_id)
        if cancelled:
            event(
                "prompt.cancelled",
                prompt_id=cancelled,
                thread_id=run.thread_id,
                run_id=run_id,
                reason_code=code.value,
            )
        return run.model_copy(update={"state": RunState.ENDED})

    # Prompts ---------------------------------------------------------------------------------------

    async def raise_prompt(self, run_id: str, request: PromptRequest) -> Prompt:
        """Record the prompt (superseding the thread's active one), then post it to the chat.

        If the post fails the prompt is cancelled and PROMPT_UNAVAILABLE is raised: never a denial.
        """
        # A run this process knows is not read again: the open script checks that it is still running.
        run = await self.store.get_run(run_id, state_may_be_stale=True)
        if run is None:
            raise not_found("RUN_NOT_FOUND", "run", run_id)
        if run.state is RunState.ENDED:
            raise GatewayError("RUN_ENDED", f"Run {run_id} has ended; start a new run to ask.", 409)
        thread = parse_thread_id(run.thread_id)
        channel = self.channels.for_thread(thread)
        check_targets(self.channels, request.escalation)
        await check_owners(self.store, self.channels, run.agent, request.escalation)
        now_ms = self.now_ms()
        settings = await self.store.human_input(run.agent)
        expires_in = request.expires_in_seconds or settings.expires_in_seconds
        escalation = settings.escalation if request.escalation is None else request.escalation
        assert request.questions is not None  # every kind has them once validated (forms derive theirs)
        prompt = Prompt(
            prompt_id=new_id("prm"),
            run_id=run.run_id,
            thread_id=run.thread_id,
            agent=run.agent,
            kind=request.kind,
            message=request.message,
            requested_schema=request.requested_schema,
            url=request.url,
            questions=request.questions,
            tool_call=request.tool_call,
            created_at=from_ms(now_ms),
            expires_at=from_ms(now_ms) + timedelta(seconds=expires_in),
            started_by=run.started_by,
            on_unmatched_reply=settings.on_unmatched_reply,
            editable=request.editable,
            input_schema=request.input_schema,
            approvals=request.approvals,
            starter_counts=request.starter_counts,
            escalation=escalation or None,
        )
        status, superseded = await self.store.open_prompt(prompt, SUPERSEDED_REASON, now_ms)
        if status is OpenStatus.NO_RUN:
            raise not_found("RUN_NOT_FOUND", "run", run_id)
        if status is OpenStatus.RUN_ENDED:
            raise GatewayError("RUN_ENDED", f"Run {run_id} has ended; start a new run to ask.", 409)
        if superseded:
            event(
                "prompt.superseded",
                prompt_id=superseded,
                by=prompt.prompt_id,
                thread_id=prompt.thread_id,
                run_id=run_id,
            )
        if superseded or self.outbox.busy(prompt.thread_id):
            # What this process already owes the thread (a superseded prompt's audit item, an agent
            # message) goes out before the new prompt.
            await self.outbox.flush(prompt.thread_id)
        item = pending_prompt_item(prompt)
        try:
            ref = await channel.post(thread, item)
        except ChannelError as exc:
            detail = str(exc) or type(exc).__name__
            metrics.platform_error(prompt.thread_id, exc)
            await self.store.cancel(
                prompt.thread_id,
                prompt.prompt_id,
                unavailable_message(prompt.kind, detail),
                ReasonCode.CANCELLED,
                self.now_ms(),
                audit=False,
            )
            self.outbox.kick(prompt.thread_id)
            event(
                "prompt.unavailable",
                logging.WARNING,
                prompt_id=prompt.prompt_id,
                thread_id=prompt.thread_id,
                run_id=run_id,
                error=detail,
            )
            raise GatewayError(
                "PROMPT_UNAVAILABLE",
                unavailable_message(prompt.kind, detail),
                503,
                {"prompt_id": prompt.prompt_id},
            ) from exc
        await self.store.record_post(
            prompt.thread_id,
            prompt.prompt_id,
            ref.message_id,
            {"role": "gateway", **item.model_dump(mode="json")},
        )
        self.outbox.kick(prompt.thread_id)
        event(
            "prompt.raised",
            prompt_id=prompt.prompt_id,
            thread_id=prompt.thread_id,
            run_id=run_id,
            kind=prompt.kind.value,
        )
        return prompt

    async def policy_asks(
        self,
        agent: str,
        tool_call: ToolCall,
        destructive: bool | None = None,
        annotations: ToolAnnotations | None = None,
    ) -> bool:
        """Whether ``agent``'s approval policy has a person approve ``tool_call`` first (no run needed)."""
        return needs_approval(await self.store.approval_policy(agent), tool_call, destructive, annotations)

    async def request_approval(
        self,
        run_id: str,
        tool_call: ToolCall,
        destructive: bool | None = None,
        question: str | None = None,
        expires_in_seconds: int | None = None,
        annotations: ToolAnnotations | None = None,
        *,
        editable: bool = False,
        input_schema: dict[str, Any] | None = None,
    ) -> Prompt | Grant | None:
        """A tool call about to be made: the run's grant that lets it through (its use counted; never for a
        call the tool's rule puts to several approvers), else the agent's approval policy: None when it asks
        nobody, else the approval raised.

        The tool's rule may let the person edit the call and ask for several approvers; ``editable`` asks
        for edits whatever the rule says."""
        run = await self.store.get_run(run_id)
        if run is None:
            raise not_found("RUN_NOT_FOUND", "run", run_id)
        if run.state is RunState.ENDED:
            raise GatewayError("RUN_ENDED", f"Run {run_id} has ended; start a new run to ask.", 409)
        policy = await self.store.approval_policy(run.agent)
        rule = tool_rule(policy, tool_call.name) or ToolRule()
        # A call its rule puts to several approvers is asked every time: no one person's grant answers it.
        grant = await granted(self.store, run, tool_call) if rule.approvals < 2 else None
        if grant is not None:
            await self.store.publish([grant_use_entry(run, grant, tool_call, self.now_ms())], [])
            return grant
        if not needs_approval(policy, tool_call, destructive, annotations):
            event("approval.by_policy", run_id=run_id, tool=tool_call.name)
            return None
        request = PromptRequest(
            kind=PromptKind.APPROVAL,
            questions=[Question(question=question or f"Allow {tool_call.name} to run?")],
            tool_call=tool_call,
            expires_in_seconds=expires_in_seconds,
            editable=editable or rule.edit,
            input_schema=input_schema,
            approvals=rule.approvals,
            starter_counts=rule.starter_counts,
        )
        return await self.raise_prompt(run_id, request)

    async def get_prompt(self, prompt_id: str) -> Prompt:
        prompt = await self.store.get_prompt(prompt_id)
        if prompt is None:
            raise not_found("PROMPT_NOT_FOUND", "prompt", prompt_id)
        return prompt

    async def wait_prompt(self, prompt_id: str, timeout: float) -> Prompt:
        """The prompt, once settled or after ``timeout`` seconds. Woken by Redis pub/sub, not polling:
        while it waits, the caller holds no Redis connection."""
        deadline = asyncio.get_running_loop().time() + timeout
        async with self.waiters.watch(prompt_id) as settled:
            # One round trip reads the prompt and, while it is pending, marks that the agent waits.
            watch_ms = int(timeout * 1000) + WATCH_GRACE_MS if timeout > 0 else 0
            prompt = await self.store.get_prompt(prompt_id, watch_ms=watch_ms)
            if prompt is None:
                raise not_found("PROMPT_NOT_FOUND", "prompt", prompt_id)
            if not prompt.pending or timeout <= 0:
                return prompt
            while prompt.pending:
                remaining = deadline - asyncio.get_running_loop().time()
                if remaining <= 0 or self.waiters.draining:  # draining: answered pending, as on timeout
                    break
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(remaining):  # no task per waiter, unlike wait_for
                        await settled.wait()
                if settled.prompt is not None:  # settled by this process, which handed it over
                    return settled.prompt
                if settled.fields is not None:  # the wake-up said how it settled
                    return with_settlement(prompt, settled.fields)
                # Cleared before reading, so a settlement landing meanwhile still wakes the next wait;
                # a wake can be spurious (every waiter is woken after the subscription was re-made).
                settled.clear()
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
        """Cancel a pending prompt; ``by`` names the person on whose behalf (none for the agent)."""
        prompt = await self.get_prompt(prompt_id)
        settlement = await self.store.cancel(prompt.thread_id, prompt_id, reason, code, self.now_ms(), by=by)
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
    ) -> AnswerResult:
        """Answer on a person's behalf (REST): the same rule, mapper and script as a chat reply.

        ``note`` is the person's words on an approval; ``arguments`` the call as they edited it, which
        approves it (400 NOT_EDITABLE on a prompt not raised editable, VALIDATION_FAILED off its schema);
        ``grant`` the pattern an approve lets through for the rest of the run (``check_grant`` checked it).
        """
        prompt = await self.get_prompt(prompt_id)
        if not await may_answer(self.store, prompt, identity):
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
        return await self.settle_answers(prompt, mapped, identity, note=note, edited=edited, grant=grant)

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
    ) -> AnswerResult:
        """Resolve with answers already checked (a form's with its validated ``content``); an earlier
        settlement wins and is reported. On an approval, ``note`` and ``edited`` (a call checked by
        ``edited_call``) are recorded, and where several approvers are needed the answer is a vote; an
        approve's ``grant`` is kept with it (``gateway.granting.record_grant`` confirms it)."""
        now_ms, turn_id = self.now_ms(), new_id("turn")
        most = self.store.grants.max_per_run
        decided = verdict(
            prompt, answers, identity, now_ms, note=note, edited=edited, grant=grant, most_grants=most
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
        ``gateway.escalation``)."""
        return await self.outbox.escalator.run_due()

    # People's messages -----------------------------------------------------------------------------

    async def receive(self, message: InboundMessage) -> Received:
        """A person's message or control press: dedupe, then answer the active prompt or queue it."""
        thread = parse_thread_id(message.thread_id)
        parts = (message.sender, message.text, message.note, message.answers, message.arguments)
        if (unkept := storable.first_problem(*parts)) is not None:  # a platform's payload: never stored
            event("message.not_storable", logging.INFO, thread_id=thread.thread_id, problem=unkept.problem)
            return Received(Outcome.KEPT, notice=notices.not_kept(unkept.problem))
        message_id = new_id("msg")
        entry = {
            "message_id": message_id,
            "thread_id": thread.thread_id,
            "sender": message.sender,
            "text": message.text,
            "content": [{"type": "text", "text": message.text}],
            # A control press says so (its answers, or a Decline), so a page shows no typed-looking bubble.
            "metadata": {"answers": message.answers}
            if message.answers is not None
            else ({"decline": True} if message.decline else {}),
            "received_at": message.received_at.isoformat(),
            "tag": None,
        }
        # The hot path: someone allowed to answer replies to the prompt this process last saw in the
        # thread. It is read now (an answer, or under seed 002's rule a new message superseding it) and
        # settled by the receive script itself if still the active one. Forms keep a draft: slow path.
        now_ms, latest, ready = self.now_ms(), self.store.latest_prompt(thread.thread_id), None
        if (
            latest is not None
            and latest.kind is not PromptKind.FORM
            and message.prompt_id in (None, latest.prompt_id)
            and await may_answer(self.store, latest, message.sender)
        ):
            reading = read_reply(
                latest,
                message.text,
                message.answers,
                decline=message.decline,
                note=message.note,
                arguments=message.arguments,
                grant=message.grant,
            )
            most = self.store.grants.max_per_run
            ready = _ready(latest, reading, message.sender, now_ms, decided=False, most_grants=most)
        claim = self.outbox.claim() if ready is not None else None
        decision = await self.store.receive(
            thread.thread_id, message.event_id, message.prompt_id, entry, now_ms, ready, claim
        )
        if decision.status is DecisionStatus.MIRROR and decision.mirror is not None:
            return await self._answer_copy(thread.thread_id, message, entry, *decision.mirror)
        if decision.status is DecisionStatus.ACTIVE:
            # Nothing is recorded yet, the event not even marked seen: this process decides who may
            # answer and reads the reply, and a second script applies that and marks the event together.
            # A crash in between leaves the platform's redelivery to be answered in full.
            prompt = decision.prompt
            assert prompt is not None
            if await may_answer(self.store, prompt, message.sender):
                return await self._decide(prompt, message, entry)
            now_ms = self.now_ms()
            decision = await self.store.receive(
                thread.thread_id,
                message.event_id,
                message.prompt_id,
                entry,
                now_ms,
                Refusal(prompt.prompt_id),
            )
            if decision.status is DecisionStatus.REFUSED:
                return await self._refused(thread.thread_id, prompt, message)
        return await self._received(thread.thread_id, message, decision, latest, ready, now_ms)

    async def _answer_copy(
        self, thread_id: str, message: InboundMessage, entry: dict[str, Any], origin: str, prompt_id: str
    ) -> Received:
        """A reply or press on a copy of another thread's prompt (posted by its escalation): the prompt's
        own thread takes it, by the same rules (who may answer, the mapper, first answer wins); what the
        sender is told, and the message itself, stay in the thread they wrote in."""
        if origin == thread_id:
            return Received(Outcome.STALE)
        routed = message.model_copy(update={"thread_id": origin, "prompt_id": prompt_id, "notify": False})
        received = await self.receive(routed)
        shown = received.outcome not in (Outcome.DUPLICATE, Outcome.STALE)
        await self.store.note_copy_reply(thread_id, message.event_id, entry if shown else None)
        if not message.notify:
            return received
        if received.outcome is Outcome.NOT_ALLOWED:
            await self._tell_privately(thread_id, message.sender, notices.NOT_ALLOWED)
        elif received.outcome is Outcome.STALE:
            await self._tell_privately(thread_id, message.sender, notices.STALE)
        elif received.outcome is Outcome.KEPT and received.notice:
            await self._tell(thread_id, message.sender, received.notice)
        return received

    async def _decide(self, prompt: Prompt, message: InboundMessage, entry: dict[str, Any]) -> Received:
        """Apply what a reply from someone allowed to answer makes of the handed-back prompt."""
        draft = None
        if prompt.kind is PromptKind.FORM and len(prompt.questions) > 1:
            draft = await self.store.get_draft(prompt.thread_id, draft_name(prompt.prompt_id))
        reading = read_reply(
            prompt,
            message.text,
            message.answers,
            draft,
            decline=message.decline,
            note=message.note,
            arguments=message.arguments,
            grant=message.grant,
        )
        now_ms = self.now_ms()
        most = self.store.grants.max_per_run
        ready = _ready(prompt, reading, message.sender, now_ms, decided=True, most_grants=most)
        hint, thread_id = message.prompt_id, prompt.thread_id
        if ready is not None:
            claim = self.outbox.claim()
            decision = await self.store.receive(
                thread_id, message.event_id, hint, entry, now_ms, ready, claim
            )
            return await self._received(thread_id, message, decision, prompt, ready, now_ms)
        # A form's step or a value not taken: logged and marked seen first, so a redelivered step is
        # never read as the next property's value.
        decision = await self.store.receive(
            thread_id, message.event_id, hint, entry, now_ms, Kept(prompt.prompt_id)
        )
        if decision.status != "kept":
            return await self._received(thread_id, message, decision, None, None, now_ms)
        if reading.action is ReplyAction.STEP:
            saved = await self.save_draft(
                prompt.prompt_id, message.sender, draft_name(prompt.prompt_id), reading.draft
            )
            if saved.status is not DraftStatus.SAVED:
                return Received(Outcome.STALE, prompt)
        assert reading.notice is not None
        if message.notify:
            await self._tell(thread_id, message.sender, reading.notice)
        return Received(Outcome.KEPT, prompt, reading.notice, reading.errors)

    async def _received(
        self,
        thread_id: str,
        message: InboundMessage,
        decision: Decision,
        prompt: Prompt | None,
        ready: ReadyAnswer | None,
        now_ms: int,
    ) -> Received:
        """What a receive script's decision means to the channel, with the notice it owes the sender."""
        if decision.status is DecisionStatus.ANSWERED and prompt is not None and ready is not None:
            self.outbox.kick(thread_id, decision.held)
            answered = await self._answered_now(
                prompt,
                ready.answers,
                ready.answered_by,
                decision.resolution,
                ready.turn_id,
                now_ms,
                ready.content,
                ready.verdict,
            )
            self.waiters.notify(prompt.prompt_id, prompt=answered)
            # A form typed in chat (not sent from its controls) says which optional fields were left empty.
            notice = notices.form_answered(answered) if message.answers is None else None
            if notice is not None and message.notify:
                await self._tell(thread_id, message.sender, notice)
            granted: dict[str, Any] | None = None
            call = answered.approved_call or answered.tool_call
            if ready.grant and call is not None:
                grant, notice = await self._grant_typed(answered, call, message)
                if grant is not None:  # as its record says: the channel's own card shows it too
                    granted = grant.match.model_dump(mode="json")
                    answered = answered.model_copy(update={"granted": ToolCall.model_validate(granted)})
            elif ready.no_grant:
                notice = await self._say(answered, message, notices.approved_without_grant(ready.no_grant))
            return Received(Outcome.ANSWERED, answered, notice, granted=granted)
        if decision.status in (DecisionStatus.VOTED, DecisionStatus.ALREADY_VOTED) and prompt is not None:
            self.outbox.kick(thread_id)
            current = await self.get_prompt(prompt.prompt_id)
            voted = decision.status is DecisionStatus.VOTED
            received = Received(Outcome.VOTED if voted else Outcome.ALREADY_VOTED, current)
            if message.notify:
                await self._tell_privately(thread_id, message.sender, notices.outcome(received, current, ""))
            return received
        if decision.status is DecisionStatus.CANCELLED and prompt is not None and ready is not None:
            self.outbox.kick(thread_id)
            code = ready.cancel_code or ReasonCode.CANCELLED
            event(
                "prompt.cancelled",
                prompt_id=prompt.prompt_id,
                thread_id=thread_id,
                run_id=prompt.run_id,
                reason_code=code.value,
            )
            if code is ReasonCode.NEW_MESSAGE:
                return Received(Outcome.SUPERSEDED)
            return Received(Outcome.DECLINED, await self.get_prompt(prompt.prompt_id))
        if decision.status is DecisionStatus.DUPLICATE:
            return Received(Outcome.DUPLICATE)
        if decision.status is DecisionStatus.STALE:
            if message.notify:
                await self._tell_privately(thread_id, message.sender, notices.STALE)
            # The control's own prompt, so the channel can say how it settled (answered, cancelled).
            hinted = await self.store.get_prompt(message.prompt_id) if message.prompt_id else None
            return Received(Outcome.STALE, hinted)
        if decision.status is DecisionStatus.QUEUED:
            self.outbox.kick(thread_id)
            return Received(Outcome.QUEUED)
        # The prompt this message answered settled otherwise between the two calls (or is gone).
        return Received(Outcome.STALE, decision.prompt)

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
        return answered.model_copy(update={"note": decided.note, "approved_call": decided.approved_call})

    async def _grant_typed(
        self, answered: Prompt, call: ToolCall, message: InboundMessage
    ) -> tuple[Grant | None, str]:
        """A typed "always" (or a session control): the approve settled the prompt, so the call approved is
        let through, exactly, for the rest of the run. The person is told what was granted, or why nothing
        was; the grant made (None when none was) and that notice are returned."""
        request = GrantRequest(scope="run", match=exact_match(call))
        grant = await record_grant(self.store, answered, message.sender, request, self.now_ms())
        if isinstance(grant, Grant):
            return grant, await self._say(answered, message, notices.granted(grant))
        return None, await self._say(answered, message, notices.approved_without_grant(not_recorded(grant)))

    async def _say(self, answered: Prompt, message: InboundMessage, notice: str) -> str:
        """Tell the sender ``notice`` about their answer (where the channel wants it told); the notice."""
        if message.notify:
            await self._tell(answered.thread_id, message.sender, notice)
        return notice

    async def _refused(self, thread_id: str, prompt: Prompt, message: InboundMessage) -> Received:
        if message.notify:
            await self._tell_privately(thread_id, message.sender, notices.NOT_ALLOWED)
        event("inbound.not_allowed", thread_id=thread_id, prompt_id=prompt.prompt_id, run_id=prompt.run_id)
        return Received(Outcome.NOT_ALLOWED, prompt)

    async def _tell(self, thread_id: str, identity: str, text: str) -> None:
        """Tell a person something about their reply: privately where the platform can, else in the thread."""
        channel = self.channels.for_thread(parse_thread_id(thread_id))
        if isinstance(channel, PrivateNotices):
            await self._tell_privately(thread_id, identity, text)
        else:
            await self.post_message(thread_id, text)

    async def _tell_privately(self, thread_id: str, identity: str, text: str) -> None:
        thread = parse_thread_id(thread_id)
        channel = self.channels.for_thread(thread)
        if isinstance(channel, PrivateNotices):
            try:
                await channel.notify_private(thread, identity, text)
            except ChannelError as exc:
                event("notice.failed", logging.WARNING, thread_id=thread_id, error=str(exc))
                metrics.platform_error(thread_id, exc)

    async def post_message(self, thread_id: str, text: str) -> dict[str, Any]:
        """Queue an agent message for the chat (posted in order with audit items, retried on failure)."""
        thread = parse_thread_id(thread_id)
        self.channels.for_thread(thread)
        item = message_item(text)
        effect = {"t": "message", "id": new_id("itm"), "item": item.model_dump(mode="json")}
        await self.store.push_chat(thread.thread_id, effect, self.now_ms())
        self.outbox.kick(thread.thread_id)
        return {"item_id": effect["id"], "thread_id": thread.thread_id, **item.model_dump(mode="json")}

    async def read_thread(
        self, thread_id: str, after: str | None = None, limit: int = 100, wait: float = 0
    ) -> list[tuple[str, dict[str, Any]]]:
        """The thread's item log after the cursor ``after``, oldest first, as (cursor, entry) pairs.

        While nothing is there yet, waits up to ``wait`` seconds for the next item: the process follows the
        log once for all its readers (see ``gateway.feeds``), so a waiting reader holds no Redis connection.
        """
        thread = parse_thread_id(thread_id)
        async with self.feeds.thread_log(thread.thread_id) as log:
            rows = await self.feeds.read(log, log.vector(after), limit, wait)
        return [(entry.id, entry.data) for entry in rows]


def _ready(
    prompt: Prompt, reading: Reading, sender: str, now_ms: int, *, decided: bool, most_grants: int
) -> ReadyAnswer | None:
    """What the receive script applies for a reading: an answer or a cancel (None: the prompt stays). An
    approve that asks for a grant carries it (the exact call), kept with the answer while the run keeps fewer
    than ``most_grants``."""
    turn_id = new_id("turn")
    if reading.action is ReplyAction.ANSWER:
        call = reading.edited or prompt.tool_call
        decided_verdict = verdict(
            prompt,
            reading.answers,
            sender,
            now_ms,
            note=reading.note,
            edited=reading.edited,
            grant=exact_match(call) if reading.grant and call is not None else None,
            most_grants=most_grants,
        )
        return ReadyAnswer(
            prompt.prompt_id,
            reading.answers,
            sender,
            turn_id,
            decided,
            reading.content,
            verdict=decided_verdict,
            grant=reading.grant,
            no_grant=reading.no_grant,
        )
    if reading.action is ReplyAction.SUPERSEDE:
        return ReadyAnswer(
            prompt.prompt_id, [], sender, turn_id, decided, None, ReasonCode.NEW_MESSAGE, NEW_MESSAGE_REASON
        )
    if reading.action is ReplyAction.DECLINE:
        return ReadyAnswer(
            prompt.prompt_id, [], sender, turn_id, decided, None, ReasonCode.DECLINED, DECLINED_REASON
        )
    return None


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


__all__ = [
    "AnswerResult",
    "AnswerStatus",
    "Draft",
    "DraftStatus",
    "Gateway",
    "Outcome",
    "Received",
    "Resolution",
]
