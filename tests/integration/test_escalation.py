"""Reminders and escalation through the core: steps taken once from the schedule in Redis, copies
answerable in their own thread, every copy shown the outcome, and nothing settled by a step."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import pytest

from gateway.base.models import (
    AgentDefinition,
    HumanInput,
    InboundMessage,
    Person,
    PromptRequest,
    PromptState,
    RunRequest,
)
from gateway.base.models.groups import GroupBody, Rotation
from gateway.decision.service import Gateway, Outcome
from gateway.delivery.channel import Channels
from gateway.store import Store, keys
from tests.support.feeds import feed_entries
from tests.support.memory_channel import MemoryChannel

THREAD = "slack:C0456:1712345678.000100"
ONCALL = "slack:C0999:1712345678.000200"
ALICE = "slack:UALICE"  # started the run
BOB = "slack:UBOB"  # the agent's approver
EVE = "slack:UEVE"  # neither
START = 1_800_000_000.0
DEPLOY: dict[str, Any] = {
    "kind": "ask_user_question",
    "questions": [
        {"question": "What's the deployment target?", "options": [{"label": "staging"}, {"label": "prod"}]}
    ],
}


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> float:
        return self.now


@pytest.fixture
async def clock() -> Clock:
    return Clock()


@pytest.fixture
async def service(store: Store, channel: MemoryChannel, clock: Clock) -> AsyncIterator[Gateway]:
    gateway = Gateway(store, Channels([channel]), clock=clock, sweep_interval=3600)
    await gateway.start()
    await store.put_agent(AgentDefinition(name="ops", human_input=HumanInput(approvers=[BOB])))
    yield gateway
    await gateway.stop()


async def raise_with(gateway: Gateway, escalation: list[dict[str, Any]] | None) -> str:
    run = await gateway.create_run(RunRequest(thread_id=THREAD, agent="ops", started_by=ALICE))
    body = {**DEPLOY, "escalation": escalation} if escalation is not None else DEPLOY
    prompt = await gateway.raise_prompt(run.run_id, PromptRequest.model_validate(body))
    await gateway.outbox.idle()
    return prompt.prompt_id


async def step(gateway: Gateway, clock: Clock, seconds: float) -> int:
    """Move the clock on, run the escalation sweep, and deliver what it queued."""
    clock.now += seconds
    taken = await gateway.escalate_due()
    await gateway.outbox.idle()
    return taken


def texts(channel: MemoryChannel, thread_id: str, kind: str = "message") -> list[str]:
    return [p.item.text for p in channel.posts if p.thread_id == thread_id and p.item.type == kind]


async def events(store: Store, kind: str) -> list[dict[str, Any]]:
    return [entry for entry in await feed_entries(store.redis, keys.EVENTS) if entry["type"] == kind]


async def test_a_reminder_is_posted_once_when_due_naming_who_may_answer(
    service: Gateway, channel: MemoryChannel, clock: Clock
) -> None:
    prompt_id = await raise_with(service, [{"after_seconds": 60, "remind": True}])

    assert await step(service, clock, 59) == 0
    assert await step(service, clock, 1) == 1
    assert await step(service, clock, 600) == 0

    assert texts(channel, THREAD) == [
        "🔔 Reminder: this prompt is still waiting for an answer. Waiting on UALICE, UBOB."
    ]
    reminded = await events(service.store, "input.reminded")
    assert [(e["data"]["prompt_id"], e["data"]["step"]) for e in reminded] == [(prompt_id, 0)]
    prompt = await service.get_prompt(prompt_id)
    assert prompt.pending, "a reminder settles nothing"
    assert prompt.escalations is not None
    assert [(taken.step, taken.remind) for taken in prompt.escalations] == [(0, True)]
    assert prompt.public()["escalations"] == [{"at": "2027-01-15T08:01:00Z", "step": 0, "remind": True}]


async def test_the_agents_escalation_applies_unless_the_raise_names_its_own(
    service: Gateway, store: Store, channel: MemoryChannel, clock: Clock
) -> None:
    plan = [{"after_seconds": 30, "remind": True}]
    human = HumanInput.model_validate({"approvers": [BOB], "escalation": plan})
    await store.put_agent(AgentDefinition(name="ops", human_input=human))
    defined = await raise_with(service, None)
    assert (await service.get_prompt(defined)).public()["escalation"] == [
        {"after_seconds": 30, "remind": True, "to": []}
    ]
    none = await raise_with(service, [])  # supersedes the first, and asks for no steps
    assert (await service.get_prompt(none)).escalation is None
    assert await step(service, clock, 60) == 0
    assert texts(channel, THREAD) == []


async def test_a_settled_prompts_later_steps_never_run(
    service: Gateway, store: Store, channel: MemoryChannel, clock: Clock
) -> None:
    prompt_id = await raise_with(
        service, [{"after_seconds": 60, "remind": True}, {"after_seconds": 120, "to": [ONCALL]}]
    )
    assert await step(service, clock, 61) == 1
    answered = await service.receive(InboundMessage(thread_id=THREAD, sender=ALICE, text="staging"))
    assert answered.outcome is Outcome.ANSWERED
    await service.outbox.idle()

    assert await step(service, clock, 600) == 0
    assert texts(channel, ONCALL) == [] and texts(channel, ONCALL, "pending_prompt") == []
    assert await store.redis.zcard(keys.ESCALATION) == 0, "a settled prompt's steps leave the schedule"
    assert await events(store, "input.escalated") == []
    assert (await service.get_prompt(prompt_id)).prompt_state is PromptState.ANSWERED


async def test_an_escalated_copy_answered_in_its_thread_settles_the_prompt_and_both_show_it(
    service: Gateway, store: Store, channel: MemoryChannel, clock: Clock
) -> None:
    prompt_id = await raise_with(service, [{"after_seconds": 3600, "to": [ONCALL]}])
    assert await step(service, clock, 3600) == 1

    assert texts(channel, ONCALL)[0].startswith(f"⏫ Escalated: a prompt in {THREAD} has waited 1 hour")
    [copy] = [p for p in channel.posts if p.thread_id == ONCALL and p.item.type == "pending_prompt"]
    assert copy.item.metadata["prompt"]["prompt_id"] == prompt_id
    escalated = await events(store, "input.escalated")
    assert [(e["data"]["prompt_id"], e["data"]["step"]) for e in escalated] == [(prompt_id, 0)]

    stranger = await service.receive(InboundMessage(thread_id=ONCALL, sender=EVE, text="prod"))
    assert stranger.outcome is Outcome.NOT_ALLOWED
    assert channel.notices[-1][:2] == (ONCALL, EVE), "told in the thread they wrote in"
    answered = await service.receive(
        InboundMessage(thread_id=ONCALL, sender=BOB, text="prod", event_id="Ev1")
    )
    assert answered.outcome is Outcome.ANSWERED
    await service.outbox.idle()
    await service.outbox.idle()

    prompt = await service.get_prompt(prompt_id)
    assert prompt.prompt_state is PromptState.ANSWERED and prompt.answered_by == BOB
    assert prompt.answers is not None and prompt.answers[0].answer == ["prod"]
    assert prompt.escalations is not None and prompt.escalations[0].threads == [ONCALL]
    assert texts(channel, THREAD, "pending_prompt_resolved") == ["✓ Answered: prod"]
    assert texts(channel, ONCALL, "pending_prompt_resolved") == ["✓ Answered: prod"]
    assert copy.message_id in [message_id for message_id, _ in channel.edits], "the copy's controls retire"

    # The same platform event again, and a reply once it settled: nothing is answered twice, and a
    # message typed there afterwards is the thread's own again (queued for its agents).
    again = await service.receive(InboundMessage(thread_id=ONCALL, sender=BOB, text="prod", event_id="Ev1"))
    assert again.outcome is Outcome.DUPLICATE
    later = await service.receive(InboundMessage(thread_id=ONCALL, sender=BOB, text="thanks"))
    assert later.outcome is Outcome.QUEUED


async def test_a_press_on_a_copy_reaches_its_prompt_while_that_thread_asks_its_own(
    service: Gateway, store: Store, channel: MemoryChannel, clock: Clock
) -> None:
    prompt_id = await raise_with(service, [{"after_seconds": 60, "to": [ONCALL]}])
    assert await step(service, clock, 60) == 1
    own_run = await service.create_run(RunRequest(thread_id=ONCALL, agent="ops", started_by=BOB))
    own = await service.raise_prompt(own_run.run_id, PromptRequest.model_validate(DEPLOY))

    pressed = await service.receive(
        InboundMessage(
            thread_id=ONCALL,
            sender=BOB,
            prompt_id=prompt_id,
            answers=[{"question_id": "q1", "answer": ["staging"]}],
        )
    )
    assert pressed.outcome is Outcome.ANSWERED
    assert (await service.get_prompt(prompt_id)).prompt_state is PromptState.ANSWERED
    assert (await service.get_prompt(own.prompt_id)).pending, "the thread's own prompt is left alone"


async def test_a_step_claimed_by_a_process_that_died_is_taken_after_its_lease(
    service: Gateway, store: Store, channel: MemoryChannel, clock: Clock
) -> None:
    await raise_with(service, [{"after_seconds": 60, "remind": True}])
    clock.now += 60
    claimed = await store.escalations.claim_due(int(clock.now * 1000), lease_ms=60_000)
    assert len(claimed) == 1  # ... and the process that claimed it dies here

    assert await step(service, clock, 30) == 0, "still leased to the dead process"
    assert await step(service, clock, 31) == 1
    assert len(texts(channel, THREAD)) == 1


async def test_a_restarted_gateway_runs_the_steps_its_predecessor_scheduled(
    store: Store, clock: Clock
) -> None:
    before = MemoryChannel("slack")
    first = Gateway(store, Channels([before]), clock=clock, sweep_interval=3600)
    await first.start()
    prompt_id = await raise_with(first, [{"after_seconds": 60, "remind": True}])
    await first.stop()

    after = MemoryChannel("slack")
    second = Gateway(Store(store.redis), Channels([after]), clock=clock, sweep_interval=3600)
    await second.start()
    try:
        # The step is taken here or by the new gateway's own first sweep, which starts in the background
        # and may run meanwhile: either way once, and posted by the gateway that outlived the first.
        await step(second, clock, 60)
        for _ in range(100):  # the background sweep's take may still be on its way to the outbox
            await second.outbox.idle()
            if any(p.item.type == "message" for p in after.posts):
                break
            await asyncio.sleep(0.03)
    finally:
        await second.stop()
    assert [p.item.metadata.get("prompt_id") for p in after.posts if p.item.type == "message"] == [prompt_id]


class MentioningChannel(MemoryChannel):
    """A channel that can notify its own platform's people by name (``Mentions``)."""

    def mention(self, identity: str) -> str | None:
        return f"<@{identity.partition(':')[2]}>" if identity.startswith("slack:") else None


