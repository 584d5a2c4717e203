"""Claims on Telegram, end to end against the fake Bot API (contract §11): the **Claim** button under a
prompt and ``claim`` typed in its chat. While one person holds a prompt only they answer it; the chat is
told once who took it, anyone else is answered with who holds it and until when."""

from __future__ import annotations

import pytest

from gateway.base.models import AgentDefinition, HumanInput, Person
from gateway.process.runtime import Runtime
from gateway.rules import notices
from tests.channels import telegram_support
from tests.channels.telegram_support import ALICE, BOB, CAROL, GROUP, open_prompt, settled
from tests.channels.test_telegram_controls import APPROVAL, press
from tests.fakes.telegram import FakeTelegram

pytestmark = [
    pytest.mark.redis,
    pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning"),
]

GROUP_THREAD = f"telegram:{GROUP}"
fake = telegram_support.fake
redis_url = telegram_support.redis_url
runtime = telegram_support.runtime


async def _bob_may_answer(runtime: Runtime) -> None:
    await runtime.store.put_agent(
        AgentDefinition(name="ops", human_input=HumanInput(approvers=[f"telegram:{BOB}"]))
    )
    await runtime.store.people.put(Person(person="bob", name="Bob", identities=[f"telegram:{BOB}"]))


def _texts(fake: FakeTelegram) -> list[str]:
    return [message.text for message in fake.sent]


async def test_the_claim_button_holds_the_prompt_for_the_presser(
    runtime: Runtime, fake: FakeTelegram
) -> None:
    await _bob_may_answer(runtime)
    prompt = await open_prompt(runtime, GROUP_THREAD, APPROVAL)
    posted = fake.sent[-1]  # in a group the buttons come on a message of their own
    assert [button.text for button in fake.buttons(posted.message_id)][-1] == notices.CLAIM

    claimed = await press(fake, BOB, posted.message_id, notices.CLAIM)
    held = await runtime.gateway.get_prompt(prompt.prompt_id)
    assert held.claimed_by == "person:bob" and held.claimed_until is not None
    assert claimed == {"text": notices.you_are_on_it(held.claimed_until), "show_alert": False}
    await runtime.gateway.outbox.idle()
    assert _texts(fake).count("Bob is on it") == 1

    refused = await press(fake, ALICE, posted.message_id, "✅ Approve")  # the starter, but Bob holds it
    assert refused == {
        "text": f"Bob is on it until {notices.claim_time(held.claimed_until)}",
        "show_alert": True,
    }
    assert (await runtime.gateway.get_prompt(prompt.prompt_id)).pending

    await press(fake, BOB, posted.message_id, "✅ Approve")
    answered = await settled(runtime, prompt.prompt_id)
    assert answered.answered_by == f"telegram:{BOB}"


async def test_a_claim_button_pressed_by_someone_who_may_not_answer_changes_nothing(
    runtime: Runtime, fake: FakeTelegram
) -> None:
    await _bob_may_answer(runtime)
    prompt = await open_prompt(runtime, GROUP_THREAD, APPROVAL)
    refused = await press(fake, CAROL, fake.sent[-1].message_id, notices.CLAIM)
    assert refused == {"text": notices.NOT_ALLOWED, "show_alert": True}
    assert (await runtime.gateway.get_prompt(prompt.prompt_id)).claimed_by is None


async def test_claim_typed_in_the_chat_claims_its_open_prompt(runtime: Runtime, fake: FakeTelegram) -> None:
    await _bob_may_answer(runtime)
    prompt = await open_prompt(runtime, GROUP_THREAD, APPROVAL)
    update = await fake.say(GROUP, BOB, "claim")
    await fake.confirmed(update["update_id"])
    await runtime.gateway.outbox.idle()
    assert (await runtime.gateway.get_prompt(prompt.prompt_id)).claimed_by == "person:bob"
    assert _texts(fake).count("Bob is on it") == 1
