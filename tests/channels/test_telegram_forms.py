"""Seed 002's forms and URL steps on Telegram: a form is filled a field at a time with buttons (a choice,
Yes or No, ticks and Submit, a ForceReply for text and numbers) or by typing; a URL step has its link,
Done and Decline. python-telegram-bot against the fake Bot API, the core on Redis; the core's one form
validator decides every value."""

from __future__ import annotations

from typing import Any

import pytest

from gateway.base.models import AgentDefinition, HumanInput, PromptState, ReasonCode
from gateway.process.runtime import Runtime
from gateway.rules import notices
from tests.channels import telegram_support
from tests.channels.telegram_support import (
    ALICE,
    BOB,
    GROUP,
    agent_messages,
    open_prompt,
    settled,
)
from tests.fakes.telegram import FakeTelegram

pytestmark = [
    pytest.mark.redis,
    pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning"),
]
DM = f"telegram:{ALICE}"
GROUP_THREAD = f"telegram:{GROUP}"

DEPLOY_FORM: dict[str, Any] = {
    "kind": "form",
    "message": "Deploy settings",
    "requested_schema": {
        "type": "object",
        "properties": {
            "env": {
                "type": "string",
                "title": "Environment",
                "enum": ["stg", "prod"],
                "enumNames": ["Staging", "Production"],
            },
            "replicas": {"type": "integer", "title": "Replicas", "minimum": 1, "maximum": 10},
            "notify": {"type": "boolean", "title": "Notify the team"},
            "regions": {
                "type": "array",
                "title": "Regions",
                "items": {"type": "string", "enum": ["eu", "us", "ap"]},
                "minItems": 1,
            },
            "note": {"type": "string", "title": "Note", "maxLength": 20},
        },
        "required": ["env", "replicas", "notify", "regions"],
    },
}
REPLICAS_FORM: dict[str, Any] = {
    "kind": "form",
    "message": "How many replicas?",
    "requested_schema": {
        "type": "object",
        "properties": {"replicas": {"type": "integer", "title": "Replicas", "minimum": 1, "maximum": 10}},
        "required": ["replicas"],
    },
}
CONNECT = {"kind": "url", "message": "Connect your GitHub account", "url": "https://example.com/connect"}

fake = telegram_support.fake
redis_url = telegram_support.redis_url
runtime = telegram_support.runtime


async def press(fake: FakeTelegram, user_id: int, message_id: int, button: str) -> dict[str, Any]:
    """``user_id`` presses the button labelled ``button`` on that message; the bot's answer to it."""
    update = await fake.press(user_id, message_id, fake.button(message_id, button).data)
    return await fake.answered(update)


async def say(fake: FakeTelegram, chat_id: int, user_id: int, text: str, **kwargs: Any) -> dict[str, Any]:
    """Someone writes in the chat; returns once the poller has handled (and confirmed) the update."""
    update = await fake.say(chat_id, user_id, text, **kwargs)
    await fake.confirmed(update["update_id"])
    return update


async def write(fake: FakeTelegram, chat_id: int, message_id: int, text: str) -> dict[str, Any]:
    """Alice presses ``✎ Answer…`` and replies to the text request the bot posts for her."""
    await press(fake, ALICE, message_id, "✎ Answer…")
    asked = fake.sent[-1]
    assert asked.reply_markup is not None and asked.reply_markup["force_reply"] is True
    return await say(fake, chat_id, ALICE, text, reply_to=asked.message_id)


def texts(fake: FakeTelegram, message_id: int) -> list[str]:
    return [button.text for button in fake.buttons(message_id)]


async def pending(runtime: Runtime, prompt_id: str) -> bool:
    await runtime.gateway.outbox.idle()
    return (await runtime.gateway.get_prompt(prompt_id)).pending


# Forms -------------------------------------------------------------------------------------------------