async def _people(store: Store) -> None:
    await store.people.put(Person(person="dana", name="Dana", identities=["slack:UDANA", "teams:dana-aad"]))
    await store.people.put(Person(person="erin", name="Erin", identities=["telegram:42"], groups=["sre"]))
    await store.people.put(Person(person="finn", name="Finn", identities=["slack:UFINN"], groups=["sre"]))
    await store.people.put(Person(person="gus", name="Gus", identities=["slack:UGUS"]))


@pytest.mark.parametrize("mentions", [True, False], ids=["mentions", "names"])
async def test_a_step_to_a_person_and_a_group_reaches_them_in_the_prompts_thread(
    store: Store, clock: Clock, mentions: bool
) -> None:
    """``to`` may name ``person:<id>`` and ``group:<name>``: the step mentions each person's identity on
    the thread's platform where it can, names the rest, and posts no copy anywhere else."""
    channel = MentioningChannel() if mentions else MemoryChannel()
    gateway = Gateway(store, Channels([channel]), clock=clock, sweep_interval=3600)
    await gateway.start()
    try:
        await store.put_agent(AgentDefinition(name="ops", human_input=HumanInput(approvers=[BOB])))
        await _people(store)
        prompt_id = await raise_with(gateway, [{"after_seconds": 60, "to": ["person:dana", "group:sre"]}])

        assert await step(gateway, clock, 60) == 1
        [posted] = [p for p in channel.posts if p.item.metadata.get("type") == "escalation"]
        assert posted.thread_id == THREAD and posted.item.metadata["prompt_id"] == prompt_id
        waited = "this prompt has waited 1 minute for an answer."
        if mentions:
            assert posted.item.metadata["mentions"] == ["slack:UDANA", "slack:UFINN"]
            assert posted.item.text == f"⏫ Escalated to Erin: {waited}"
        else:
            assert posted.item.metadata["mentions"] == []
            assert posted.item.text == f"⏫ Escalated to Dana, Erin, Finn: {waited}"
        assert {p.thread_id for p in channel.posts} == {THREAD}, "no copy goes to another thread"
        escalated = await events(store, "input.escalated")
        assert [e["data"]["step"] for e in escalated] == [0]
        assert await step(gateway, clock, 600) == 0
    finally:
        await gateway.stop()


