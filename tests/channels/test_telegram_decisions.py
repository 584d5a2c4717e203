"""The whole decision on Telegram (contract §9), end to end: python-telegram-bot against the fake Bot API,
the core on Redis.

Telegram has no forms, so an approval's card offers Deny with reason… (a ForceReply asking for the reason,
whose reply denies with it as the note) and says how a typed reply answers: any reply but an approve word
denies with its words, and ``edit`` lines change the call where it may be edited. An approval that needs
several approvers shows each vote short of enough as a line in the chat.
"""

from __future__ import annotations

from typing import Any

import pytest

from channels.telegram.controls import APPROVE_TEXT, DENY_TEXT, DENY_WITH_REASON
from gateway.base.models import AgentDefinition, HumanInput, Prompt, PromptState, ToolCall
from gateway.process.runtime import Runtime
from gateway.rules import notices
from tests.channels import telegram_support
from tests.channels.telegram_support import ALICE, BOB, CAROL, GROUP, open_prompt, settled
from tests.fakes.telegram import FakeTelegram, Sent
from tests.support.session_grants import asked_again, grants_of

pytestmark = [
    pytest.mark.redis,
    pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning"),
]
GROUP_THREAD = f"telegram:{GROUP}"
DM = f"telegram:{ALICE}"

DROP = {
    "kind": "approval",
    "questions": [{"question": "Allow db__drop to run?"}],
    "tool_call": {"name": "db__drop", "arguments": {"database": "staging", "table": "users"}},
}
CALL = ToolCall(name="deploy", arguments={"service": "web", "replicas": 2})
DEPLOY = {
    "kind": "approval",
    "questions": [{"question": "Allow deploy to run?"}],
    "tool_call": CALL.model_dump(mode="json"),
    "editable": True,
    "input_schema": {
        "type": "object",
        "properties": {"service": {"type": "string"}, "replicas": {"type": "integer", "maximum": 10}},
    },
}

fake = telegram_support.fake
redis_url = telegram_support.redis_url
runtime = telegram_support.runtime


async def in_group(runtime: Runtime, fake: FakeTelegram, payload: dict[str, Any]) -> tuple[Prompt, Sent]:
    """Alice's run asks ``payload`` in the group: the prompt and the message with its buttons."""
    prompt = await open_prompt(runtime, GROUP_THREAD, payload, started_by=ALICE)
    [_question, controls] = fake.sent
    return prompt, controls


async def press(fake: FakeTelegram, user_id: int, message_id: int, button: str) -> dict[str, Any]:
    """``user_id`` presses the button labelled ``button``; the bot's answer to the press."""
    update = await fake.press(user_id, message_id, fake.button(message_id, button).data)
    return await fake.answered(update)


async def write(runtime: Runtime, fake: FakeTelegram, user_id: int, text: str, to: int | None = None) -> None:
    """``user_id`` writes in the group (replying to message ``to``); returns once it was handled."""
    update = await fake.say(GROUP, user_id, text, reply_to=to)
    await fake.confirmed(update["update_id"])
    await runtime.gateway.outbox.idle()


async def now(runtime: Runtime, prompt: Prompt) -> Prompt:
    return await runtime.gateway.get_prompt(prompt.prompt_id)


def texts(fake: FakeTelegram) -> list[str]:
    return [sent.text for sent in fake.sent]


async def agents(runtime: Runtime, prompt: Prompt) -> dict[str, Any]:
    """The prompt as the agent waiting on it gets it."""
    return (await runtime.gateway.wait_prompt(prompt.prompt_id, 5.0)).public()


def approvers(runtime: Runtime, *identities: str) -> Any:
    return runtime.store.put_agent(
        AgentDefinition(name="ops", human_input=HumanInput(approvers=list(identities)))
    )


# The card ----------------------------------------------------------------------------------------------