async def test_tool_asks_a_flat_form_and_the_person_fills_it_a_field_at_a_time_with_buttons(
    runtime: Runtime, fake: FakeTelegram
) -> None:
    prompt = await open_prompt(runtime, DM, DEPLOY_FORM)
    [posted] = fake.sent
    message = posted.message_id
    assert posted.text.endswith("\n\n▶ Field 1 of 5: Environment — pick one, required")
    assert texts(fake, message) == ["1. Staging", "2. Production", "✗ Decline"]

    assert (await press(fake, ALICE, message, "2. Production"))["text"] == notices.next_field(2, 5)
    assert texts(fake, message) == ["✎ Answer…", "✗ Decline"]
    await write(fake, ALICE, message, "3")
    assert texts(fake, message) == ["Yes", "No", "✗ Decline"]
    await press(fake, ALICE, message, "Yes")
    await press(fake, ALICE, message, "eu")
    assert (await press(fake, ALICE, message, "ap"))["text"] == "✓ ap"
    assert texts(fake, message) == ["✓ 1. eu", "2. us", "✓ 3. ap", "Submit", "✗ Decline"]
    answered = await press(fake, ALICE, message, "Submit")  # the last required field sends the form

    resolved = await settled(runtime, prompt.prompt_id)
    assert resolved.content == {"env": "prod", "replicas": 3, "notify": True, "regions": ["eu", "ap"]}
    assert [a.answer for a in resolved.answers or []] == [["Production"], ["3"], ["Yes"], ["eu", "ap"], []]
    assert answered["text"] == (
        "Your answer was recorded: Production · 3 · Yes · eu, ap · (no selection). Optional, left empty: "
        "Note (note). To fill one, add a line like note: … to the reply that sends the form."
    )
    audit = fake.sent[-1]
    assert (audit.text, audit.reply_to) == (
        "✓ Answered:\nEnvironment: Production\nReplicas: 3\nNotify the team: Yes\nRegions: eu, ap\n"
        f"Note: (no selection)\nAnswered by user{ALICE}",
        message,
    )
    assert fake.messages[message]["text"].endswith("\n\n" + audit.text)  # the form shows it too
    assert fake.buttons(message) == []
    [parked] = await agent_messages(runtime)
    assert parked["metadata"]["content"] == resolved.content


async def test_an_invalid_value_gets_a_notice_naming_the_constraint_and_the_form_stays_pending(
    runtime: Runtime, fake: FakeTelegram
) -> None:
    prompt = await open_prompt(runtime, GROUP_THREAD, DEPLOY_FORM)
    [_form, buttons] = fake.sent
    await press(fake, ALICE, buttons.message_id, "1. Staging")

    written = await write(fake, GROUP, buttons.message_id, "12")

    notice = fake.sent[-1]
    assert (notice.text, notice.reply_to) == (
        "Not taken: Replicas must be at most 10 (maximum 10). The form is still open.",
        written["message"]["message_id"],
    )
    assert await pending(runtime, prompt.prompt_id)
    assert texts(fake, buttons.message_id) == ["✎ Answer…", "✗ Decline"]  # still at Replicas
    await write(fake, GROUP, buttons.message_id, "2")
    assert texts(fake, buttons.message_id) == ["Yes", "No", "✗ Decline"]


async def test_a_one_field_form_answered_by_typed_reply_checks_the_value_and_then_takes_it(
    runtime: Runtime, fake: FakeTelegram
) -> None:
    prompt = await open_prompt(runtime, DM, REPLICAS_FORM)
    [posted] = fake.sent
    assert texts(fake, posted.message_id) == ["✎ Answer…", "✗ Decline"]

    typed = await say(fake, ALICE, ALICE, "0")
    notice = fake.sent[-1]
    assert (notice.text, notice.reply_to) == (
        "Not taken: Replicas must be at least 1 (minimum 1). The form is still open.",
        typed["message"]["message_id"],
    )
    assert await pending(runtime, prompt.prompt_id)
    await say(fake, ALICE, ALICE, "4")

    resolved = await settled(runtime, prompt.prompt_id)
    assert (resolved.prompt_state, resolved.content) == (PromptState.ANSWERED, {"replicas": 4})


