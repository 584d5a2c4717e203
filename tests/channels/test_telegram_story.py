"""The Telegram story with long polling: python-telegram-bot against the fake Bot API, on a real Redis."""

from __future__ import annotations

from typing import Any, cast

import pytest
import redis.asyncio

from channels.telegram import TelegramChannel
from gateway.base.errors import GatewayError
from gateway.base.models import AgentDefinition, HumanInput, InboundMessage, PromptState
from gateway.decision.service import Received
from gateway.delivery.channel import ChannelContext, InboundSink
from gateway.delivery.lease import Lease, lease_name
from gateway.process.runtime import Runtime
from gateway.rules import notices
from gateway.store import keys
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
from tests.support.new_kinds import FORM, FORM_TEXT, URL, URL_TEXT
from tests.support.platforms import build_channel

pytestmark = [
    pytest.mark.redis,
    # python-telegram-bot itself warns when it builds a RetryAfter (its int → timedelta migration)
    pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning"),
]
DM = f"telegram:{ALICE}"
GROUP_THREAD = f"telegram:{GROUP}"


fake = telegram_support.fake
redis_url = telegram_support.redis_url
runtime = telegram_support.runtime


async def answer(
    fake: FakeTelegram, chat_id: int, user_id: int, text: str | None, **kwargs: Any
) -> dict[str, Any]:
    """Someone writes in the chat; returns once the poller has handled (and confirmed) the update."""
    update = await fake.say(chat_id, user_id, text, **kwargs)
    await fake.confirmed(update["update_id"])
    return update


# The story ------------------------------------------------------------------------------------------


async def test_a_message_with_no_prompt_open_reaches_the_agent_feed(
    runtime: Runtime, fake: FakeTelegram
) -> None:
    await answer(fake, ALICE, ALICE, "deploy the release branch")

    [message] = await agent_messages(runtime)
    assert (message["thread_id"], message["sender"], message["text"]) == (
        DM,
        f"telegram:{ALICE}",
        "deploy the release branch",
    )


async def test_a_prompt_is_posted_as_the_seed_text_with_its_buttons_in_reply_to_the_turn(
    runtime: Runtime, fake: FakeTelegram
) -> None:
    turn = await answer(fake, ALICE, ALICE, "deploy it")

    await open_prompt(runtime, DM, DEPLOY)

    [posted] = fake.sent
    assert posted.chat_id == ALICE
    assert posted.text == DEPLOY_TEXT  # the numbered options stay, so a typed 2 still answers
    assert [b.text for b in fake.buttons(posted.message_id)] == [
        "1. staging",
        "2. production",
        "Other…",
        "Claim",
    ]
    assert posted.reply_to == turn["message"]["message_id"]


async def test_a_reply_of_2_resolves_to_the_second_label_and_the_audit_replies_to_the_prompt(
    runtime: Runtime, fake: FakeTelegram
) -> None:
    prompt = await open_prompt(runtime, DM, DEPLOY)
    [posted] = fake.sent

    await answer(fake, ALICE, ALICE, "2", reply_to=posted.message_id)

    resolved = await settled(runtime, prompt.prompt_id)
    assert resolved.prompt_state is PromptState.ANSWERED
    assert [a.answer for a in resolved.answers or []] == [["production"]]
    assert resolved.answered_by == f"telegram:{ALICE}"
    audit = fake.sent[-1]
    assert (audit.text, audit.reply_to, audit.chat_id) == (
        f"✓ Answered: production\nAnswered by user{ALICE}",
        posted.message_id,
        ALICE,
    )
    [parked] = await agent_messages(runtime)  # nobody was waiting: the answer becomes the next turn
    assert (parked["tag"], parked["text"]) == ("parked_answer", "production")


MULTI = {
    "kind": "ask_user_question",
    "questions": [
        {
            "question": "Which sections?",
            "multiSelect": True,
            "options": [{"label": "KPI cards"}, {"label": "Chart"}, {"label": "Table"}],
        }
    ],
}
APPROVAL = {"kind": "approval", "questions": [{"question": "Allow db__drop to run?"}]}
TEXT = {"kind": "text", "questions": [{"question": "Which branch?"}]}


