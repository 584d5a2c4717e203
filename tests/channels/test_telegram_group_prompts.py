"""Prompts in a Telegram group with privacy mode on, where only replies to the bot's messages reach it: the
question asks for a reply with a selective ForceReply, so a typed answer still arrives, and the buttons come
on a short message of their own right after it (python-telegram-bot against the fake Bot API, on Redis)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from channels.telegram.controls import APPROVE_HINT, PICK_HINT
from gateway.base.models import PromptState
from gateway.process.runtime import Runtime
from gateway.rules import notices
from tests.channels import telegram_support
from tests.channels.telegram_support import (
    ALICE,
    BOB,
    DEPLOY,
    DEPLOY_TEXT,
    GROUP,
    agent_messages,
    fake_bot_api,
    open_prompt,
    settled,
)
from tests.fakes.telegram import FakeTelegram, Sent

pytestmark = [
    pytest.mark.redis,
    pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning"),
]
GROUP_THREAD = f"telegram:{GROUP}"
APPROVAL = {
    "kind": "approval",
    "questions": [{"question": "Allow db__drop to run?"}],
    "tool_call": {"name": "db__drop", "arguments": {"table": "users"}},
}


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    async with fake_bot_api(privacy_mode=True) as server:
        yield server


redis_url = telegram_support.redis_url
runtime = telegram_support.runtime


async def handled(fake: FakeTelegram, update: dict[str, Any]) -> dict[str, Any]:
    """Returns once the poller has handled (and confirmed) the update."""
    await fake.confirmed(update["update_id"])
    return update


async def start_turn(runtime: Runtime, fake: FakeTelegram, user_id: int = ALICE) -> int:
    """With privacy mode on a person starts a turn by replying to the bot; the id of their message."""
    await runtime.gateway.post_message(GROUP_THREAD, "Ready when you are.")
    await runtime.gateway.outbox.idle()
    update = await fake.say(GROUP, user_id, "deploy it", reply_to=fake.sent[-1].message_id)
    await handled(fake, update)
    [_message] = await agent_messages(runtime)
    message_id: int = update["message"]["message_id"]
    return message_id


async def prompt_in_group(
    runtime: Runtime, fake: FakeTelegram, payload: dict[str, Any]
) -> tuple[str, Sent, Sent]:
    """A turn started by Alice, then the agent's prompt: its id, the question and the buttons message."""
    await start_turn(runtime, fake)
    before = len(fake.sent)
    prompt = await open_prompt(runtime, GROUP_THREAD, payload, started_by=ALICE)
    question, controls = fake.sent[before:]
    return prompt.prompt_id, question, controls


def is_selective_force_reply(sent: Sent) -> bool:
    markup = sent.reply_markup or {}
    return markup.get("force_reply") is True and markup.get("selective") is True


async def test_in_a_group_the_question_asks_the_turns_author_for_a_reply_and_the_buttons_follow(
    runtime: Runtime, fake: FakeTelegram
) -> None:
    turn = await start_turn(runtime, fake)
    before = len(fake.sent)

    await open_prompt(runtime, GROUP_THREAD, DEPLOY, started_by=ALICE)

    question, controls = fake.sent[before:]
    assert (question.text, question.reply_to) == (DEPLOY_TEXT, turn)
    assert is_selective_force_reply(question)
    assert fake.buttons(question.message_id) == []
    assert controls.text == PICK_HINT
    assert [b.text for b in fake.buttons(controls.message_id)] == [
        "1. staging",
        "2. production",
        "Other…",
        "Claim",
    ]
    assert fake.force_reply_for(GROUP, ALICE) == question.message_id
    assert fake.force_reply_for(GROUP, BOB) is None  # selective: only the turn's author is asked