async def test_a_form_answered_in_name_value_lines_and_its_buttons_catch_up_at_the_next_press(
    runtime: Runtime, fake: FakeTelegram
) -> None:
    prompt = await open_prompt(runtime, DM, DEPLOY_FORM)
    [posted] = fake.sent

    await say(fake, ALICE, ALICE, "env: prod\nreplicas: 2\nnote: ship it")
    assert fake.sent[-1].text.startswith("Next, reply with 3. Notify")
    stale = await press(fake, ALICE, posted.message_id, "2. Production")  # buttons still at Environment

    assert stale == {"text": notices.moved_on(3, 5), "show_alert": True}
    assert texts(fake, posted.message_id) == ["Yes", "No", "✗ Decline"]
    await press(fake, ALICE, posted.message_id, "No")
    await press(fake, ALICE, posted.message_id, "us")
    await press(fake, ALICE, posted.message_id, "Submit")
    resolved = await settled(runtime, prompt.prompt_id)
    assert resolved.content == {
        "env": "prod",
        "replicas": 2,
        "notify": False,
        "regions": ["us"],
        "note": "ship it",
    }


async def test_the_decline_button_declines_the_form(runtime: Runtime, fake: FakeTelegram) -> None:
    prompt = await open_prompt(runtime, DM, DEPLOY_FORM)
    [posted] = fake.sent
    await press(fake, ALICE, posted.message_id, "1. Staging")

    answered = await press(fake, ALICE, posted.message_id, "✗ Decline")

    resolved = await settled(runtime, prompt.prompt_id)
    assert answered == {"text": notices.DECLINED, "show_alert": False}
    assert (resolved.prompt_state, resolved.reason_code) == (PromptState.CANCELLED, ReasonCode.DECLINED)
    assert fake.messages[posted.message_id]["text"].endswith("✗ Cancelled: the person declined to answer")
    assert fake.buttons(posted.message_id) == []


async def test_a_stranger_may_not_press_or_type_a_form_value(runtime: Runtime, fake: FakeTelegram) -> None:
    prompt = await open_prompt(runtime, GROUP_THREAD, DEPLOY_FORM, started_by=ALICE)
    [form, buttons] = fake.sent

    pressed = await press(fake, BOB, buttons.message_id, "2. Production")
    declined = await press(fake, BOB, buttons.message_id, "✗ Decline")
    typed = await say(fake, GROUP, BOB, "env: prod", reply_to=form.message_id)

    assert pressed == declined == {"text": notices.NOT_ALLOWED, "show_alert": True}
    assert fake.sent[-1].reply_to == typed["message"]["message_id"]
    assert fake.sent[-1].text == notices.NOT_ALLOWED
    assert await pending(runtime, prompt.prompt_id)
    assert fake.edits == []
    assert await runtime.gateway.get_draft(GROUP_THREAD, f"form:{prompt.prompt_id}") == {}


async def test_an_approver_may_fill_the_form(runtime: Runtime, fake: FakeTelegram) -> None:
    await runtime.store.put_agent(
        AgentDefinition(name="ops", human_input=HumanInput(approvers=[f"telegram:{BOB}"]))
    )
    prompt = await open_prompt(runtime, GROUP_THREAD, REPLICAS_FORM, started_by=ALICE)
    [_form, buttons] = fake.sent

    await press(fake, BOB, buttons.message_id, "✎ Answer…")
    await say(fake, GROUP, BOB, "5", reply_to=fake.sent[-1].message_id)

    resolved = await settled(runtime, prompt.prompt_id)
    assert (resolved.content, resolved.answered_by) == ({"replicas": 5}, f"telegram:{BOB}")


