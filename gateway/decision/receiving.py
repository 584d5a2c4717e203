"""People's input: a typed message received (dedupe, who may answer, read and settled in one script),
and a press, form or reply run through the answer step once; what the sender is told."""

from __future__ import annotations

import logging
from collections.abc import Collection
from typing import Any

from gateway.base import metrics, storable
from gateway.base.ids import new_id, parse_thread_id
from gateway.base.logs import event
from gateway.base.models import InboundMessage, Prompt, PromptKind, ReasonCode, ToolCall, from_ms
from gateway.decision import answer_step
from gateway.decision.claiming import claim_typed
from gateway.decision.granting import not_recorded, record_grant
from gateway.decision.raising import Raising
from gateway.decision.settling import Settling
from gateway.delivery.channel import ChannelError, PrivateNotices
from gateway.delivery.plugins import has_direct_messages
from gateway.people.linking import link_code_in, link_from_chat
from gateway.rules import notices
from gateway.rules.authz import ApproverLookup, may_answer, person_of
from gateway.rules.grants import Grant, GrantRequest, exact_match
from gateway.rules.outcomes import Draft, DraftStatus, Outcome, Received
from gateway.rules.replies import NEW_MESSAGE_REASON, Reading, ReplyAction, draft_name, read_reply
from gateway.rules.steps import StepRequest, StepResult
from gateway.rules.verdicts import Verdict, verdict
from gateway.store import Decision, Kept, ReadyAnswer, Refusal
from gateway.store.results import DecisionStatus, SettlementStatus

DECLINED_REASON = "the person declined to answer"
# What a receive script answers when it applied nothing the caller read: the message goes to a copy of
# another thread's prompt, or the active prompt is handed back to be decided on.
UNREAD = frozenset({DecisionStatus.ACTIVE, DecisionStatus.MIRROR})


