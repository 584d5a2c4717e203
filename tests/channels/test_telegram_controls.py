"""Native prompt controls on Telegram: a person presses the buttons the bot posted (python-telegram-bot
against the fake Bot API, the core on Redis) and the agent receives structured answers; a refused press
changes nothing and is answered privately with answerCallbackQuery."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from channels.telegram import TelegramChannel
from channels.telegram.presses import WORKING
from gateway.base.models import AgentDefinition, HumanInput, InboundMessage, PromptState
from gateway.delivery.channel import InboundSink
from gateway.process.runtime import Runtime
from gateway.rules import notices
from gateway.rules.outcomes import Received
from gateway.rules.steps import StepRequest, StepResult
from tests.channels import telegram_support
from tests.channels.telegram_support import (
    ALICE,
    BOB,
    CAROL,
    DEPLOY,
    DEPLOY_TEXT,
    GROUP,
    TOKEN,
    agent_messages,
    channel_of,
    open_prompt,
    settings_for,
    settled,
    telegram_gateway,
)
from tests.fakes.telegram import FakeTelegram

pytestmark = [
    pytest.mark.redis,
    pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning"),
]
DM = f"telegram:{ALICE}"
GROUP_THREAD = f"telegram:{GROUP}"

APPROVAL = {
    "kind": "approval",
    "questions": [{"question": "Allow db__drop to run?"}],
    "tool_call": {"name": "db__drop", "arguments": {"table": "users", "cascade": True}},
}
SECTIONS = {
    "kind": "ask_user_question",
    "questions": [
        {
            "question": "Which sections?",
            "multiSelect": True,
            "options": [{"label": "KPI cards"}, {"label": "Chart"}, {"label": "Table"}],
        }
    ],
}
BRANCH = {"kind": "text", "questions": [{"question": "Which branch?"}]}


fake = telegram_support.fake
redis_url = telegram_support.redis_url
runtime = telegram_support.runtime


async def press(fake: FakeTelegram, user_id: int, message_id: int, button: str) -> dict[str, Any]:
    """``user_id`` presses the button labelled ``button`` on that message; the bot's answer to it."""
    update = await fake.press(user_id, message_id, fake.button(message_id, button).data)
    return await fake.answered(update)


async def reply(fake: FakeTelegram, chat_id: int, user_id: int, text: str, to: int) -> dict[str, Any]:
    """``user_id`` replies to message ``to``; returns once the poller has handled the update."""
    update = await fake.say(chat_id, user_id, text, reply_to=to)
    await fake.confirmed(update["update_id"])
    return update


async def answers_of(runtime: Runtime, prompt_id: str) -> list[list[str]]:
    prompt = await settled(runtime, prompt_id)
    assert prompt.prompt_state is PromptState.ANSWERED
    return [answer.answer for answer in prompt.answers or []]


# Each kind and variant -----------------------------------------------------------------------------


@pytest.mark.parametrize(("button", "expected"), [("✅ Approve", "Approve"), ("❌ Deny", "Deny")])
async def test_an_approval_shows_the_tool_call_and_its_buttons_answer_approve_or_deny(
    runtime: Runtime, fake: FakeTelegram, button: str, expected: str
) -> None:
    prompt = await open_prompt(runtime, DM, APPROVAL)
    [posted] = fake.sent
    assert posted.text.startswith("Allow db__drop to run?\n  1. Approve\n  2. Deny\n\nTool call: db__drop\n")
    assert '"table": "users"' in posted.text and '"cascade": true' in posted.text
    assert [b.text for b in fake.buttons(posted.message_id)] == [
        "✅ Approve",
        "❌ Deny",
        notices.APPROVE_FOR_SESSION,
        "✎ Deny with reason…",
        notices.CLAIM,
    ]

    answered = await press(fake, ALICE, posted.message_id, button)

    assert answered == {"text": f"Your answer was recorded: {expected}", "show_alert": False}
    assert await answers_of(runtime, prompt.prompt_id) == [[expected]]


