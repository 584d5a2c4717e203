"""Reminders and escalation on Discord, against the fake Discord: a reminder notifies exactly the people
who may answer, and a copy posted in another channel is answered there."""

from __future__ import annotations

from gateway.base.models import AgentDefinition, HumanInput, Person, PromptRequest, PromptState
from gateway.process.runtime import Runtime
from tests.channels import discord_support
from tests.channels.discord_support import ALICE, BOB, CHANNEL_ID, GUILD_ID, eventually, start_run
from tests.fakes.discord import FakeDiscord

fake = discord_support.fake
runtime_on_redis = discord_support.runtime_on_redis
ONCALL_ID = 555_555_555_555_555_555


def deploy(escalation: list[dict[str, object]]) -> PromptRequest:
    return PromptRequest.model_validate(
        {"kind": "approval", "questions": [{"question": "Deploy?"}], "escalation": escalation}
    )


async def test_a_reminder_notifies_who_may_answer_and_nobody_else(
    fake: FakeDiscord, runtime_on_redis: Runtime
) -> None:
    runtime = runtime_on_redis
    await runtime.store.put_agent(
        AgentDefinition(name="ops", human_input=HumanInput(approvers=[f"discord:{BOB}"]))
    )
    run_id = await start_run(runtime.gateway)
    await runtime.gateway.raise_prompt(run_id, deploy([{"after_seconds": 1, "remind": True}]))

    reminder = await eventually(
        lambda: next((m for m in fake.posted(CHANNEL_ID) if "Reminder" in m["content"]), None)
    )
    assert reminder["content"].endswith(f"\n<@{ALICE}> <@{BOB}>")
    assert reminder["allowed_mentions"] == {"parse": [], "users": [ALICE, BOB]}


async def test_a_copy_in_another_channel_is_answered_there(
    fake: FakeDiscord, runtime_on_redis: Runtime
) -> None:
    runtime = runtime_on_redis
    await runtime.store.put_agent(
        AgentDefinition(name="ops", human_input=HumanInput(approvers=[f"discord:{BOB}"]))
    )
    run_id = await start_run(runtime.gateway)
    prompt = await runtime.gateway.raise_prompt(
        run_id, deploy([{"after_seconds": 1, "to": [f"discord:{ONCALL_ID}"]}])
    )

    await eventually(lambda: len(fake.posted(ONCALL_ID)) >= 2)
    await fake.person_says(ONCALL_ID, BOB, "approve", guild_id=GUILD_ID)
    settled = await runtime.gateway.wait_prompt(prompt.prompt_id, timeout=5)

    assert (settled.prompt_state, settled.answered_by) == (PromptState.ANSWERED, f"discord:{BOB}")
    audit = "✓ Answered: Approve\n"  # then who answered, in small print
    await eventually(lambda: any(m["content"].startswith(audit) for m in fake.posted(ONCALL_ID)))
    await eventually(lambda: any(m["content"].startswith(audit) for m in fake.posted(CHANNEL_ID)))


async def test_a_step_to_a_person_reaches_their_dm_and_a_press_there_settles_every_copy(
    fake: FakeDiscord, runtime_on_redis: Runtime
) -> None:
    runtime = runtime_on_redis
    await runtime.store.people.put(Person(person="dana", identities=[f"discord:{BOB}"]))
    await runtime.store.put_agent(
        AgentDefinition(name="ops", human_input=HumanInput(approvers=["person:dana"]))
    )
    run_id = await start_run(runtime.gateway)
    prompt = await runtime.gateway.raise_prompt(run_id, deploy([{"after_seconds": 1, "to": ["person:dana"]}]))

    dm = await eventually(lambda: fake.dm_channels.get(BOB))
    header, card = await eventually(lambda: fake.posted(dm) if len(fake.posted(dm)) >= 2 else None)
    assert header["content"].startswith("⏫ Escalated to you")
    pressed = await fake.press(fake.message(card["id"]), "Approve", user_id=BOB)  # in the DM: no server
    await fake.answered(pressed)
    settled = await runtime.gateway.wait_prompt(prompt.prompt_id, timeout=5)

    assert (settled.prompt_state, settled.answered_by) == (PromptState.ANSWERED, f"discord:{BOB}")
    audit = "✓ Answered: Approve\n"
    await eventually(lambda: any(m["content"].startswith(audit) for m in fake.posted(dm)))
    await eventually(lambda: any(m["content"].startswith(audit) for m in fake.posted(CHANNEL_ID)))
    await eventually(lambda: not fake.controls(fake.message(card["id"])))