@pytest.mark.parametrize(
    "tamper",
    [
        pytest.param(lambda data: "d" + data[1:], id="done-on-a-form"),
        pytest.param(lambda data: data.rsplit("|", 1)[0] + "|7", id="choice-out-of-range"),
        pytest.param(lambda data: "w" + data[1:-2] + "|0", id="write-on-a-choice-field"),
        pytest.param(lambda data: "k" + data[1:-2] + "|0", id="skip-a-required-field"),
    ],
)
async def test_tampered_form_controls_are_refused_and_change_nothing(
    runtime: Runtime, fake: FakeTelegram, tamper: Any
) -> None:
    prompt = await open_prompt(runtime, DM, DEPLOY_FORM)
    [posted] = fake.sent
    real = fake.button(posted.message_id, "1. Staging").data

    answered = await fake.answered(await fake.press(ALICE, posted.message_id, tamper(real)))

    assert answered == {"text": notices.MISMATCH, "show_alert": True}
    assert await pending(runtime, prompt.prompt_id)
    assert fake.edits == []


# URL steps ---------------------------------------------------------------------------------------------


async def test_require_url_step_shows_the_link_and_is_done_by_button(
    runtime: Runtime, fake: FakeTelegram
) -> None:
    prompt = await open_prompt(runtime, DM, CONNECT)
    [posted] = fake.sent
    assert posted.text == "Connect your GitHub account\nhttps://example.com/connect"
    link, done, decline = fake.buttons(posted.message_id)
    assert (link.text, link.url) == ("Open link", "https://example.com/connect")
    assert (done.text, decline.text) == ("✓ Done", "✗ Decline")

    answered = await press(fake, ALICE, posted.message_id, "✓ Done")

    resolved = await settled(runtime, prompt.prompt_id)
    assert answered["text"] == "Your answer was recorded: done"
    assert [a.answer for a in resolved.answers or []] == [["done"]]
    assert fake.messages[posted.message_id]["text"].endswith(f"✓ Answered: done\nMarked done by user{ALICE}")


async def test_require_url_step_done_by_typing_done(runtime: Runtime, fake: FakeTelegram) -> None:
    prompt = await open_prompt(runtime, GROUP_THREAD, CONNECT)
    [question, _buttons] = fake.sent

    await say(fake, GROUP, ALICE, "Done", reply_to=question.message_id)

    resolved = await settled(runtime, prompt.prompt_id)
    assert [a.answer for a in resolved.answers or []] == [["done"]]


@pytest.mark.parametrize("how", ["button", "typed"])
async def test_require_url_step_declined(runtime: Runtime, fake: FakeTelegram, how: str) -> None:
    prompt = await open_prompt(runtime, DM, CONNECT)
    [posted] = fake.sent

    if how == "button":
        assert (await press(fake, ALICE, posted.message_id, "✗ Decline"))["text"] == notices.DECLINED
    else:
        await say(fake, ALICE, ALICE, "decline")

    resolved = await settled(runtime, prompt.prompt_id)
    assert (resolved.prompt_state, resolved.reason_code) == (PromptState.CANCELLED, ReasonCode.DECLINED)


async def test_require_url_step_refuses_a_stranger(runtime: Runtime, fake: FakeTelegram) -> None:
    prompt = await open_prompt(runtime, GROUP_THREAD, CONNECT, started_by=ALICE)
    [question, buttons] = fake.sent

    refused = {"text": notices.NOT_ALLOWED, "show_alert": True}
    assert await press(fake, BOB, buttons.message_id, "✓ Done") == refused
    await say(fake, GROUP, BOB, "done", reply_to=question.message_id)

    assert await pending(runtime, prompt.prompt_id)
    assert fake.sent[-1].text == notices.NOT_ALLOWED


async def test_a_url_step_to_this_machine_has_no_link_button(runtime: Runtime, fake: FakeTelegram) -> None:
    await open_prompt(runtime, DM, {**CONNECT, "url": "http://localhost:8080/setup"})
    [posted] = fake.sent

    assert posted.text == "Connect your GitHub account\nhttp://localhost:8080/setup"
    assert texts(fake, posted.message_id) == ["✓ Done", "✗ Decline"]