async def test_an_option_button_answers_with_its_label_and_the_agent_gets_structured_answers(
    runtime: Runtime, fake: FakeTelegram
) -> None:
    prompt = await open_prompt(runtime, DM, DEPLOY)
    [posted] = fake.sent

    await press(fake, ALICE, posted.message_id, "2. production")

    assert await answers_of(runtime, prompt.prompt_id) == [["production"]]
    [parked] = await agent_messages(runtime)  # nobody was waiting: the answer is the next turn
    assert parked["metadata"]["answers"] == [
        {"question": "What's the deployment target?", "question_id": "q1", "answer": ["production"]}
    ]


async def test_multi_select_ticks_live_on_the_buttons_and_submit_sends_the_ticked_labels(
    runtime: Runtime, fake: FakeTelegram
) -> None:
    prompt = await open_prompt(runtime, DM, SECTIONS)
    [posted] = fake.sent
    message = posted.message_id

    assert (await press(fake, ALICE, message, "KPI cards"))["text"] == "✓ KPI cards"
    await press(fake, ALICE, message, "Chart")
    await press(fake, ALICE, message, "Table")
    assert (await press(fake, ALICE, message, "Chart"))["text"] == "✗ Chart"

    assert [b.text for b in fake.buttons(message)] == [
        "✓ 1. KPI cards",
        "2. Chart",
        "✓ 3. Table",
        "Other…",
        "Submit",
        "Claim",
    ]
    assert (await runtime.gateway.get_prompt(prompt.prompt_id)).pending  # ticking answers nothing
    await press(fake, ALICE, message, "Submit")
    assert await answers_of(runtime, prompt.prompt_id) == [["KPI cards", "Table"]]


async def test_submit_with_nothing_ticked_answers_with_no_labels(
    runtime: Runtime, fake: FakeTelegram
) -> None:
    prompt = await open_prompt(runtime, DM, SECTIONS)
    [posted] = fake.sent

    await press(fake, ALICE, posted.message_id, "Submit")

    assert await answers_of(runtime, prompt.prompt_id) == [[]]


async def test_a_free_text_prompt_asks_with_a_force_reply_and_the_reply_is_the_answer(
    runtime: Runtime, fake: FakeTelegram
) -> None:
    prompt = await open_prompt(runtime, GROUP_THREAD, BRANCH)
    [_question, posted] = fake.sent
    assert [b.text for b in fake.buttons(posted.message_id)] == ["✎ Answer…", "Claim"]

    answered = await press(fake, ALICE, posted.message_id, "✎ Answer…")

    asked = fake.sent[-1]
    assert answered["text"] == "Reply to the message below with your answer."
    assert asked.text == f"✎ user{ALICE}, reply to this message with your answer to: Which branch?"
    assert asked.reply_markup is not None and asked.reply_markup["force_reply"] is True
    assert asked.reply_markup["selective"] is True
    [mention] = fake.messages[asked.message_id]["entities"]  # the selective reply is for the presser
    assert (mention["type"], mention["user"]["id"]) == ("text_mention", ALICE)
    await reply(fake, GROUP, ALICE, "release/2.4", to=asked.message_id)
    assert await answers_of(runtime, prompt.prompt_id) == [["release/2.4"]]


async def test_other_on_an_option_list_takes_free_text_verbatim(runtime: Runtime, fake: FakeTelegram) -> None:
    prompt = await open_prompt(runtime, GROUP_THREAD, DEPLOY)
    [_question, posted] = fake.sent

    await press(fake, ALICE, posted.message_id, "Other…")
    await reply(fake, GROUP, ALICE, "2", to=fake.sent[-1].message_id)

    # The text request's answer is free text as it stands: "2" is not mapped to the second label.
    assert await answers_of(runtime, prompt.prompt_id) == [["2"]]


async def test_a_typed_reply_still_answers_a_prompt_that_has_buttons(
    runtime: Runtime, fake: FakeTelegram
) -> None:
    prompt = await open_prompt(runtime, DM, DEPLOY)
    [posted] = fake.sent
    assert posted.text == DEPLOY_TEXT

    await reply(fake, ALICE, ALICE, "2", to=posted.message_id)

    assert await answers_of(runtime, prompt.prompt_id) == [["production"]]


# After it settles ------------------------------------------------------------------------------------