@pytest.mark.parametrize(
    ("payload", "reply", "expected"),
    [
        pytest.param(DEPLOY, "2", ["production"], id="bare-number-picks-nth-label"),
        pytest.param(DEPLOY, "Production", ["production"], id="label-matches-case-insensitively"),
        pytest.param(DEPLOY, "canary first", ["canary first"], id="other-text-is-kept-verbatim"),
        pytest.param(APPROVAL, " Yes ", ["Approve"], id="approve-token"),
        pytest.param(APPROVAL, "not now", ["Deny"], id="non-token-denies"),
        pytest.param(MULTI, "1, 3", ["KPI cards", "Table"], id="multi-select-numbers"),
        pytest.param(TEXT, "release/2.4", ["release/2.4"], id="text-prompt-takes-raw-text"),
        pytest.param(
            DEPLOY, "@threadgate_bot 1", ["staging"], id="mention-of-the-bot-is-not-part-of-the-reply"
        ),
    ],
)
async def test_replies_in_the_chat_map_as_the_seed_says(
    runtime: Runtime, fake: FakeTelegram, payload: dict[str, Any], reply: str, expected: list[str]
) -> None:
    prompt = await open_prompt(runtime, GROUP_THREAD, payload)

    await answer(fake, GROUP, ALICE, reply)

    resolved = await settled(runtime, prompt.prompt_id)
    assert [a.answer for a in resolved.answers or []] == [expected]


# Who may answer -------------------------------------------------------------------------------------


async def test_a_reply_from_someone_not_allowed_leaves_the_prompt_pending_and_gets_a_notice(
    runtime: Runtime, fake: FakeTelegram
) -> None:
    prompt = await open_prompt(runtime, GROUP_THREAD, DEPLOY, started_by=ALICE)

    bobs = await answer(fake, GROUP, BOB, "1")

    await runtime.gateway.outbox.idle()
    assert (await runtime.gateway.get_prompt(prompt.prompt_id)).prompt_state is PromptState.PENDING
    notice = fake.sent[-1]
    assert (notice.chat_id, notice.text, notice.reply_to) == (
        GROUP,
        notices.NOT_ALLOWED,
        bobs["message"]["message_id"],
    )
    assert {sent.chat_id for sent in fake.sent} == {GROUP}  # nothing went to Bob's private chat


async def test_an_approver_may_answer_in_the_group(runtime: Runtime, fake: FakeTelegram) -> None:
    approvers = HumanInput(approvers=[f"telegram:{CAROL}"])
    await runtime.store.put_agent(AgentDefinition(name="ops", human_input=approvers))
    prompt = await open_prompt(runtime, GROUP_THREAD, APPROVAL, started_by=ALICE)

    await answer(fake, GROUP, CAROL, "approve")

    resolved = await settled(runtime, prompt.prompt_id)
    assert (resolved.answered_by, resolved.answers and resolved.answers[0].answer) == (
        f"telegram:{CAROL}",
        ["Approve"],
    )


# Threads and senders --------------------------------------------------------------------------------


async def test_a_forum_topic_is_its_own_thread_and_the_prompt_goes_into_it(
    runtime: Runtime, fake: FakeTelegram
) -> None:
    await answer(fake, GROUP, ALICE, "ship it", topic_id=7)
    [message] = await agent_messages(runtime)
    assert message["thread_id"] == f"telegram:{GROUP}:7"

    prompt = await open_prompt(runtime, f"telegram:{GROUP}:7", DEPLOY)
    await answer(fake, GROUP, ALICE, "1", topic_id=7)

    assert fake.sent[0].topic_id == 7
    resolved = await settled(runtime, prompt.prompt_id)
    assert [a.answer for a in resolved.answers or []] == [["staging"]]
    assert fake.sent[-1].topic_id == 7


async def test_a_reply_in_the_general_topic_does_not_answer_a_prompt_in_a_topic(
    runtime: Runtime, fake: FakeTelegram
) -> None:
    prompt = await open_prompt(runtime, f"telegram:{GROUP}:7", DEPLOY)

    await answer(fake, GROUP, ALICE, "1")

    assert (await runtime.gateway.get_prompt(prompt.prompt_id)).prompt_state is PromptState.PENDING
    [message] = await agent_messages(runtime)
    assert message["thread_id"] == GROUP_THREAD