async def test_a_typed_answer_in_a_group_reaches_the_bot_as_a_reply_to_the_question_and_resolves(
    runtime: Runtime, fake: FakeTelegram
) -> None:
    prompt_id, question, controls = await prompt_in_group(runtime, fake, DEPLOY)

    typed = await handled(fake, await fake.type_message(GROUP, ALICE, "2"))

    assert typed["message"]["reply_to_message"]["message_id"] == question.message_id
    resolved = await settled(runtime, prompt_id)
    assert [a.answer for a in resolved.answers or []] == [["production"]]
    assert fake.withheld == []
    audit = fake.sent[-1]
    assert (audit.text, audit.reply_to) == (
        f"✓ Answered: production\nAnswered by user{ALICE}",
        controls.message_id,
    )


async def test_privacy_mode_withholds_a_typed_group_message_nobody_asked_for(
    runtime: Runtime, fake: FakeTelegram
) -> None:
    prompt_id, _question, _controls = await prompt_in_group(runtime, fake, DEPLOY)

    bobs = await fake.type_message(GROUP, BOB, "1")  # the ForceReply is Alice's, so Bob's app sends it plain

    assert fake.withheld == [bobs]
    await runtime.gateway.outbox.idle()
    assert (await runtime.gateway.get_prompt(prompt_id)).prompt_state is PromptState.PENDING


async def test_a_typed_approval_in_a_group_resolves_and_the_question_shows_the_tool_call(
    runtime: Runtime, fake: FakeTelegram
) -> None:
    prompt_id, question, controls = await prompt_in_group(runtime, fake, APPROVAL)
    assert question.text.startswith("Allow db__drop to run?\n  1. Approve\n  2. Deny\n\nTool call: db__drop")
    assert controls.text == f"{APPROVE_HINT} {notices.approval_hint(editable=False)}"

    await handled(fake, await fake.type_message(GROUP, ALICE, "yes"))

    resolved = await settled(runtime, prompt_id)
    assert [a.answer for a in resolved.answers or []] == [["Approve"]]


async def test_the_buttons_on_the_group_controls_message_resolve_the_prompt(
    runtime: Runtime, fake: FakeTelegram
) -> None:
    prompt_id, _question, controls = await prompt_in_group(runtime, fake, DEPLOY)
    pick = fake.button(controls.message_id, "1. staging").data

    answered = await fake.answered(await fake.press(ALICE, controls.message_id, pick))

    assert answered == {"text": "Your answer was recorded: staging", "show_alert": False}
    resolved = await settled(runtime, prompt_id)
    assert [a.answer for a in resolved.answers or []] == [["staging"]]


async def test_once_settled_the_controls_message_shows_the_question_and_outcome_and_the_question_stays(
    runtime: Runtime, fake: FakeTelegram
) -> None:
    prompt_id, question, controls = await prompt_in_group(runtime, fake, DEPLOY)

    await handled(fake, await fake.type_message(GROUP, ALICE, "staging"))
    await settled(runtime, prompt_id)

    [edit] = fake.edits
    assert (edit.message_id, edit.text, edit.reply_markup) == (
        controls.message_id,
        f"{DEPLOY_TEXT}\n\n✓ Answered: staging\nAnswered by user{ALICE}",
        None,
    )
    assert fake.buttons(controls.message_id) == []
    assert fake.messages[question.message_id]["text"] == DEPLOY_TEXT


async def test_in_a_forum_topic_both_messages_go_into_the_topic(runtime: Runtime, fake: FakeTelegram) -> None:
    await open_prompt(runtime, f"{GROUP_THREAD}:7", DEPLOY)

    question, controls = fake.sent
    assert (question.topic_id, controls.topic_id) == (7, 7)
    assert is_selective_force_reply(question) and fake.buttons(controls.message_id) != []


async def test_in_a_private_chat_the_prompt_stays_one_message_with_its_buttons(
    runtime: Runtime, fake: FakeTelegram
) -> None:
    await open_prompt(runtime, f"telegram:{ALICE}", DEPLOY)

    [posted] = fake.sent
    assert posted.text == DEPLOY_TEXT
    assert posted.reply_markup is not None and "force_reply" not in posted.reply_markup
    assert [b.text for b in fake.buttons(posted.message_id)] == [
        "1. staging",
        "2. production",
        "Other…",
        "Claim",
    ]