async def test_once_answered_the_prompt_message_shows_the_outcome_and_its_buttons_are_gone(
    runtime: Runtime, fake: FakeTelegram
) -> None:
    prompt = await open_prompt(runtime, DM, DEPLOY)
    [posted] = fake.sent

    await press(fake, ALICE, posted.message_id, "1. staging")
    await answers_of(runtime, prompt.prompt_id)

    by = f"Answered by user{ALICE}"  # the name Telegram gave with her press
    [edit] = [edit for edit in fake.edits if edit.message_id == posted.message_id]
    assert (edit.text, edit.reply_markup) == (f"{DEPLOY_TEXT}\n\n✓ Answered: staging\n{by}", None)
    assert fake.buttons(posted.message_id) == []
    audit = fake.sent[-1]
    assert (audit.text, audit.reply_to) == (f"✓ Answered: staging\n{by}", posted.message_id)


async def test_an_approval_says_who_approved_it_by_the_name_telegram_gave(
    runtime: Runtime, fake: FakeTelegram
) -> None:
    prompt = await open_prompt(runtime, DM, APPROVAL)
    [posted] = fake.sent

    pressed = await fake.press(
        ALICE, posted.message_id, fake.button(posted.message_id, "Approve").data, first_name="Alice"
    )
    await fake.answered(pressed)
    await settled(runtime, prompt.prompt_id)

    assert fake.messages[posted.message_id]["text"].endswith("\n\n✓ Answered: Approve\nApproved by Alice")
    assert fake.sent[-1].text == "✓ Answered: Approve\nApproved by Alice"


async def test_an_answer_given_through_the_api_names_that_identity_on_the_message_and_the_audit_line(
    runtime: Runtime, fake: FakeTelegram
) -> None:
    await runtime.store.put_agent(
        AgentDefinition(name="ops", human_input=HumanInput(approvers=["web:operator"]))
    )
    prompt = await open_prompt(runtime, DM, APPROVAL)
    [posted] = fake.sent

    await runtime.gateway.answer(prompt.prompt_id, "web:operator", text="no")
    await settled(runtime, prompt.prompt_id)

    assert fake.messages[posted.message_id]["text"].endswith("\n\n✓ Answered: Deny\nDenied by web:operator")
    assert fake.sent[-1].text == "✓ Answered: Deny\nDenied by web:operator"


async def test_when_the_run_ends_the_prompt_message_says_so_and_loses_its_buttons(
    runtime: Runtime, fake: FakeTelegram
) -> None:
    prompt = await open_prompt(runtime, DM, APPROVAL)
    [posted] = fake.sent

    await runtime.gateway.end_run(prompt.run_id)
    await settled(runtime, prompt.prompt_id)

    assert fake.messages[posted.message_id]["text"].endswith("✗ Cancelled: the run ended")
    assert fake.buttons(posted.message_id) == []


# Refused presses --------------------------------------------------------------------------------------


async def test_a_press_by_someone_not_allowed_leaves_the_prompt_pending_and_is_answered_with_an_alert(
    runtime: Runtime, fake: FakeTelegram
) -> None:
    prompt = await open_prompt(runtime, GROUP_THREAD, DEPLOY, started_by=ALICE)
    [question, posted] = fake.sent

    answered = await press(fake, BOB, posted.message_id, "1. staging")

    assert answered == {"text": notices.NOT_ALLOWED, "show_alert": True}
    await runtime.gateway.outbox.idle()
    assert (await runtime.gateway.get_prompt(prompt.prompt_id)).pending
    assert fake.sent == [question, posted] and fake.edits == []  # nothing was said in the group


async def test_ticks_by_someone_not_allowed_are_refused_and_the_buttons_stay_as_they_were(
    runtime: Runtime, fake: FakeTelegram
) -> None:
    await open_prompt(runtime, GROUP_THREAD, SECTIONS, started_by=ALICE)
    [_question, posted] = fake.sent

    answered = await press(fake, BOB, posted.message_id, "Chart")

    assert answered == {"text": notices.NOT_ALLOWED, "show_alert": True}
    assert fake.edits == []
    assert not any(b.text.startswith("✓") for b in fake.buttons(posted.message_id))