async def test_messages_from_bots_and_service_messages_are_not_handled(
    runtime: Runtime, fake: FakeTelegram
) -> None:
    prompt = await open_prompt(runtime, GROUP_THREAD, APPROVAL, started_by=ALICE)

    await answer(fake, GROUP, 999, "approve", is_bot=True)
    await answer(fake, GROUP, fake.bot_id, "approve", is_bot=True)
    await answer(
        fake, GROUP, ALICE, None, new_chat_members=[{"id": BOB, "is_bot": False, "first_name": "Bob"}]
    )

    assert (await runtime.gateway.get_prompt(prompt.prompt_id)).prompt_state is PromptState.PENDING
    assert await agent_messages(runtime) == []


# Duplicates -----------------------------------------------------------------------------------------


async def test_an_update_sent_again_after_a_restart_resolves_nothing_twice(
    fake: FakeTelegram, redis_url: str
) -> None:
    async with telegram_gateway(fake, redis_url) as first:
        prompt = await open_prompt(first, DM, DEPLOY)
        update = await answer(fake, ALICE, ALICE, "2")
        await settled(first, prompt.prompt_id)
    fake.replay_from(update["update_id"])  # as if the process died before confirming the offset

    async with telegram_gateway(fake, redis_url) as second:
        await fake.confirmed(update["update_id"])
        messages = await agent_messages(second)
        resolved = await second.gateway.get_prompt(prompt.prompt_id)

    assert len([call for call in fake.calls_of("getUpdates") if call.status == 200]) >= 2
    assert sum(sent.text.startswith("✓ Answered: production") for sent in fake.sent) == 1
    # had the replay been taken for new, "2" would be queued for the agent beside the parked answer
    assert [(m["tag"], m["text"]) for m in messages] == [("parked_answer", "production")]
    assert resolved.answered_by == f"telegram:{ALICE}"


# Rate limits, limits, failures ----------------------------------------------------------------------


async def test_a_429_on_the_prompt_is_waited_out_and_the_prompt_is_posted(
    runtime: Runtime, fake: FakeTelegram
) -> None:
    fake.rate_limit("sendMessage", retry_after=0.3)

    prompt = await open_prompt(runtime, DM, DEPLOY)

    assert [call.status for call in fake.calls_of("sendMessage")] == [429, 200]
    assert [sent.text for sent in fake.sent] == [DEPLOY_TEXT]
    assert prompt.prompt_state is PromptState.PENDING


async def test_a_long_flood_wait_makes_the_prompt_unavailable_not_denied(
    runtime: Runtime, fake: FakeTelegram
) -> None:
    fake.rate_limit("sendMessage", retry_after=120)

    with pytest.raises(GatewayError) as raised:
        await open_prompt(runtime, DM, APPROVAL)

    assert raised.value.code == "PROMPT_UNAVAILABLE"
    assert raised.value.message.startswith("Approval unavailable")
    assert "120" in raised.value.message


async def test_a_chat_the_bot_was_removed_from_makes_the_prompt_unavailable(
    runtime: Runtime, fake: FakeTelegram
) -> None:
    fake.forbid(GROUP)

    with pytest.raises(GatewayError) as raised:
        await open_prompt(runtime, GROUP_THREAD, DEPLOY)

    assert raised.value.status == 503
    assert raised.value.message.startswith("Question unavailable: the prompt could not be posted")


async def test_a_burst_of_messages_to_one_chat_goes_out_in_order_through_a_429(
    runtime: Runtime, fake: FakeTelegram
) -> None:
    fake.rate_limit("sendMessage", retry_after=0.3)

    for number in range(1, 6):
        await runtime.gateway.post_message(DM, f"step {number}")
    await runtime.gateway.outbox.idle()

    assert [sent.text for sent in fake.sent] == [f"step {number}" for number in range(1, 6)]
    assert [call.status for call in fake.calls_of("sendMessage")].count(429) == 1