async def test_approval_card_offers_a_deny_with_reason_and_says_how_a_reply_answers(
    runtime: Runtime, fake: FakeTelegram
) -> None:
    _, controls = await in_group(runtime, fake, DROP)
    assert [button.text for button in fake.buttons(controls.message_id)] == [
        APPROVE_TEXT,
        DENY_TEXT,
        notices.APPROVE_FOR_SESSION,
        DENY_WITH_REASON,
        notices.CLAIM,
    ]
    assert controls.text.endswith(notices.approval_hint(editable=False))


async def test_editable_approval_card_says_edits_are_typed(runtime: Runtime, fake: FakeTelegram) -> None:
    await open_prompt(runtime, DM, DEPLOY)
    [card] = fake.sent  # in a private chat the question and its buttons are one message
    assert card.text.startswith("Allow deploy to run?\n  1. Approve\n  2. Deny\n\nTool call: deploy\n")
    assert card.text.endswith(notices.approval_hint(editable=True))
    assert "reply edit" in card.text
    assert DENY_WITH_REASON in [button.text for button in fake.buttons(card.message_id)]


# Approve for this session -----------------------------------------------------------------------------


async def test_approve_for_this_session_approves_and_grants_the_exact_call_for_the_run(
    runtime: Runtime, fake: FakeTelegram
) -> None:
    await approvers(runtime, f"telegram:{BOB}")
    prompt, controls = await in_group(runtime, fake, DROP)
    refused = await press(fake, CAROL, controls.message_id, notices.APPROVE_FOR_SESSION)
    assert refused == {"text": notices.NOT_ALLOWED, "show_alert": True}
    assert await grants_of(runtime, prompt) == []

    answer = await press(fake, BOB, controls.message_id, notices.APPROVE_FOR_SESSION)
    approved = await settled(runtime, prompt.prompt_id)
    assert (approved.answered_by, approved.answers[0].answer) == (f"telegram:{BOB}", ["Approve"])
    [grant] = await grants_of(runtime, prompt)
    assert (grant.created_by, grant.prompt_id) == (f"telegram:{BOB}", prompt.prompt_id)
    assert grant.grant_id in answer["text"]
    assert await asked_again(runtime, prompt) == grant.by


# Deny with a reason --------------------------------------------------------------------------------------


async def test_deny_with_reason_asks_for_it_and_the_reply_denies_with_it_as_the_note(
    runtime: Runtime, fake: FakeTelegram
) -> None:
    prompt, controls = await in_group(runtime, fake, DROP)

    answered = await press(fake, ALICE, controls.message_id, DENY_WITH_REASON)
    assert answered == {"text": notices.REPLY_BELOW, "show_alert": False}
    asked = fake.sent[-1]
    assert asked.text == notices.ask_text(
        f"user{ALICE}", "Allow db__drop to run?", await now(runtime, prompt)
    )
    assert "reason for denying" in asked.text
    assert asked.reply_markup is not None and asked.reply_markup["force_reply"] is True
    assert (await now(runtime, prompt)).pending  # asking answers nothing

    await write(runtime, fake, ALICE, "use the staging copy instead", to=asked.message_id)

    denied = await agents(runtime, prompt)
    assert (denied["answers"][0]["answer"], denied["note"]) == (["Deny"], "use the staging copy instead")
    assert denied["answered_by"] == f"telegram:{ALICE}"
    assert fake.buttons(controls.message_id) == []  # the card shows how it ended, without buttons


async def test_a_blank_reason_is_refused_and_the_approval_stays_open(
    runtime: Runtime, fake: FakeTelegram
) -> None:
    prompt, controls = await in_group(runtime, fake, DROP)
    await press(fake, ALICE, controls.message_id, DENY_WITH_REASON)
    asked = fake.sent[-1]

    await write(runtime, fake, ALICE, "   ", to=asked.message_id)

    assert fake.sent[-1].text == notices.EMPTY_TEXT
    assert (await now(runtime, prompt)).pending


async def test_a_typed_reply_that_is_not_an_approve_word_denies_with_its_words_as_the_note(
    runtime: Runtime, fake: FakeTelegram
) -> None:
    prompt, _ = await in_group(runtime, fake, DROP)
    await write(runtime, fake, ALICE, "not on a Friday")
    denied = await agents(runtime, prompt)
    assert (denied["answers"][0]["answer"], denied["note"]) == (["Deny"], "not on a Friday")