async def test_a_reminder_names_the_people_a_person_or_group_approver_stands_for(
    service: Gateway, store: Store, channel: MemoryChannel, clock: Clock
) -> None:
    await store.people.put(
        Person(person="dana", identities=["slack:UDANA", "teams:dana-aad"], groups=["ops"])
    )
    await store.put_agent(AgentDefinition(name="ops", human_input=HumanInput(approvers=[BOB, "group:ops"])))
    await raise_with(service, [{"after_seconds": 60, "remind": True}])
    assert await step(service, clock, 60) == 1
    assert texts(channel, THREAD) == [
        "🔔 Reminder: this prompt is still waiting for an answer. Waiting on UDANA, UALICE, UBOB."
    ]


def test_an_escalation_target_must_be_a_place_or_people() -> None:
    PromptRequest.model_validate({**DEPLOY, "escalation": [{"after_seconds": 5, "to": ["group:sre"]}]})
    with pytest.raises(ValueError, match="person:<id> or group:<name>"):
        PromptRequest.model_validate({**DEPLOY, "escalation": [{"after_seconds": 5, "to": ["nowhere:x"]}]})
    with pytest.raises(ValueError, match="group"):
        PromptRequest.model_validate({**DEPLOY, "escalation": [{"after_seconds": 5, "to": ["group:a b"]}]})


