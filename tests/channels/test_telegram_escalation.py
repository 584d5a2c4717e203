"""Reminders and escalation on Telegram, against the fake Bot API: a reminder's text mentions notify the
people who may answer, and a copy posted in another chat is answered there."""

from __future__ import annotations

from typing import Any

from gateway.base.models import AgentDefinition, HumanInput, PromptState
from gateway.process.runtime import Runtime
from tests.channels import telegram_support
from tests.channels.telegram_support import ALICE, BOB, GROUP, open_prompt, settled
from tests.fakes.telegram import FakeTelegram

fake = telegram_support.fake
redis_url = telegram_support.redis_url
runtime = telegram_support.runtime
ONCALL = -100777


def deploy(escalation: list[dict[str, Any]]) -> dict[str, Any]:
    return {"kind": "approval", "questions": [{"question": "Deploy?"}], "escalation": escalation}


async def test_a_reminder_mentions_the_starter_and_the_approvers(
    fake: FakeTelegram, runtime: Runtime
) -> None:
    await runtime.store.put_agent(
        AgentDefinition(name="ops", human_input=HumanInput(approvers=[f"telegram:{BOB}"]))
    )
    await open_prompt(runtime, f"telegram:{GROUP}", deploy([{"after_seconds": 1, "remind": True}]))

    await fake.wait_for(lambda: any("Reminder" in sent.text for sent in fake.sent), timeout=10)
    reminder = next(sent for sent in fake.sent if "Reminder" in sent.text)
    assert reminder.text.endswith(f"\n{ALICE}, {BOB}")
    entities = fake.messages[reminder.message_id]["entities"]
    assert [(e["type"], e["user"]["id"]) for e in entities] == [
        ("text_mention", ALICE),
        ("text_mention", BOB),
    ]
    units = reminder.text.encode("utf-16-le")  # Telegram counts offsets in UTF-16 code units
    spans = [units[2 * e["offset"] : 2 * (e["offset"] + e["length"])].decode("utf-16-le") for e in entities]
    assert spans == [str(ALICE), str(BOB)]


async def test_a_copy_in_another_chat_is_answered_there(fake: FakeTelegram, runtime: Runtime) -> None:
    await runtime.store.put_agent(
        AgentDefinition(name="ops", human_input=HumanInput(approvers=[f"telegram:{BOB}"]))
    )
    prompt = await open_prompt(
        runtime, f"telegram:{GROUP}", deploy([{"after_seconds": 1, "to": [f"telegram:{ONCALL}"]}])
    )
    await fake.wait_for(lambda: sum(sent.chat_id == ONCALL for sent in fake.sent) >= 2, timeout=10)

    await fake.say(ONCALL, BOB, "approve")
    answered = await settled(runtime, prompt.prompt_id)

    assert (answered.prompt_state, answered.answered_by) == (PromptState.ANSWERED, f"telegram:{BOB}")
    await fake.wait_for(
        lambda: all(
            any(sent.chat_id == chat and sent.text.startswith("✓ Answered: Approve\n") for sent in fake.sent)
            for chat in (GROUP, ONCALL)
        )
    )
