"""Reminders and escalation on Teams, against the fake Bot Framework: a reminder names nobody by object
id, a copy's card in another conversation answers the prompt, both cards then show the outcome, and a
person is reached in their personal chat with the bot: the one heard from them, else one opened unasked."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from gateway.base.models import Person, PromptRequest, PromptState
from tests.channels.teams_support import (
    BOB,
    CHANNEL_THREAD,
    GROUP,
    IN_PERSONAL,
    PERSONAL,
    TeamsGateway,
    fake_bot_framework,
    teams_gateway,
)
from tests.fakes.teams import BOT_ID, TENANT, Posted, identity, person, personal_chat
from tests.support.conditions import eventually

THREAD = f"teams:{CHANNEL_THREAD}"
ONCALL = f"teams:{GROUP}"


@pytest.fixture
async def gw(real_redis: str) -> AsyncIterator[TeamsGateway]:
    async with fake_bot_framework() as fake, teams_gateway(fake, real_redis, sweep_interval=0.1) as gateway:
        await gateway.approvers(identity(BOB))
        yield gateway


def deploy(escalation: list[dict[str, object]]) -> PromptRequest:
    return PromptRequest.model_validate(
        {"kind": "approval", "questions": [{"question": "Deploy?"}], "escalation": escalation}
    )


def posted_in(gw: TeamsGateway, conversation: str) -> list[Posted]:
    return [posted for posted in gw.fake.posts if posted.conversation_id == conversation]


async def approved_by_bob_in(gw: TeamsGateway, chat: str, prompt_id: str) -> None:
    """Bob presses Approve on the copy in ``chat``, under its "Escalated to you" note: the prompt is his."""
    [copy] = [posted for posted in posted_in(gw, chat) if posted.actions()]
    assert "Deploy?" in copy.text
    await gw.press(copy, "Approve", BOB)
    await gw.settled()
    answered = await gw.prompt(prompt_id)
    assert (answered.prompt_state, answered.answered_by) == (PromptState.ANSWERED, identity(BOB))
    assert any("Escalated to you" in posted.text for posted in posted_in(gw, chat))


async def test_a_reminder_names_nobody_by_object_id(gw: TeamsGateway) -> None:
    await gw.ask(THREAD, deploy([{"after_seconds": 1, "remind": True}]))

    async def reminded() -> bool:
        return any("Reminder" in posted.text for posted in posted_in(gw, CHANNEL_THREAD))

    await eventually(reminded, "a reminder in the thread")
    [reminder] = [posted for posted in posted_in(gw, CHANNEL_THREAD) if "Reminder" in posted.text]
    assert reminder.text == "🔔 Reminder: this prompt is still waiting for an answer."


async def test_a_copys_card_in_another_conversation_answers_the_prompt(gw: TeamsGateway) -> None:
    prompt = await gw.ask(THREAD, deploy([{"after_seconds": 1, "to": [ONCALL]}]))
    original = gw.card_of(prompt)

    async def copied() -> bool:
        return any(posted.actions() for posted in posted_in(gw, GROUP))

    await eventually(copied, "a copy of the prompt in the group chat")
    [copy] = [posted for posted in posted_in(gw, GROUP) if posted.actions()]
    await gw.press(copy, "Approve", BOB)
    await gw.settled()

    answered = await gw.prompt(prompt.prompt_id)
    assert (answered.prompt_state, answered.answered_by) == (PromptState.ANSWERED, identity(BOB))
    assert original.conversation_id == CHANNEL_THREAD

    async def both_show_it() -> bool:
        return all(card.actions() == [] for card in (original, copy))

    await eventually(both_show_it, "both cards without their controls")
    assert "✓ Answered: Approve" in copy.text and "✓ Answered: Approve" in original.text


async def test_a_step_to_a_person_reaches_the_personal_chat_they_have_with_the_bot(gw: TeamsGateway) -> None:
    await gw.runtime.store.people.put(Person(person="bob", identities=[identity(BOB)]))
    said = await gw.say(IN_PERSONAL, "hello", BOB)  # Bob talks with the bot one to one
    assert said.status_code < 300, said.text
    prompt = await gw.ask(THREAD, deploy([{"after_seconds": 1, "to": ["person:bob"]}]))

    async def copied() -> bool:
        return any(posted.actions() for posted in posted_in(gw, PERSONAL))

    await eventually(copied, "a copy of the prompt in Bob's personal chat")
    await approved_by_bob_in(gw, PERSONAL, prompt.prompt_id)


async def test_without_a_tenant_a_person_never_heard_in_a_personal_chat_is_reached_only_in_the_thread(
    gw: TeamsGateway,
) -> None:
    await gw.runtime.store.people.put(Person(person="bob", identities=[identity(BOB)]))
    prompt = await gw.ask(THREAD, deploy([{"after_seconds": 1, "to": ["person:bob"]}]))

    async def noted() -> bool:
        return any("Escalated to" in posted.text for posted in posted_in(gw, CHANNEL_THREAD))

    await eventually(noted, "the escalation's note in the prompt's thread")
    await gw.settled()
    assert posted_in(gw, PERSONAL) == []
    assert gw.fake.opened == []
    assert (await gw.prompt(prompt.prompt_id)).pending


@pytest.fixture
async def single_tenant(real_redis: str) -> AsyncIterator[TeamsGateway]:
    """A single-tenant bot (``TEAMS_TENANT_ID`` set): it may open a personal chat unasked."""
    async with (
        fake_bot_framework() as fake,
        teams_gateway(fake, real_redis, sweep_interval=0.1, tenant_id=TENANT) as gateway,
    ):
        await gateway.approvers(identity(BOB))
        await gateway.runtime.store.people.put(Person(person="bob", identities=[identity(BOB)]))
        yield gateway


BOBS_CHAT = personal_chat(person(BOB)["aadObjectId"])


async def test_a_person_never_heard_from_gets_the_prompt_in_a_personal_chat_opened_unasked(
    single_tenant: TeamsGateway,
) -> None:
    gw = single_tenant
    prompt = await gw.ask(THREAD, deploy([{"after_seconds": 1, "to": ["person:bob"]}]))

    async def copied() -> bool:
        return any(posted.actions() for posted in posted_in(gw, BOBS_CHAT))

    await eventually(copied, "a copy of the prompt in the personal chat opened with Bob")
    assert gw.fake.opened == [
        {
            "members": [{"id": person(BOB)["aadObjectId"]}],
            "tenantId": TENANT,
            "channelData": {"tenant": {"id": TENANT}},
            "bot": {"id": BOT_ID},
            "isGroup": False,
        }
    ]
    await approved_by_bob_in(gw, BOBS_CHAT, prompt.prompt_id)


async def test_a_person_without_the_app_is_skipped_and_the_next_step_goes_on(
    single_tenant: TeamsGateway,
) -> None:
    gw = single_tenant
    gw.fake.not_installed.add(person(BOB)["aadObjectId"])
    steps = [{"after_seconds": 1, "to": ["person:bob"]}, {"after_seconds": 2, "to": [ONCALL]}]
    prompt = await gw.ask(THREAD, deploy(steps))

    async def next_step() -> bool:
        return any(posted.actions() for posted in posted_in(gw, GROUP))

    await eventually(next_step, "the next step's copy in the group chat")
    await gw.settled()
    assert len(gw.fake.opened) == 1  # refused for good: not asked again
    assert posted_in(gw, BOBS_CHAT) == []
    assert any("Escalated to" in posted.text for posted in posted_in(gw, CHANNEL_THREAD))
    assert (await gw.prompt(prompt.prompt_id)).pending


async def test_the_personal_chat_heard_from_the_person_is_preferred_to_opening_one(
    single_tenant: TeamsGateway,
) -> None:
    gw = single_tenant
    said = await gw.say(IN_PERSONAL, "hello", BOB)
    assert said.status_code < 300, said.text
    await gw.ask(THREAD, deploy([{"after_seconds": 1, "to": ["person:bob"]}]))

    async def copied() -> bool:
        return any(posted.actions() for posted in posted_in(gw, PERSONAL))

    await eventually(copied, "a copy of the prompt in the personal chat Bob wrote in")
    assert gw.fake.opened == []
    assert posted_in(gw, BOBS_CHAT) == []