class Receiving(Settling, Raising):
    """The core's inbound side: ``receive`` for a typed message, ``step`` for a decoded press or form."""

    # Presses, forms, replies to text requests ------------------------------------------------------

    async def step(self, request: StepRequest) -> StepResult:
        """Run the answer step on a decoded press, form or reply, once: what came of it (see
        ``gateway.decision.answer_step``). What it hands to ``receive`` is counted as a message is."""
        return await answer_step.step(_Counted(self), request)

    # People's messages -----------------------------------------------------------------------------

    async def receive(self, message: InboundMessage, groups: Collection[str] = ()) -> Received:
        """A person's message or control press: dedupe, then answer the active prompt or queue it.

        ``groups`` are a signed-in person's (see ``may_answer``): only the core's sign-in service passes
        any, for a ``person:<id>`` sender; a channel's own messages have none."""
        thread = parse_thread_id(message.thread_id)
        parts = (message.sender, message.text, message.note, message.answers, message.arguments)
        if (unkept := storable.first_problem(*parts)) is not None:  # a platform's payload: never stored
            event("message.not_storable", logging.INFO, thread_id=thread.thread_id, problem=unkept.problem)
            return Received(Outcome.KEPT, notice=notices.not_kept(unkept.problem))
        code = link_code_in(message.text) if message.answers is None else None
        if code is not None:  # ``link <code>``: never an answer, never queued for an agent
            # Where the platform has direct messages, a code typed anywhere else was read by others.
            shared = not message.direct and has_direct_messages(thread.platform)
            notice = await link_from_chat(self.store.people, code, message.sender, shared=shared)
            event("person.link_typed", thread_id=thread.thread_id, shared=shared)
            if message.notify:
                await self._tell(thread.thread_id, message.sender, notice)
            return Received(Outcome.KEPT, notice=notice)
        if message.answers is None and claim_typed(message.text):  # ``claim``: never an answer
            claimed = await self._claim_typed(thread.thread_id, message)
            if claimed is not None:
                return claimed
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
        # The hot path: the reply is read against the prompt this process last saw active in the thread (the
        # store keeps it, a bounded cache), and what it makes of it (an answer, a cancel under seed 002, a
        # reply left pending, or a refusal when the sender may not answer) goes with the one receive script,
        # which applies it only if that prompt is still the active one and pending. Otherwise (a cold cache,
        # or the prompt settled or was superseded meanwhile) the script hands the active prompt back.
        latest = self.store.latest_prompt(thread.thread_id)
        if latest is not None and message.prompt_id in (None, latest.prompt_id):
            return await self._decide(latest, message, entry, decided=False, groups=groups)
        decision = await self.store.receive(
            thread.thread_id, message.event_id, message.prompt_id, entry, self.now_ms()
        )
        return await self._unread(thread.thread_id, message, entry, decision, groups)

    async def _unread(
        self,
        thread_id: str,
        message: InboundMessage,
        entry: dict[str, Any],
        decision: Decision,
        groups: Collection[str] = (),
    ) -> Received:
        """What a receive script made of a message nobody read yet (none was read, or it was read against a
        prompt no longer active): a message for a copy of another thread's prompt goes there; the active
        prompt handed back is decided on here, once, and a second script applies that."""
        if decision.status is DecisionStatus.MIRROR and decision.mirror is not None:
            return await self._answer_copy(thread_id, message, entry, *decision.mirror, groups=groups)
        if decision.status is DecisionStatus.ACTIVE and decision.prompt is not None:
            # Nothing is recorded yet, the event not even marked seen: a crash before the second script
            # leaves the platform's redelivery to be answered in full.
            return await self._decide(decision.prompt, message, entry, decided=True, groups=groups)
        return await self._received(thread_id, message, decision, None, None, self.now_ms())

    async def _answer_copy(
        self,
        thread_id: str,
        message: InboundMessage,
        entry: dict[str, Any],
        origin: str,
        prompt_id: str,
        *,
        groups: Collection[str] = (),
    ) -> Received:
        """A reply or press on a copy of another thread's prompt (posted by its escalation): the prompt's
        own thread takes it, by the same rules (who may answer, the mapper, first answer wins); what the
        sender is told, and the message itself, stay in the thread they wrote in."""
        if origin == thread_id:
            return Received(Outcome.STALE)
        routed = message.model_copy(update={"thread_id": origin, "prompt_id": prompt_id, "notify": False})
        received = await self.receive(routed, groups)
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

    async def _decide(
        self,
        prompt: Prompt,
        message: InboundMessage,
        entry: dict[str, Any],
        *,
        decided: bool,
        groups: Collection[str] = (),
    ) -> Received:
        """Decide on a reply to ``prompt`` (who may answer it, what the reply makes of it) and have one
        receive script apply that. ``decided``: the prompt is the one a first script handed back; else it
        is this process's guess at the active prompt, and a script that finds another one active hands
        that back (``_unread``: decided on once more, a rare race)."""
        thread_id, hint = prompt.thread_id, message.prompt_id
        if not await may_answer(self.store, prompt, message.sender, groups):
            now_ms = self.now_ms()
            refusal = Refusal(prompt.prompt_id, decided)
            decision = await self.store.receive(thread_id, message.event_id, hint, entry, now_ms, refusal)
            if not decided and decision.status in UNREAD:
                return await self._unread(thread_id, message, entry, decision, groups)
            if decision.status is DecisionStatus.REFUSED:
                return await self._refused(thread_id, prompt, message)
            return await self._received(thread_id, message, decision, None, None, now_ms)
        draft = None
        if prompt.kind is PromptKind.FORM and len(prompt.questions) > 1:
            draft = await self.store.get_draft(thread_id, draft_name(prompt.prompt_id))
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
        people = await _people(self.store, prompt, message.sender)
        ready = _ready(
            prompt, reading, message.sender, now_ms, decided=decided, most_grants=most, people=people
        )
        if ready is not None:
            claim = self.outbox.claim()
            decision = await self.store.receive(
                thread_id, message.event_id, hint, entry, now_ms, ready, claim
            )
            if not decided and decision.status in UNREAD:
                return await self._unread(thread_id, message, entry, decision, groups)
            return await self._received(thread_id, message, decision, prompt, ready, now_ms)
        # A form's step or a value not taken: logged and marked seen first, so a redelivered step is
        # never read as the next property's value.
        kept = Kept(prompt.prompt_id, decided)
        decision = await self.store.receive(thread_id, message.event_id, hint, entry, now_ms, kept)
        if not decided and decision.status in UNREAD:
            return await self._unread(thread_id, message, entry, decision, groups)
        if decision.status is not DecisionStatus.KEPT:
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
            # Refused as their person's second vote: which identity voted first, for every channel (one
            # that answers the person itself, a chat page's response, says it too).
            voted_as = None if voted else await self._voted_as(current, message.sender)
            received = Received(Outcome.VOTED if voted else Outcome.ALREADY_VOTED, current, voted_as)
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
        if decision.status is DecisionStatus.CLAIMED:  # someone else holds it: logged, not answered
            hint = prompt.prompt_id if prompt is not None else message.prompt_id
            held = await self.store.get_prompt(hint, thread_id) if hint else None
            notice = await self.claimed_notice(held)
            if message.notify:
                await self._tell_privately(thread_id, message.sender, notice)
            event("inbound.claimed", thread_id=thread_id, prompt_id=hint)
            return Received(Outcome.CLAIMED, held, notice)
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

    async def _claim_typed(self, thread_id: str, message: InboundMessage) -> Received | None:
        """``claim`` typed: the thread's open prompt is claimed for the sender (None: it has none, and the
        message goes on as any other)."""
        active = await self.store.active_prompt_id(thread_id)
        prompt = await self.store.get_prompt(active, thread_id) if active else None
        if prompt is None or not prompt.pending:
            return None
        return await self.take_claim(prompt, message.sender, notify=message.notify, typed=True)

    async def take_claim(
        self, prompt: Prompt, sender: str, *, notify: bool = False, typed: bool = False
    ) -> Received:
        """Claim ``prompt`` for a person in a chat (typed, or its Claim control), who must be someone who
        may answer it. The thread is told once who took it; the sender what came of it (``notify``: here;
        else the channel shows the returned notice)."""
        if not await may_answer(self.store, prompt, sender):
            if notify:
                await self._tell_privately(prompt.thread_id, sender, notices.NOT_ALLOWED)
            return Received(Outcome.NOT_ALLOWED, prompt, notices.NOT_ALLOWED)
        claimed = await self.claim(prompt, sender)
        if claimed.status is SettlementStatus.CLAIMED:
            current = await self.store.get_prompt(prompt.prompt_id, prompt.thread_id)
            notice = await self.claimed_notice(current)
            if notify:
                await self._tell_privately(prompt.thread_id, sender, notice)
            return Received(Outcome.CLAIMED, current or prompt, notice)
        if claimed.status is not SettlementStatus.OK:
            if notify:
                await self._tell_privately(prompt.thread_id, sender, notices.STALE)
            return Received(Outcome.STALE, claimed.prompt or prompt, notices.STALE)
        assert claimed.until_ms is not None
        notice = notices.you_are_on_it(from_ms(claimed.until_ms))
        if notify and not (typed and claimed.changed):  # a new claim typed: the thread is told already
            await self._tell(prompt.thread_id, sender, notice)
        current = prompt.model_copy(
            update={"claimed_by": claimed.holder, "claimed_until": from_ms(claimed.until_ms)}
        )
        return Received(Outcome.KEPT, current, notice)

    async def _voted_as(self, prompt: Prompt, sender: str) -> str | None:
        """What to tell a sender whose person already voted from another of their identities (None: they
        did not)."""
        person = await person_of(self.store, sender)
        earlier = next((vote.by for vote in prompt.votes if person and vote.person == person), None)
        if earlier is None or earlier == sender:
            return None
        return notices.ALREADY_VOTED_AS.format(identity=earlier)

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


