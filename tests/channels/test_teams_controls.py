"""Prompts in Teams, end to end: the Teams SDK's models and conversation client against the fake Bot
Framework, through the real Runtime.

Prompts are Adaptive Cards; presses are ``adaptiveCard/action`` invokes made on the card the fake received,
with the card's own inputs, the way a person would press them, and answered with the invoke response.
Payload shapes from the public docs: "Send and receive activities" (Bot Framework REST), "Work with
Universal Actions for Adaptive Cards" (Teams platform), "Adaptive Card Input.ChoiceSet/Input.Text".
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import quote

import pytest

from gateway.base.errors import GatewayError
from gateway.base.ids import parse_thread_id
from gateway.base.models import (
    Option,
    PromptKind,
    PromptRequest,
    PromptState,
    Question,
    ToolCall,
)
from gateway.delivery.channel import ChannelError
from gateway.rules import notices
from gateway.rules.mapper import Unanswered
from gateway.rules.render import message_item
from tests.channels.teams_support import (
    ALICE,
    BOB,
    CHANNEL_THREAD,
    EVE,
    IN_CHANNEL,
    IN_PERSONAL,
    PERSONAL,
    TeamsGateway,
    fake_bot_framework,
    teams_gateway,
)
from tests.fakes.teams import identity

DROP = PromptRequest(
    kind=PromptKind.APPROVAL,
    questions=[Question(question="Allow db__drop to run?")],
    tool_call=ToolCall(name="db__drop", arguments={"database": "staging", "table": "users"}),
)
TARGET = PromptRequest(
    kind=PromptKind.ASK_USER_QUESTION,
    questions=[
        Question(
            question="What's the deployment target?",
            options=[
                Option(label="staging", description="push to staging.example.com"),
                Option(label="production", description="push to www.example.com"),
            ],
        )
    ],
)
SECTIONS = PromptRequest(
    kind=PromptKind.ASK_USER_QUESTION,
    questions=[
        Question(
            question="Which sections?",
            multi_select=True,
            options=[Option(label="KPI cards"), Option(label="Chart"), Option(label="Table")],
        )
    ],
)
THREAD = f"teams:{CHANNEL_THREAD}"
CHAT = f"teams:{PERSONAL}"


@pytest.fixture
async def gw(real_redis: str) -> AsyncIterator[TeamsGateway]:
    async with fake_bot_framework() as fake, teams_gateway(fake, real_redis) as gateway:
        yield gateway


def _answers(prompt: Any) -> list[list[str]]:
    return [answer.answer for answer in prompt.answers or []]


# Text answers --------------------------------------------------------------------------------------


async def test_a_typed_reply_in_a_channel_thread_answers_and_the_card_is_posted_into_that_thread(
    gw: TeamsGateway,
) -> None:
    prompt = await gw.ask(THREAD, DROP)
    card = gw.card_of(prompt)
    assert card.conversation_id == CHANNEL_THREAD
    assert quote(CHANNEL_THREAD, safe="") in card.raw_path  # the id is percent-encoded in the path
    assert "Allow db__drop to run?" in card.text and "db__drop" in card.text
    assert (await gw.say(IN_CHANNEL, "approve")).status_code == 200
    answered = await gw.prompt(prompt.prompt_id)
    assert (answered.prompt_state, _answers(answered)) == (PromptState.ANSWERED, [["Approve"]])
    assert answered.answered_by == identity(ALICE)


async def test_a_typed_reply_in_a_personal_chat_answers(gw: TeamsGateway) -> None:
    prompt = await gw.ask(CHAT, TARGET)
    assert gw.card_of(prompt).conversation_id == PERSONAL
    assert (await gw.say(IN_PERSONAL, "2")).status_code == 200
    assert _answers(await gw.prompt(prompt.prompt_id)) == [["production"]]


async def test_a_message_while_no_prompt_is_open_reaches_the_agent_once_however_often_delivered(
    gw: TeamsGateway,
) -> None:
    activity = gw.fake.message(IN_CHANNEL, ALICE, "what's the status?", mention=True)
    assert (await gw.deliver(activity)).status_code == 200
    assert (await gw.deliver(activity)).status_code == 200
    [entry] = await gw.agent_feed()
    assert (entry["thread_id"], entry["text"]) == (THREAD, "what's the status?")


async def test_agent_messages_and_the_audit_item_go_into_the_thread(gw: TeamsGateway) -> None:
    await gw.runtime.gateway.channels.for_thread(parse_thread_id(THREAD)).post(
        parse_thread_id(THREAD), message_item("**Deployed** to staging")
    )
    [posted] = gw.fake.posts
    assert (posted.body["text"], posted.body["textFormat"]) == ("**Deployed** to staging", "markdown")


# Buttons -------------------------------------------------------------------------------------------


async def test_a_button_answers_and_the_card_then_shows_the_outcome_and_who_with_no_controls(
    gw: TeamsGateway,
) -> None:
    prompt = await gw.ask(THREAD, TARGET)
    card = gw.card_of(prompt)
    reply = await gw.press(card, "production", ALICE)
    assert reply["type"] == "application/vnd.microsoft.card.adaptive"
    texts = [element.get("text") for element in reply["value"]["body"]]
    assert "Answered by Alice" in texts
    assert "actions" not in reply["value"]
    assert _answers(await gw.prompt(prompt.prompt_id)) == [["production"]]
    await gw.settled()
    assert card.updates, "the card was updated for everyone"
    assert card.actions() == [] and card.inputs() == {}
    assert "✓ Answered: production" in card.text and "Answered by Alice" in card.text
    [audit] = [posted for posted in gw.fake.posts if posted is not card]
    assert audit.body["summary"] == "✓ Answered: production"
    by = audit.card["body"][-1] if audit.card else {}
    assert (audit.text, by.get("isSubtle")) == ("✓ Answered: production\nAnswered by Alice", True)


@pytest.mark.parametrize(("label", "line"), [("Approve", "Approved by Alice"), ("Deny", "Denied by Alice")])
async def test_an_approval_says_who_approved_or_denied_it(gw: TeamsGateway, label: str, line: str) -> None:
    prompt = await gw.ask(THREAD, DROP)
    card = gw.card_of(prompt)
    reply = await gw.press(card, label, ALICE)
    assert [element.get("text") for element in reply["value"]["body"]][-1] == line
    await gw.settled()
    assert card.text.endswith(f"✓ Answered: {label}\n{line}")
    assert gw.fake.posts[-1].text == f"✓ Answered: {label}\n{line}"


async def test_an_answer_given_through_the_api_names_that_identity(gw: TeamsGateway) -> None:
    await gw.approvers("web:operator")
    prompt = await gw.ask(THREAD, TARGET)
    card = gw.card_of(prompt)
    await gw.runtime.gateway.answer(prompt.prompt_id, "web:operator", text="2")
    await gw.settled()
    assert card.text.endswith("✓ Answered: production\nAnswered by web:operator")
    assert gw.fake.posts[-1].text == "✓ Answered: production\nAnswered by web:operator"


async def test_approve_and_deny_are_buttons(gw: TeamsGateway) -> None:
    prompt = await gw.ask(THREAD, DROP)
    card = gw.card_of(prompt)
    assert [action["title"] for action in card.actions()] == [
        "Approve",
        "Deny",
        notices.APPROVE_FOR_SESSION,
        "Deny with reason…",
        notices.CLAIM,
    ]
    await gw.press(card, "Deny", ALICE)
    assert _answers(await gw.prompt(prompt.prompt_id)) == [["Deny"]]


async def test_a_press_on_a_settled_card_changes_nothing_and_says_how_it_settled(gw: TeamsGateway) -> None:
    prompt = await gw.ask(THREAD, TARGET)
    card = gw.card_of(prompt)
    await gw.press(card, "staging", ALICE)
    reply = await gw.press(card, "production", ALICE)
    assert reply["type"] == "application/vnd.microsoft.activity.message"
    assert "already answered (staging)" in reply["value"]
    assert _answers(await gw.prompt(prompt.prompt_id)) == [["staging"]]


# Choices, "Other", several questions ---------------------------------------------------------------


async def test_a_multi_select_is_a_choice_set_sent_with_send(gw: TeamsGateway) -> None:
    prompt = await gw.ask(THREAD, SECTIONS)
    card = gw.card_of(prompt)
    assert card.inputs()["q0"]["isMultiSelect"] is True
    await gw.press(card, "Send", ALICE, {"q0": "0,2"})
    assert _answers(await gw.prompt(prompt.prompt_id)) == [["KPI cards", "Table"]]


async def test_other_text_answers_a_single_choice(gw: TeamsGateway) -> None:
    prompt = await gw.ask(THREAD, TARGET)
    await gw.press(gw.card_of(prompt), "Send", ALICE, {"o0": "canary"})
    assert _answers(await gw.prompt(prompt.prompt_id)) == [["canary"]]


async def test_other_text_joins_a_multi_select(gw: TeamsGateway) -> None:
    prompt = await gw.ask(THREAD, SECTIONS)
    await gw.press(gw.card_of(prompt), "Send", ALICE, {"q0": "1", "o0": "Heatmap"})
    assert _answers(await gw.prompt(prompt.prompt_id)) == [["Chart", "Heatmap"]]


async def test_several_questions_are_answered_in_one_card(gw: TeamsGateway) -> None:
    request = PromptRequest(
        kind=PromptKind.ASK_USER_QUESTION,
        questions=[*TARGET.questions, Question(question="Anything to add?")],
    )
    prompt = await gw.ask(THREAD, request)
    card = gw.card_of(prompt)
    assert set(card.inputs()) == {"q0", "o0", "o1"}
    await gw.press(card, "Send", ALICE, {"q0": "1", "o1": "ship it"})
    assert _answers(await gw.prompt(prompt.prompt_id)) == [["production"], ["ship it"]]


@pytest.mark.parametrize(
    ("inputs", "notice"),
    [
        ({"q0": "0", "o0": "canary"}, notices.UNANSWERED[Unanswered.BOTH]),
        ({"q0": "0", "o0": "", "o1": ""}, "Type an answer."),
    ],
    ids=["both", "empty-text"],
)
async def test_an_unfit_set_of_inputs_is_refused_privately_and_the_prompt_stays_pending(
    gw: TeamsGateway, inputs: dict[str, str], notice: str
) -> None:
    request = PromptRequest(
        kind=PromptKind.ASK_USER_QUESTION, questions=[*TARGET.questions, Question(question="Why?")]
    )
    prompt = await gw.ask(THREAD, request)
    reply = await gw.press(gw.card_of(prompt), "Send", ALICE, inputs)
    assert reply == {"statusCode": 200, "type": "application/vnd.microsoft.activity.message", "value": notice}
    assert (await gw.prompt(prompt.prompt_id)).pending


@pytest.mark.parametrize(
    "inputs",
    [{"q0": "7"}, {"q0": "0,1"}, {"q0": "-1"}, {"q0": "x"}],
    ids=["out-of-range", "two-for-single", "negative", "not-a-number"],
)
async def test_a_forged_choice_is_refused_before_the_core(gw: TeamsGateway, inputs: dict[str, str]) -> None:
    request = PromptRequest(
        kind=PromptKind.ASK_USER_QUESTION, questions=[*TARGET.questions, Question(question="Why?")]
    )
    prompt = await gw.ask(THREAD, request)
    reply = await gw.press(gw.card_of(prompt), "Send", ALICE, {**inputs, "o1": "because"})
    assert "does not match" in reply["value"]
    assert (await gw.prompt(prompt.prompt_id)).pending


# Who may answer, duplicates ------------------------------------------------------------------------


async def test_a_strangers_press_is_refused_privately_and_the_prompt_stays_pending(gw: TeamsGateway) -> None:
    prompt = await gw.ask(THREAD, TARGET)
    card = gw.card_of(prompt)
    reply = await gw.press(card, "production", EVE)
    assert reply == {
        "statusCode": 200,
        "type": "application/vnd.microsoft.activity.message",
        "value": notices.NOT_ALLOWED,
    }
    assert (await gw.prompt(prompt.prompt_id)).pending
    await gw.settled()
    assert len(gw.fake.posts) == 1 and card.updates == []  # nothing said in the thread, the card as it was


async def test_an_approver_may_answer(gw: TeamsGateway) -> None:
    await gw.approvers(identity(BOB))
    prompt = await gw.ask(THREAD, TARGET)
    await gw.press(gw.card_of(prompt), "staging", BOB)
    answered = await gw.prompt(prompt.prompt_id)
    assert (_answers(answered), answered.answered_by) == ([["staging"]], identity(BOB))


async def test_a_press_delivered_twice_resolves_once(gw: TeamsGateway) -> None:
    prompt = await gw.ask(THREAD, TARGET)
    invoke = gw.fake.press(gw.card_of(prompt), "production", ALICE)
    first = await gw.deliver(invoke)
    again = await gw.deliver(invoke)
    assert first.json()["type"] == "application/vnd.microsoft.card.adaptive"
    assert again.json()["value"] == notices.DUPLICATE
    await gw.settled()
    audits = [posted for posted in gw.fake.posts if posted.text.startswith("✓ Answered")]
    assert len(audits) == 1


async def test_a_press_from_another_conversation_is_refused(gw: TeamsGateway) -> None:
    prompt = await gw.ask(THREAD, TARGET)
    card = gw.card_of(prompt)
    invoke = gw.fake.press(card, "production", ALICE)
    invoke["conversation"] = {"id": PERSONAL, "conversationType": "personal"}
    reply = (await gw.deliver(invoke)).json()
    assert "does not match" in reply["value"]
    assert (await gw.prompt(prompt.prompt_id)).pending


# Failures: unavailable, rate limits, restarts ------------------------------------------------------


async def test_a_card_that_cannot_be_posted_is_approval_unavailable_not_a_denial(gw: TeamsGateway) -> None:
    gw.fake.fail(500)
    with pytest.raises(GatewayError) as raised:
        await gw.ask(THREAD, DROP)
    assert (raised.value.code, raised.value.status) == ("PROMPT_UNAVAILABLE", 503)
    assert raised.value.message.startswith("Approval unavailable")


async def test_a_short_rate_limit_is_waited_out(gw: TeamsGateway) -> None:
    gw.fake.fail(429, retry_after="0")
    prompt = await gw.ask(THREAD, TARGET)
    assert prompt.pending
    assert [method for method, _ in gw.fake.calls] == ["POST", "POST"]
    assert len(gw.fake.posts) == 1


async def test_a_long_rate_limit_is_raised_with_its_retry_after(gw: TeamsGateway) -> None:
    gw.fake.fail(429, retry_after="30")
    with pytest.raises(ChannelError) as raised:
        await gw.channel.post(parse_thread_id(THREAD), message_item("hello"))
    assert raised.value.retry_after == 30
    assert len(gw.fake.calls) == 1  # not hammered


async def test_the_token_is_fetched_once_and_reused(gw: TeamsGateway) -> None:
    for text in ("one", "two", "three"):
        await gw.channel.post(parse_thread_id(THREAD), message_item(text))
    assert len(gw.fake.token_requests) == 1
    assert gw.fake.unauthorized_calls == 0


async def test_a_restarted_gateway_answers_a_press_on_an_old_card(real_redis: str) -> None:
    async with fake_bot_framework() as fake:
        async with teams_gateway(fake, real_redis) as first:
            prompt = await first.ask(THREAD, TARGET)
            card = first.card_of(prompt)
        async with teams_gateway(fake, real_redis) as second:
            reply = await second.press(card, "production", ALICE)
            assert reply["type"] == "application/vnd.microsoft.card.adaptive"
            assert _answers(await second.prompt(prompt.prompt_id)) == [["production"]]
            await second.settled()
            assert card.actions() == []