async def test_a_message_over_4096_characters_is_split_into_marked_parts(
    runtime: Runtime, fake: FakeTelegram
) -> None:
    text = "\n".join(f"line {number:04d} " + "x" * 80 for number in range(100))

    await runtime.gateway.post_message(DM, text)
    await runtime.gateway.outbox.idle()

    parts = [sent.text for sent in fake.sent]
    assert len(parts) == 3
    assert all(len(part) <= 4096 for part in parts)
    assert [part.rsplit("\n", 1)[1] for part in parts] == ["[1/3]", "[2/3]", "[3/3]"]
    assert "\n".join(part.rsplit("\n", 1)[0] for part in parts) == text


# Polling and its lease ------------------------------------------------------------------------------


async def test_stopping_releases_the_polling_lease_at_once(fake: FakeTelegram, redis_url: str) -> None:
    lease_key = keys.lease(lease_name("telegram", TOKEN))
    watcher = redis.asyncio.from_url(redis_url, decode_responses=True)
    async with telegram_gateway(fake, redis_url):
        assert await watcher.exists(lease_key)
        assert fake.calls_of("deleteWebhook")  # polling needs the webhook gone

    assert not await watcher.exists(lease_key)  # another process need not wait out the TTL
    await watcher.aclose()


async def test_two_gateways_on_one_redis_poll_one_at_a_time_and_the_second_takes_over(
    fake: FakeTelegram, redis_url: str
) -> None:
    settings = settings_for(fake, redis_url)
    first = Runtime.build(settings, channels=[build_channel("telegram", settings)])
    await first.start()
    await fake.wait_for(lambda: bool(fake.calls_of("getUpdates")))
    async with telegram_gateway(fake, redis_url, wait_polling=False) as second:
        first_lease, second_lease = channel_of(first).lease, channel_of(second).lease
        assert first_lease is not None and second_lease is not None
        prompt = await open_prompt(second, DM, DEPLOY)  # the agent's API may live on either process
        await answer(fake, ALICE, BOB, "hello")
        assert (first_lease.held, second_lease.held) == (True, False)

        await first.stop()
        await answer(fake, ALICE, ALICE, "1")  # only the second process can have read this

        resolved = await settled(second, prompt.prompt_id)
        assert second_lease.held
    assert [a.answer for a in resolved.answers or []] == [["staging"]]
    assert (fake.max_concurrent_polls, fake.conflicts) == (1, 0)


class NoInbound:
    """A sink for a channel that must not get as far as receiving anything."""

    async def receive(self, message: InboundMessage) -> Received:
        raise AssertionError(f"unexpected inbound message {message!r}")


async def test_a_token_telegram_rejects_stops_start_up_without_showing_the_token(fake: FakeTelegram) -> None:
    wrong = "424242:not-the-right-token"
    channel = TelegramChannel(wrong, base_url=fake.base_url)
    context = ChannelContext(sink=cast(InboundSink, NoInbound()), lease=lambda name: Lease(None, name))

    with pytest.raises(RuntimeError, match="TELEGRAM_BOT_TOKEN") as raised:
        await channel.start(context)

    assert wrong not in str(raised.value)
    assert fake.calls_of("getMe")[0].status == 401
    assert fake.calls_of("getUpdates") == []
    await channel.stop()


@pytest.mark.parametrize(("payload", "text"), [(FORM, FORM_TEXT), (URL, URL_TEXT)])
async def test_a_form_or_url_step_is_posted_with_its_text_and_a_typed_reply_answers_it(
    runtime: Runtime, fake: FakeTelegram, payload: dict[str, Any], text: str
) -> None:
    prompt = await open_prompt(runtime, DM, payload)

    [posted] = fake.sent
    assert posted.text.startswith(text)  # a form of several fields adds the line of the field asked
    await answer(fake, ALICE, ALICE, "prod" if payload is FORM else "done")
    if payload is FORM:  # a property at a time: the optional replicas is skipped
        await answer(fake, ALICE, ALICE, "skip")
    resolved = await settled(runtime, prompt.prompt_id)
    assert resolved.prompt_state is PromptState.ANSWERED
    assert resolved.content == ({"env": "prod"} if payload is FORM else None)