async def _people(store: ApproverLookup, prompt: Prompt, sender: str) -> tuple[str | None, str | None]:
    """The directory persons of the sender and of the run's starter (None where nobody's)."""
    return await person_of(store, sender), await person_of(store, prompt.started_by)


def _ready(
    prompt: Prompt,
    reading: Reading,
    sender: str,
    now_ms: int,
    *,
    decided: bool,
    most_grants: int,
    people: tuple[str | None, str | None] = (None, None),
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
            person=people[0],
            starter_person=people[1],
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
    if reading.action is ReplyAction.DECLINE:  # the decliner's person: a claim held by another refuses it
        return ReadyAnswer(
            prompt.prompt_id,
            [],
            sender,
            turn_id,
            decided,
            None,
            ReasonCode.DECLINED,
            DECLINED_REASON,
            verdict=Verdict(person=people[0]),
        )
    return None


class _Counted:
    """The core as its answer step sees it: each message handed to ``receive`` counted by its outcome."""

    def __init__(self, core: Receiving) -> None:
        self.core = core

    async def receive(self, message: InboundMessage) -> Received:
        received = await self.core.receive(message)
        metrics.inbound(message.thread_id, received.outcome)
        return received

    async def get_prompt(self, prompt_id: str) -> Prompt:
        return await self.core.get_prompt(prompt_id)

    async def take_claim(self, prompt: Prompt, sender: str) -> Received:
        return await self.core.take_claim(prompt, sender)

    async def save_draft(self, prompt_id: str, sender: str, name: str, values: dict[str, str]) -> Draft:
        return await self.core.save_draft(prompt_id, sender, name, values)

    async def get_draft(self, thread_id: str, name: str) -> dict[str, str]:
        return await self.core.get_draft(thread_id, name)
