"""Escalation in Redis: the schedule of due steps (one sorted set), each step taken once by its prompt's
thread, and the copies a step posted, noted on the prompt's thread and on the thread of each copy."""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Protocol

from gateway.base.models import EscalationTaken, Prompt, from_ms, to_ms
from gateway.store import calls, keys
from gateway.store.scripts import ScriptCall, Scripts

STEP_FIELD = "s:"  # s:<step> -> when it was taken (ms)
COPY_FIELD = "c:"  # c:<step>:<target> -> "<thread id> <message id>"


class StepStatus(StrEnum):
    """What taking a due step did."""

    OK = "ok"  # this call took it: its posts and events are queued in the thread's outbox
    TAKEN = "taken"  # an earlier call did
    SETTLED = "settled"  # the prompt is no longer pending: the step never runs
    MISSING = "missing"  # no such prompt


@dataclass(frozen=True, slots=True)
class DueStep:
    """Step ``step`` (its index in the prompt's escalation) of prompt ``prompt_id``."""

    prompt_id: str
    step: int

    @property
    def member(self) -> str:
        return f"{self.prompt_id}:{self.step}"

    @classmethod
    def parse(cls, member: str) -> DueStep | None:
        prompt_id, _, step = member.rpartition(":")
        return cls(prompt_id, int(step)) if prompt_id and step.isdigit() else None


@dataclass(frozen=True, slots=True)
class Copy:
    """A copy of a prompt that step ``step`` posted for ``target``: in ``thread_id``, as ``message_id``."""

    step: int
    target: str
    thread_id: str
    message_id: str


def schedule(prompt: Prompt) -> list[tuple[Any, ...]]:
    """The commands that put the prompt's steps on the schedule (sent with the script that opens it)."""
    if not prompt.escalation:
        return []
    created = to_ms(prompt.created_at)
    scores: list[Any] = []
    for index, step in enumerate(prompt.escalation):
        scores += [created + step.after_seconds * 1000, DueStep(prompt.prompt_id, index).member]
    return [("ZADD", keys.escalation_schedule(keys.partition(prompt.thread_id)), *scores)]


def unscheduled(prompts: list[Prompt]) -> list[tuple[Any, ...]]:
    """The commands that drop settled prompts' steps from the schedule: one per partition that holds some
    (none without steps)."""
    by_part: dict[int, list[str]] = {}
    for prompt in prompts:
        for index in range(len(prompt.escalation or [])):
            member = DueStep(prompt.prompt_id, index).member
            by_part.setdefault(keys.partition(prompt.thread_id), []).append(member)
    return [("ZREM", keys.escalation_schedule(part), *members) for part, members in by_part.items()]


def _fields(raw: str) -> dict[str, str]:
    flat = json.loads(raw)
    return {str(flat[i]): str(flat[i + 1]) for i in range(0, len(flat) - 1, 2)}


def copies(raw: str | None) -> list[Copy]:
    """The copies noted in a prompt's ``esc`` field (its escalation hash, as ``prompt_fields`` reads it)."""
    found: list[Copy] = []
    for name, value in _fields(raw).items() if raw else ():
        if not name.startswith(COPY_FIELD):
            continue
        step, _, target = name[len(COPY_FIELD) :].partition(":")
        thread_id, _, message_id = value.partition(" ")
        if step.isdigit() and thread_id:
            found.append(Copy(int(step), target, thread_id, message_id))
    return sorted(found, key=lambda copy: (copy.step, copy.target))


def taken(prompt: Prompt, raw: str) -> list[EscalationTaken]:
    """The steps the prompt took, in order, with what each did and the threads its copies went to."""
    fields = _fields(raw)
    plan = prompt.escalation or []
    threads: dict[int, list[str]] = {}
    for copy in copies(raw):
        threads.setdefault(copy.step, []).append(copy.thread_id)
    steps: list[EscalationTaken] = []
    for name, value in fields.items():
        index = name[len(STEP_FIELD) :]
        if not name.startswith(STEP_FIELD) or not index.isdigit() or int(index) >= len(plan):
            continue
        step = plan[int(index)]
        steps.append(
            EscalationTaken(
                at=from_ms(value),
                step=int(index),
                remind=True if step.remind else None,
                to=list(step.to) or None,
                threads=threads.get(int(index)),
            )
        )
    return sorted(steps, key=lambda one: one.step)


