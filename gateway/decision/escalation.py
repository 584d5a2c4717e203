"""Reminders and escalation: a pending prompt's due steps, taken once across processes, and what they post.

The schedule lives in Redis (``gateway.store.escalations``): any process claims a due step for a lease, and
the prompt's thread script takes it at most once, queueing its reminder, its copies and their events in
the thread's outbox, which delivers them as it delivers audit items. A settled prompt takes no step;
nothing here ever settles a prompt (only its expiry does, as a cancellation).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from gateway.base import metrics
from gateway.base.errors import GatewayError
from gateway.base.ids import ThreadRef, parse_thread_id
from gateway.base.logs import event
from gateway.base.models import (
    EscalationStep,
    Person,
    Prompt,
    ThreadItem,
    names_people,
    to_ms,
)
from gateway.decision.session_threads import parse_channel_ref, thread_starter
from gateway.delivery.channel import (
    ChannelError,
    Channels,
    DirectMessages,
    EditsMessages,
    Mentions,
    MessageRef,
    StartsThreads,
)
from gateway.rules import notices
from gateway.rules.render import message_item, pending_prompt_item, resolved_item, settled_prompt_item
from gateway.store import Store
from gateway.store.escalations import Copy, DueStep, StepStatus, copies
from gateway.store.lru import drop_oldest

LEASE_MS = 60_000  # a claimed step not taken by then (its process died) is claimed again
BATCH = 100  # steps claimed per sweep
MAX_MENTIONS = 20  # people a reminder names
COPY_TRIES = 5  # tries for a copy the platform refuses for a while, before the step gives up on it
COPY_FAILURES_KEPT = 10_000  # copies being retried; a prompt that settles meanwhile leaves its count behind
MIRROR_GRACE_MS = 60_000  # replies to a copy are handed over this long past the prompt's expiry
MAX_DIRECT = 50  # direct messages one step sends (a person per linked platform)
DIRECT_PREFIX = "dm:"  # a copy's target when it went to a person's direct messages: dm:<identity>
EVENT_TYPES = {"reminded": "input.reminded", "escalated": "input.escalated"}


def resolve_target(channels: Channels, target: str) -> tuple[ThreadRef, bool]:
    """Where a step's target posts: (a thread, True), or (a channel to start a thread in, False).

    Raises the GatewayError (400) that says why it cannot: its platform is not configured here, it is not
    a thread or channel of its platform, or its platform cannot start a thread in a channel.
    """
    try:
        thread = parse_thread_id(target)
    except GatewayError:
        ref = parse_channel_ref(target)
    else:
        channels.for_thread(thread)
        return thread, True
    thread_starter(channels, ref, "name a thread to escalate to instead", {"target": target})
    return ref, False


def places(targets: list[str]) -> list[str]:
    """A step's targets that are threads or channels (a copy is posted there), not people."""
    return [target for target in targets if not names_people(target)]


def check_targets(channels: Channels, steps: list[EscalationStep] | None) -> None:
    """Refuse (400) an escalation with a target this gateway cannot post to."""
    for step in steps or []:
        for target in places(step.to):
            resolve_target(channels, target)


async def target_open(store: Store, channels: Channels, agent: str, target: str) -> bool:
    """Whether a copy of ``agent``'s prompt may go to ``target``: exactly where a token acting for that
    agent may post (contract §6), never a thread only other agents own or a channel they claim."""
    ref, _ = resolve_target(channels, target)
    return await store.owners.open_to(frozenset({agent}), ref.thread_id)


async def check_owners(
    store: Store, channels: Channels, agent: str, steps: list[EscalationStep] | None
) -> None:
    """Refuse (403 FORBIDDEN, naming the target) an escalation of ``agent``'s to where it may not post."""
    for step in steps or []:
        for target in places(step.to):
            if not await target_open(store, channels, agent, target):
                raise GatewayError(
                    "FORBIDDEN",
                    f"Escalation target {target} belongs to other agents (their runs, or a channel they "
                    f"claim); agent {agent!r} cannot post there.",
                    403,
                    {"target": target, "agent": agent},
                )