# Approve with edits (typed: Telegram has no forms) --------------------------------------------------------


async def test_typed_edit_lines_approve_the_call_as_edited(runtime: Runtime, fake: FakeTelegram) -> None:
    prompt, _ = await in_group(runtime, fake, DEPLOY)
    await write(runtime, fake, ALICE, "edit replicas: 5")
    approved = await agents(runtime, prompt)
    assert approved["answers"][0]["answer"] == ["Approve"]
    assert approved["approved_call"] == {"name": "deploy", "arguments": {"service": "web", "replicas": 5}}
    assert approved["tool_call"] == CALL.model_dump(mode="json")


async def test_typed_edit_the_schema_refuses_leaves_the_approval_open_with_the_cores_reason(
    runtime: Runtime, fake: FakeTelegram
) -> None:
    prompt, _ = await in_group(runtime, fake, DEPLOY)
    await write(runtime, fake, ALICE, 'edit {"service": "web", "replicas": 12}')

    still = await now(runtime, prompt)
    assert (still.prompt_state, still.approved_call, still.note) == (PromptState.PENDING, None, None)
    told = fake.sent[-1]
    assert told.text.startswith("Not taken: ") and "12 is greater than the maximum of 10" in told.text
    assert told.text.endswith("The approval is still open.")


# Who may decide ------------------------------------------------------------------------------------------


async def test_someone_not_allowed_can_neither_ask_for_nor_give_a_reason(
    runtime: Runtime, fake: FakeTelegram
) -> None:
    await approvers(runtime, f"telegram:{BOB}")
    prompt, controls = await in_group(runtime, fake, DROP)

    refused = await press(fake, CAROL, controls.message_id, DENY_WITH_REASON)
    assert refused == {"text": notices.NOT_ALLOWED, "show_alert": True}
    await press(fake, BOB, controls.message_id, DENY_WITH_REASON)
    bobs_request = fake.sent[-1]

    await write(runtime, fake, CAROL, "I say no", to=bobs_request.message_id)  # a real user, not an approver
    assert fake.sent[-1].text == notices.NOT_ALLOWED
    still = await now(runtime, prompt)
    assert (still.prompt_state, still.note, still.votes) == (PromptState.PENDING, None, [])

    await write(runtime, fake, BOB, "wrong database", to=bobs_request.message_id)
    denied = await settled(runtime, prompt.prompt_id)
    assert (denied.answered_by, denied.note) == (f"telegram:{BOB}", "wrong database")


# Several approvers ---------------------------------------------------------------------------------------


async def test_two_approvers_each_vote_shows_as_a_line_until_enough_approve(
    runtime: Runtime, fake: FakeTelegram
) -> None:
    await approvers(runtime, f"telegram:{BOB}")
    prompt, controls = await in_group(runtime, fake, {**DROP, "approvals": 2})

    answered = await press(fake, ALICE, controls.message_id, APPROVE_TEXT)
    await runtime.gateway.outbox.idle()
    voted = await now(runtime, prompt)
    assert voted.pending and [vote.by for vote in voted.votes] == [f"telegram:{ALICE}"]
    assert answered["text"] == notices.voted(voted)[:200]
    assert texts(fake)[-1] == f"Approved 1 of 2: user{ALICE}"  # by first name, as the press showed it
    assert fake.buttons(controls.message_id) != []  # still open for the second approver

    again = await press(fake, ALICE, controls.message_id, APPROVE_TEXT)
    assert again == {"text": notices.ALREADY_VOTED, "show_alert": True}

    await press(fake, BOB, controls.message_id, APPROVE_TEXT)
    approved = await settled(runtime, prompt.prompt_id)
    assert approved.prompt_state is PromptState.ANSWERED
    assert [vote.by for vote in approved.votes] == [f"telegram:{ALICE}", f"telegram:{BOB}"]
    assert sum(text.startswith("Approved 1 of 2") for text in texts(fake)) == 1
    assert fake.buttons(controls.message_id) == []