class ScriptHost(Protocol):
    """What of the ``Store`` this needs: its client, its scripts, and how it calls a thread script."""

    redis: Any
    scripts: Scripts

    def _lead(self, now_ms: int | None = None) -> list[int | str]: ...

    async def _thread_script(
        self, thread_id: str, call: ScriptCall, now_ms: int, prelude: list[tuple[Any, ...]] | None = None
    ) -> list[Any]: ...


class EscalationStore:
    """The schedule and the copies, over one ``Store``'s client and scripts."""

    def __init__(self, store: ScriptHost) -> None:
        self.store = store

    async def claim_due(self, now_ms: int, lease_ms: int, limit: int = 100) -> list[DueStep]:
        """Due steps, each claimed for ``lease_ms`` (then due again unless ``done`` dropped it): up to
        ``limit`` from each partition that has some due."""
        store = self.store
        # Most sweeps find nothing due: plain reads say so (one round trip), without the claim script.
        pipe = store.redis.pipeline(transaction=False)
        for part in keys.EVERY_PARTITION:
            pipe.zrangebyscore(keys.escalation_schedule(part), "-inf", now_ms, start=0, num=1)
        due = [part for part, found in zip(keys.EVERY_PARTITION, await pipe.execute(), strict=True) if found]
        if not due:
            return []
        claims = [calls.claim_escalations(part, now_ms, lease_ms, limit) for part in due]
        claimed = await store.scripts.call_many(store.redis, claims)
        return [
            step
            for members in claimed
            for member in members
            if (step := DueStep.parse(str(member))) is not None
        ]

    async def take(
        self, thread_id: str, due: DueStep, now_ms: int, *, remind: bool, escalate: bool
    ) -> StepStatus:
        """Take a due step once: its reminder and copies are queued in the thread's outbox."""
        lead = self.store._lead(now_ms)
        step = due.prompt_id, due.step
        call = calls.take_escalation(lead, thread_id, *step, remind=remind, escalate=escalate)
        reply = await self.store._thread_script(thread_id, call, now_ms)
        return StepStatus(reply[0])

    async def done(self, steps: list[DueStep]) -> None:
        """Drop steps from the schedule (taken, or never to run): from every partition, the steps' own
        prompts' threads being unknown here (one round trip)."""
        if steps:
            members = [step.member for step in steps]
            pipe = self.store.redis.pipeline(transaction=False)
            for part in keys.EVERY_PARTITION:
                pipe.zrem(keys.escalation_schedule(part), *members)
            await pipe.execute()

    async def mirror(self, thread_id: str, prompt_id: str, origin: str, keep_ms: int, agent: str) -> None:
        """A copy of ``origin``'s prompt (of ``agent``) is about to be posted in ``thread_id``: replies to
        it there are handed to ``origin`` for ``keep_ms`` (set first, so no reply comes too early to be
        handed on); a typed one only while no other agent has a run in ``thread_id``."""
        store = self.store
        call = calls.mirror_prompt(store._lead(), thread_id, prompt_id, origin, keep_ms, agent)
        await store.scripts.call(store.redis, *call)

    async def record_copy(self, origin: str, prompt_id: str, copy: Copy, now_ms: int) -> None:
        """Note a posted copy on the prompt's thread, so its outcome reaches the copy too."""
        store = self.store
        field = f"{COPY_FIELD}{copy.step}:{copy.target}"
        value = f"{copy.thread_id} {copy.message_id}"
        call = calls.record_copy(store._lead(now_ms), origin, prompt_id, field, value)
        await store.scripts.call(store.redis, *call)

    async def forget_copy(self, thread_id: str, prompt_id: str) -> None:
        """The prompt settled: replies in ``thread_id`` no longer go to it."""
        store = self.store
        call = calls.mirror_prompt(store._lead(), thread_id, prompt_id, "", 0, "")
        await store.scripts.call(store.redis, *call)