async def test_an_approver_may_press(runtime: Runtime, fake: FakeTelegram) -> None:
    await runtime.store.put_agent(
        AgentDefinition(name="ops", human_input=HumanInput(approvers=[f"telegram:{CAROL}"]))
    )
    prompt = await open_prompt(runtime, GROUP_THREAD, APPROVAL, started_by=ALICE)
    [_question, posted] = fake.sent

    await press(fake, CAROL, posted.message_id, "✅ Approve")

    resolved = await settled(runtime, prompt.prompt_id)
    assert (resolved.answered_by, [a.answer for a in resolved.answers or []]) == (
        f"telegram:{CAROL}",
        [["Approve"]],
    )


async def test_a_reply_to_a_text_request_by_someone_not_allowed_is_refused_in_reply(
    runtime: Runtime, fake: FakeTelegram
) -> None:
    prompt = await open_prompt(runtime, GROUP_THREAD, BRANCH, started_by=ALICE)
    [_question, posted] = fake.sent
    await press(fake, ALICE, posted.message_id, "✎ Answer…")
    asked = fake.sent[-1]

    bobs = await reply(fake, GROUP, BOB, "main", to=asked.message_id)

    await runtime.gateway.outbox.idle()
    assert (await runtime.gateway.get_prompt(prompt.prompt_id)).pending
    notice = fake.sent[-1]
    assert (notice.text, notice.reply_to) == (notices.NOT_ALLOWED, bobs["message"]["message_id"])
    assert await agent_messages(runtime) == []  # not queued as an ordinary message either


@pytest.mark.parametrize(("payload", "button"), [(DEPLOY, "1. staging"), (SECTIONS, "Submit")])
async def test_a_press_on_a_superseded_prompt_is_refused_privately_and_changes_nothing(
    runtime: Runtime, fake: FakeTelegram, payload: dict[str, Any], button: str
) -> None:
    old = await open_prompt(runtime, DM, payload)
    [old_message] = fake.sent
    pick = fake.button(old_message.message_id, button).data  # as a client that has not refreshed
    new = await open_prompt(runtime, DM, APPROVAL)
    await runtime.gateway.outbox.idle()
    assert fake.buttons(old_message.message_id) == []  # the old message lost its buttons

    answered = await fake.answered(await fake.press(ALICE, old_message.message_id, pick))

    assert answered == {
        "text": (
            "This prompt was cancelled (a newer prompt in this thread replaced it), so nothing was changed."
        ),
        "show_alert": True,
    }
    assert (await runtime.gateway.get_prompt(old.prompt_id)).prompt_state is PromptState.CANCELLED
    assert (await runtime.gateway.get_prompt(new.prompt_id)).pending


def _other_option(data: str) -> str:
    return data.rsplit("|", 1)[0] + "|9"


def _tick_instead(data: str) -> str:
    return "t" + data[1:]


def _unknown_prompt(data: str) -> str:
    action, _prompt_id, question, option = data.split("|")
    return f"{action}|prm_01ARZ3NDEKTSV4RRFFQ69G5FAV|{question}|{option}"


def _question_out_of_range(data: str) -> str:
    action, prompt_id, _question, option = data.split("|")
    return f"{action}|{prompt_id}|3|{option}"


@pytest.mark.parametrize(
    ("tamper", "notice"),
    [
        pytest.param(_other_option, notices.MISMATCH, id="option-index-out-of-range"),
        pytest.param(_question_out_of_range, notices.MISMATCH, id="question-index-out-of-range"),
        pytest.param(_tick_instead, notices.MISMATCH, id="action-that-does-not-fit-the-question"),
        pytest.param(_unknown_prompt, notices.UNKNOWN_PROMPT, id="prompt-nobody-raised"),
        pytest.param(lambda data: data + "|0", notices.MISMATCH, id="extra-field"),
        pytest.param(lambda data: "approve", notices.MISMATCH, id="not-our-data"),
    ],
)
async def test_tampered_callback_data_is_refused_and_changes_nothing(
    runtime: Runtime, fake: FakeTelegram, tamper: Callable[[str], str], notice: str
) -> None:
    prompt = await open_prompt(runtime, DM, DEPLOY)
    [posted] = fake.sent
    real = fake.button(posted.message_id, "1. staging").data

    answered = await fake.answered(await fake.press(ALICE, posted.message_id, tamper(real)))

    assert answered == {"text": notice, "show_alert": True}
    await runtime.gateway.outbox.idle()
    assert (await runtime.gateway.get_prompt(prompt.prompt_id)).pending
    assert fake.edits == [] and fake.sent == [posted]
    assert await agent_messages(runtime) == []