async def test_an_on_duty_target_is_whoever_holds_the_shift_when_the_step_runs(
    store: Store, clock: Clock
) -> None:
    """A handover during the wait: Dana was on duty at the raise, Finn's shift has begun by the step."""
    channel = MentioningChannel()
    gateway = Gateway(store, Channels([channel]), clock=clock, sweep_interval=3600)
    await gateway.start()
    try:
        await store.put_agent(AgentDefinition(name="ops", human_input=HumanInput(approvers=[BOB])))
        await _people(store)
        starts = datetime.fromtimestamp(START - 3600, UTC)
        rotation = Rotation(starts_at=starts, shift_seconds=7200, order=["dana", "finn"])
        await store.people.put_group("sre", GroupBody(members=["dana", "finn"], rotation=rotation))
        await raise_with(gateway, [{"after_seconds": 3660, "to": ["group:sre:on-duty"]}])

        assert await step(gateway, clock, 3660) == 1
        [posted] = [p for p in channel.posts if p.item.metadata.get("type") == "escalation"]
        assert posted.item.metadata["mentions"] == ["slack:UFINN"]
    finally:
        await gateway.stop()


async def test_the_steps_a_prompt_took_are_kept_the_retain_time_once_it_settles(
    service: Gateway, clock: Clock
) -> None:
    """A prompt notes that it took a step, so its settlement gives the steps the prompt's retain time (and
    a prompt that took none has no steps to look for)."""
    stepped = await raise_with(service, [{"after_seconds": 60, "remind": True}])
    assert await step(service, clock, 60) == 1
    reply = InboundMessage(thread_id=THREAD, sender=ALICE, text="1", event_id="e1")
    assert (await service.receive(reply)).outcome is Outcome.ANSWERED
    store = service.store
    left = await store.redis.pttl(keys.escalation(THREAD, stepped))
    assert store.retain_ms - 60_000 < left <= store.retain_ms
    settled = await service.get_prompt(stepped)
    assert settled.escalations is not None and [taken.step for taken in settled.escalations] == [0]