class Escalator:
    """Takes due steps (the sweeper's job in every process) and delivers what they queued (the outbox's)."""

    def __init__(
        self, store: Store, channels: Channels, clock: Callable[[], float], kick: Callable[[str], None]
    ) -> None:
        self.store = store
        self.channels = channels
        self.clock = clock
        self.kick = kick
        self._copy_failures: dict[tuple[str, int, str], int] = {}

    def now_ms(self) -> int:
        return int(self.clock() * 1000)

    # The schedule ------------------------------------------------------------------------------------

    async def run_due(self) -> int:
        """Take every due step of a pending prompt once; drop the steps of settled or unknown prompts.
        Returns how many steps this call took."""
        now_ms = self.now_ms()
        due = await self.store.escalations.claim_due(now_ms, LEASE_MS, BATCH)
        finished: list[DueStep] = []
        took = 0
        for step in due:
            if await self._take(step, now_ms):
                took += 1
            finished.append(step)
        await self.store.escalations.done(finished)
        return took

    async def _take(self, due: DueStep, now_ms: int) -> bool:
        thread = await self.store.prompt_thread(due.prompt_id)
        prompt = await self.store.get_prompt(due.prompt_id, thread) if thread else None
        if thread is None or prompt is None or due.step >= len(prompt.escalation or []):
            return False
        assert prompt.escalation is not None
        plan = prompt.escalation[due.step]
        status = await self.store.escalations.take(
            thread, due, now_ms, remind=plan.remind, escalate=bool(plan.to)
        )
        if status is not StepStatus.OK:
            return False
        self.kick(thread)
        event(
            "prompt.escalation_step",
            prompt_id=due.prompt_id,
            thread_id=thread,
            run_id=prompt.run_id,
            step=due.step,
            remind=plan.remind,
            to=len(plan.to),
        )
        return True

    # What the outbox delivers -------------------------------------------------------------------------

    async def remind(self, prompt: Prompt) -> ThreadItem | None:
        """Post the reminder into the prompt's thread (nothing once it settled); the item posted."""
        if not prompt.pending:
            return None
        thread = parse_thread_id(prompt.thread_id)
        channel = self.channels.for_thread(thread)
        people = await self._answerers(prompt, thread.platform)
        if isinstance(channel, Mentions):
            named = [person for person in people if channel.mention(person) is not None]
            item = message_item(notices.reminder([]), {"type": "reminder", "mentions": named})
        else:
            names = [person.partition(":")[2] for person in people]
            item = message_item(notices.reminder(names), {"type": "reminder"})
        item.metadata["prompt_id"] = prompt.prompt_id
        await channel.post(thread, item)
        return item

    async def _answerers(self, prompt: Prompt, platform: str) -> list[str]:
        """Who may answer the prompt, of the thread's platform: its run's starter, then the approvers (a
        listed person or group by their identities there)."""
        definition = await self.store.get_agent(prompt.agent)
        named = [prompt.started_by] if prompt.started_by else []
        named += definition.human_input.approvers if definition else []
        return (await self._identities_on(named, platform))[:MAX_MENTIONS]

    async def _identities_on(self, named: list[str], platform: str) -> list[str]:
        """``named`` (identities, ``person:<id>``, ``group:<name>``) as the identities on ``platform`` they
        stand for, each once: a person's linked ones, a directory group's members' ones."""
        found = [identity for person in await self._people(named) for identity in person.identities]
        found += [name for name in named if not names_people(name)]
        return [identity for identity in dict.fromkeys(found) if identity.partition(":")[0] == platform]

    async def _people(self, named: list[str]) -> list[Person]:
        """The people ``named`` stands for now (``PeopleStore.named``, by this escalator's clock)."""
        return await self.store.people.named(named, datetime.fromtimestamp(self.clock(), UTC))

    async def escalate(self, prompt: Prompt, step: int, fields: dict[str, str]) -> None:
        """Post the prompt's copies for one step (nothing once it settled): one in each place it names,
        one in each direct message of each person it names (an identity on a platform that has them),
        each target once: a copy already noted is not posted again when a retried delivery comes back."""
        plan = prompt.escalation or []
        if not prompt.pending or step >= len(plan):
            return
        posted = {(copy.step, copy.target) for copy in copies(fields.get("esc"))}
        for target in places(plan[step].to):
            if (step, target) not in posted:
                await self._copy(prompt, step, target, plan[step].after_seconds)
        people = await self._people([target for target in plan[step].to if names_people(target)])
        for identity in self._direct_identities(people):
            if (step, DIRECT_PREFIX + identity) not in posted:
                await self._copy(prompt, step, DIRECT_PREFIX + identity, plan[step].after_seconds)
        # People's notice last: it is one post, so a copy retried above never posts it twice.
        if people:
            await self._reach(prompt, people, plan[step].after_seconds)

    def _direct_identities(self, people: list[Person]) -> list[str]:
        """The identities of ``people`` on platforms whose channel here has direct messages."""
        found = [
            identity
            for person in people
            for identity in person.identities
            if isinstance(self.channels.get(identity.partition(":")[0]), DirectMessages)
        ]
        found = list(dict.fromkeys(found))
        if len(found) > MAX_DIRECT:
            event("escalation.direct_capped", logging.WARNING, identities=len(found), sent=MAX_DIRECT)
        return found[:MAX_DIRECT]

    async def _reach(self, prompt: Prompt, people: list[Person], waited_s: int) -> None:
        """Reach the people a step names in the prompt's own thread: mentioned where the platform can
        (their identities there), else by name. Who may answer is still the approver list's to say."""
        thread = parse_thread_id(prompt.thread_id)
        channel = self.channels.for_thread(thread)
        mentions: list[str] = []
        if isinstance(channel, Mentions):
            there = (
                i for person in people for i in person.identities if i.partition(":")[0] == thread.platform
            )
            mentions = [i for i in dict.fromkeys(there) if channel.mention(i) is not None][:MAX_MENTIONS]
        reached = set(mentions)
        names = [person.name or person.person for person in people if reached.isdisjoint(person.identities)]
        item = message_item(
            notices.escalated_to(names, waited_s), {"type": "escalation", "mentions": mentions}
        )
        item.metadata["prompt_id"] = prompt.prompt_id
        await channel.post(thread, item)
        await self.store.log_item(thread.thread_id, _entry(item))
        event(
            "prompt.escalated",
            prompt_id=prompt.prompt_id,
            thread_id=prompt.thread_id,
            run_id=prompt.run_id,
            people=len(people),
            mentioned=len(mentions),
        )

    async def _copy(self, prompt: Prompt, step: int, target: str, waited_s: int) -> None:
        """One copy; a target that cannot take it is logged and left out (a refusal that may pass is
        retried with the step, a few times), so one bad target never holds the prompt's thread."""
        key = (prompt.prompt_id, step, target)
        copying = {
            "prompt_id": prompt.prompt_id,
            "thread_id": prompt.thread_id,
            "run_id": prompt.run_id,
            "target": target,
        }
        try:
            place = await self._place(prompt, target, copying)
            if place is None:
                return
            copy = await self._post_copy(prompt, step, target, place, waited_s)
        except GatewayError as exc:
            event("escalation.copy_failed", logging.WARNING, **copying, error=exc.message)
            return
        except ChannelError as exc:
            metrics.platform_error(target.removeprefix(DIRECT_PREFIX), exc)
            failures = self._copy_failures.get(key, 0) + 1
            self._copy_failures[key] = failures
            drop_oldest(self._copy_failures, COPY_FAILURES_KEPT)
            event("escalation.copy_failed", logging.WARNING, **copying, error=str(exc), tries=failures)
            if exc.permanent or failures >= COPY_TRIES:
                self._copy_failures.pop(key, None)
                return
            raise
        self._copy_failures.pop(key, None)
        await self.store.escalations.record_copy(prompt.thread_id, prompt.prompt_id, copy, self.now_ms())
        event(
            "prompt.escalated",
            prompt_id=prompt.prompt_id,
            thread_id=prompt.thread_id,
            run_id=prompt.run_id,
            step=step,
            copy_thread=copy.thread_id,
        )

    async def _place(
        self, prompt: Prompt, target: str, copying: dict[str, Any]
    ) -> tuple[ThreadRef, bool] | None:
        """Where a copy for ``target`` goes (as ``resolve_target`` says), or None when it goes nowhere."""
        if not target.startswith(DIRECT_PREFIX):
            if await target_open(self.store, self.channels, prompt.agent, target):
                return resolve_target(self.channels, target)
            # Owners change after a raise (a run started, a channel claimed): checked again now.
            event(
                "escalation.target_refused",
                logging.WARNING,
                **copying,
                agent=prompt.agent,
                reason="other agents own the target (their runs, or a channel they claim)",
            )
            return None
        # A person's direct messages are the gateway's to use (the step named the person, and the copy
        # answers only as the approver list allows), whatever agents own elsewhere on the platform.
        identity = target.removeprefix(DIRECT_PREFIX)
        channel = self.channels.get(identity.partition(":")[0])
        where = await channel.direct_thread(identity) if isinstance(channel, DirectMessages) else None
        if where is None:
            event(
                "escalation.direct_unavailable",
                **copying,
                reason="the platform cannot open a direct message with this identity (see its channel's log)",
            )
            return None
        place = resolve_target(self.channels, where)
        if place[0].thread_id == prompt.thread_id:  # the prompt is in their direct message already
            event("escalation.direct_is_origin", **copying)
            return None
        return place

    async def _post_copy(
        self, prompt: Prompt, step: int, target: str, place: tuple[ThreadRef, bool], waited_s: int
    ) -> Copy:
        ref, is_thread = place
        if ref.thread_id == prompt.thread_id:
            raise GatewayError("SAME_THREAD", "the target is the prompt's own thread", 400)
        channel = self.channels.for_thread(ref)
        origin = self.channels.permalink(prompt.thread_id) or prompt.thread_id
        note = notices.escalated_to_you if target.startswith(DIRECT_PREFIX) else notices.escalated
        header = message_item(note(origin, waited_s), {"type": "escalation"})
        if is_thread:
            await channel.post(ref, header)
            thread = ref
        else:
            assert isinstance(channel, StartsThreads)  # resolve_target checked it
            thread = parse_thread_id(await channel.start_thread(ref, header.text))
        await self.store.log_item(thread.thread_id, _entry(header))
        keep_ms = max(to_ms(prompt.expires_at) - self.now_ms(), 0) + MIRROR_GRACE_MS
        await self.store.escalations.mirror(
            thread.thread_id, prompt.prompt_id, prompt.thread_id, keep_ms, prompt.agent
        )
        item = pending_prompt_item(prompt)
        posted = await channel.post(thread, item)
        await self.store.log_item(thread.thread_id, _entry(item))
        return Copy(step, target, thread.thread_id, posted.message_id)

    async def settled(self, prompt: Prompt, fields: dict[str, str]) -> None:
        """Queue the outcome for every copy of a settled prompt, in the copy's own thread's outbox."""
        for copy in copies(fields.get("esc")):
            effect = {
                "t": "copy_settled",
                "prompt_id": prompt.prompt_id,
                "msg": copy.message_id,
                "item": resolved_item(prompt).model_dump(mode="json"),
                "settled": settled_prompt_item(prompt).model_dump(mode="json"),
            }
            await self.store.push_chat(copy.thread_id, effect, self.now_ms())
            self.kick(copy.thread_id)

    async def copy_settled(self, thread_id: str, effect: dict[str, Any]) -> str:
        """Post a settled prompt's audit item beside its copy in ``thread_id`` and retire the copy's
        controls; replies there no longer go to it. The log entry of the posted item."""
        thread = parse_thread_id(thread_id)
        channel = self.channels.for_thread(thread)
        item = ThreadItem.model_validate(effect["item"])
        if effect.get("msg"):
            item.metadata["prompt_message_id"] = effect["msg"]
        await channel.post(thread, item)
        await self.store.escalations.forget_copy(thread_id, str(effect["prompt_id"]))
        if effect.get("msg") and isinstance(channel, EditsMessages):
            try:
                await channel.edit(
                    MessageRef(thread_id, effect["msg"]), ThreadItem.model_validate(effect["settled"])
                )
            except ChannelError as exc:  # the audit item already says how it settled
                event("outbox.edit_failed", logging.WARNING, thread_id=thread_id, error=str(exc))
                metrics.platform_error(thread_id, exc)
        return json.dumps(_entry(item), ensure_ascii=False)


def event_data(prompt: Prompt, step: int) -> str:
    """An ``input.reminded`` / ``input.escalated`` event's data: the prompt, and the step's index."""
    return json.dumps({**prompt.public(), "step": step}, ensure_ascii=False)


def _entry(item: ThreadItem) -> dict[str, Any]:
    return {"role": "gateway", **item.model_dump(mode="json")}