async def test_a_button_of_a_prompt_in_another_chat_is_refused(runtime: Runtime, fake: FakeTelegram) -> None:
    elsewhere = await open_prompt(runtime, GROUP_THREAD, DEPLOY, started_by=ALICE)
    [_question, group_message] = fake.sent
    await open_prompt(runtime, DM, DEPLOY)
    [dm_message] = fake.sent[2:]
    data = fake.button(group_message.message_id, "1. staging").data

    answered = await fake.answered(await fake.press(ALICE, dm_message.message_id, data))

    assert answered == {"text": notices.MISMATCH, "show_alert": True}
    assert (await runtime.gateway.get_prompt(elsewhere.prompt_id)).pending


async def test_a_press_delivered_twice_answers_once(fake: FakeTelegram, redis_url: str) -> None:
    async with telegram_gateway(fake, redis_url) as first:
        prompt = await open_prompt(first, DM, DEPLOY)
        [posted] = fake.sent
        update = await fake.press(ALICE, posted.message_id, fake.button(posted.message_id, "1. staging").data)
        await fake.answered(update)
        await fake.confirmed(update["update_id"])
        await settled(first, prompt.prompt_id)
    fake.replay_from(update["update_id"])  # as if the poller died before confirming the offset
    del fake.press_answers[update["callback_query"]["id"]]

    async with telegram_gateway(fake, redis_url) as second:
        again = await fake.answered(update)
        await second.gateway.outbox.idle()

    assert again == {"text": notices.DUPLICATE, "show_alert": False}
    assert sum(sent.text.startswith("✓ Answered: staging") for sent in fake.sent) == 1


class SlowCore:
    """The core's inbound side, slow to take an answer (a busy Redis)."""

    def __init__(self, sink: InboundSink, delay: float) -> None:
        self.sink = sink
        self.delay = delay

    async def step(self, request: StepRequest) -> StepResult:
        await asyncio.sleep(self.delay)
        return await self.sink.step(request)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.sink, name)


async def test_a_press_the_core_is_slow_to_take_is_acknowledged_in_time_and_still_answers(
    fake: FakeTelegram, redis_url: str
) -> None:
    channel = TelegramChannel(TOKEN, base_url=fake.base_url, press_ack_deadline=0.05)
    runtime = Runtime.build(settings_for(fake, redis_url), channels=[channel])
    await runtime.start()
    try:
        assert channel.presses.sink is not None
        channel.presses.sink = SlowCore(channel.presses.sink, delay=1.0)
        prompt = await open_prompt(runtime, DM, DEPLOY)
        [posted] = fake.sent

        answered = await press(fake, ALICE, posted.message_id, "1. staging")

        assert answered == {"text": WORKING, "show_alert": False}
        assert (await runtime.gateway.get_prompt(prompt.prompt_id)).pending  # acknowledged first
        assert await answers_of(runtime, prompt.prompt_id) == [["staging"]]
    finally:
        await runtime.stop()


class CoreCalls:
    """Our inbound sink, counting each call a channel makes into the core."""

    def __init__(self, sink: InboundSink) -> None:
        self.sink = sink
        self.calls: list[str] = []

    async def receive(self, message: InboundMessage) -> Received:
        self.calls.append("receive")
        return await self.sink.receive(message)

    async def step(self, request: StepRequest) -> StepResult:
        self.calls.append("step")
        return await self.sink.step(request)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.sink, name)


async def test_a_reply_to_the_bots_own_message_calls_into_the_core_once(
    fake: FakeTelegram, runtime: Runtime
) -> None:
    channel = channel_of(runtime)
    assert channel.presses.sink is not None and channel._context is not None
    counted = CoreCalls(channel.presses.sink)
    channel.presses.sink = counted
    object.__setattr__(channel._context, "sink", counted)
    prompt = await open_prompt(runtime, DM, DEPLOY)
    [posted] = fake.sent

    await reply(fake, ALICE, ALICE, "staging", to=posted.message_id)

    assert counted.calls == ["step"]
    assert await answers_of(runtime, prompt.prompt_id) == [["staging"]]
