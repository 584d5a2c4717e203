"""The Slack channel over the HTTP Events API, end to end: the real slack-bolt against the fake Slack."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette

from channels.slack import SlackChannel
from gateway.base.errors import GatewayError
from gateway.base.models import InboundMessage, PromptKind, PromptRequest, PromptState, Question
from gateway.decision.service import Outcome, Received
from gateway.delivery.channel import ChannelContext
from gateway.delivery.lease import Lease
from gateway.rules import notices
from tests.channels.conftest import ServeApp
from tests.channels.slack_support import (
    ALICE,
    BOB,
    CHANNEL,
    EVE,
    SECTIONS,
    TARGET,
    SlackGateway,
    slack_gateway,
)
from tests.fakes.slack import FakeSlack, message_event

SEED_TEXT = (
    "What's the deployment target?\n"
    "  1. staging — push to staging.example.com\n"
    "  2. production — push to www.example.com"
)
DROP = PromptRequest(kind=PromptKind.APPROVAL, questions=[Question(question="Allow db__drop to run?")])


@pytest.fixture
async def gw(fake_slack: FakeSlack, real_redis: str) -> AsyncIterator[SlackGateway]:
    async with slack_gateway(fake_slack, real_redis) as gateway:
        yield gateway


def section_texts(message: dict[str, Any]) -> list[str]:
    return [block["text"]["text"] for block in message["blocks"] if block["type"] == "section"]


async def test_full_story_message_prompt_reply_and_audit(
    fake_slack: FakeSlack, redis_url: str | None
) -> None:
    async with slack_gateway(fake_slack, redis_url) as gw:
        thread_ts = await gw.open_thread("deploy the new build")
        thread_id = f"slack:{CHANNEL}:{thread_ts}"

        feed = await gw.agent_feed()
        assert [(m["thread_id"], m["sender"], m["text"]) for m in feed] == [
            (thread_id, f"slack:{ALICE}", "deploy the new build")
        ]

        prompt = await gw.ask(thread_id, TARGET)
        [posted] = fake_slack.posted(thread_ts)
        assert posted["channel"] == CHANNEL
        assert section_texts(posted) == [SEED_TEXT]

        assert await gw.deliver(gw.reply(thread_ts, "2")) == 200
        answered = await gw.runtime.gateway.get_prompt(prompt.prompt_id)
        assert answered.prompt_state is PromptState.ANSWERED
        assert [a.answer for a in answered.answers or []] == [["production"]]
        assert answered.answered_by == f"slack:{ALICE}"

        await gw.settled()
        audit = fake_slack.posted(thread_ts)[-1]
        assert section_texts(audit) == ["✓ Answered: production"]
        assert audit["thread_ts"] == thread_ts
        # The reply went to the prompt; nobody was waiting on it, so it comes back as a parked answer.
        assert [(m["text"], m["tag"]) for m in await gw.agent_feed()] == [
            ("deploy the new build", None),
            ("production", "parked_answer"),
        ]


@pytest.mark.parametrize(
    ("request_", "reply", "expected"),
    [
        pytest.param(TARGET, "Staging", ["staging"], id="label-case-insensitive"),
        pytest.param(DROP, "yes", ["Approve"], id="approve-token"),
        pytest.param(DROP, "not now", ["Deny"], id="non-token-denies"),
        pytest.param(SECTIONS, "1, 3", ["KPI cards", "Table"], id="multi-select-numbers"),
        pytest.param(TARGET, "push to canary first", ["push to canary first"], id="other-text-verbatim"),
    ],
)
async def test_replies_map_as_seed_000_says(
    fake_slack: FakeSlack, gw: SlackGateway, request_: PromptRequest, reply: str, expected: list[str]
) -> None:
    thread_ts = await gw.open_thread()
    prompt = await gw.ask(f"slack:{CHANNEL}:{thread_ts}", request_)
    assert await gw.deliver(gw.reply(thread_ts, f"<@{fake_slack.bot_user_id}> {reply}")) == 200
    answered = await gw.runtime.gateway.get_prompt(prompt.prompt_id)
    assert [a.answer for a in answered.answers or []] == [expected]
    await gw.settled()
    assert section_texts(fake_slack.posted(thread_ts)[-1]) == [f"✓ Answered: {', '.join(expected)}"]


async def test_reply_from_someone_not_allowed_stays_pending_and_is_told_privately(
    fake_slack: FakeSlack, gw: SlackGateway
) -> None:
    await gw.approvers(f"slack:{BOB}")
    thread_ts = await gw.open_thread()
    prompt = await gw.ask(f"slack:{CHANNEL}:{thread_ts}", DROP)

    assert await gw.deliver(gw.reply(thread_ts, "approve", user=EVE)) == 200
    assert (await gw.runtime.gateway.get_prompt(prompt.prompt_id)).pending
    [notice] = fake_slack.ephemerals()
    assert (notice["channel"], notice["user"], notice["thread_ts"]) == (CHANNEL, EVE, thread_ts)
    assert notice["text"] == notices.NOT_ALLOWED
    assert "db__drop" not in str(notice)

    assert await gw.deliver(gw.reply(thread_ts, "approve", user=BOB)) == 200
    answered = await gw.runtime.gateway.get_prompt(prompt.prompt_id)
    assert answered.answered_by == f"slack:{BOB}"
    assert [a.answer for a in answered.answers or []] == [["Approve"]]


@pytest.mark.parametrize(
    "tamper",
    [
        pytest.param({"signature": "v0=" + "0" * 64}, id="bad-signature"),
        pytest.param({"secret": "someone-elses-secret"}, id="wrong-secret"),
        # Well past the five minutes either way: the header is whole seconds, and the request takes a
        # moment to arrive, so a skew of 301 s can read as 300 by the time the gateway checks it.
        pytest.param({"timestamp": -330}, id="stale-timestamp"),
        pytest.param({"timestamp": +330}, id="future-timestamp"),
        pytest.param({"signature": ""}, id="missing-signature"),
    ],
)
async def test_unsigned_or_stale_requests_are_refused_and_nothing_is_processed(
    gw: SlackGateway, tamper: dict[str, Any]
) -> None:
    thread_ts = await gw.open_thread()
    prompt = await gw.ask(f"slack:{CHANNEL}:{thread_ts}", DROP)

    if "timestamp" in tamper:  # seconds from now, when the request is sent
        tamper = {"timestamp": int(time.time()) + tamper["timestamp"]}
    assert await gw.deliver(gw.reply(thread_ts, "approve"), **tamper) == 401
    assert (await gw.runtime.gateway.get_prompt(prompt.prompt_id)).pending
    assert len(await gw.agent_feed()) == 1  # only the opening mention


async def test_non_numeric_timestamp_is_refused(fake_slack: FakeSlack, gw: SlackGateway) -> None:
    event = message_event("D0ALICE", ALICE, "hi", ts=fake_slack.next_ts(), channel_type="im")
    raw = json.dumps(fake_slack.callback(event)).encode()
    headers = {"X-Slack-Request-Timestamp": "soon", "X-Slack-Signature": fake_slack.sign(raw, 0)}
    async with httpx.AsyncClient() as client:
        response = await client.post(gw.events_url, content=raw, headers=headers)
    assert response.status_code == 401
    assert await gw.agent_feed() == []


async def test_url_verification_challenge_is_answered(fake_slack: FakeSlack, gw: SlackGateway) -> None:
    body = {"token": "legacy", "challenge": "c-123", "type": "url_verification"}
    assert await fake_slack.deliver(gw.events_url, body) == 200
    assert json.loads(fake_slack.deliveries[-1][1]) == {"challenge": "c-123"}


async def test_retried_answer_resolves_once(fake_slack: FakeSlack, gw: SlackGateway) -> None:
    thread_ts = await gw.open_thread()
    prompt = await gw.ask(f"slack:{CHANNEL}:{thread_ts}", TARGET)
    answer = gw.reply(thread_ts, "1")

    assert await gw.deliver(answer, event_id="Ev0ANSWER") == 200
    assert await gw.deliver(answer, event_id="Ev0ANSWER", retry_num=1) == 200
    assert await gw.deliver(answer, event_id="Ev0ANSWER", retry_num=2) == 200
    await gw.settled()

    answered = await gw.runtime.gateway.get_prompt(prompt.prompt_id)
    assert [a.answer for a in answered.answers or []] == [["staging"]]
    audits = [m for m in fake_slack.posted(thread_ts) if section_texts(m)[0].startswith("✓")]
    assert len(audits) == 1
    assert [m["tag"] for m in await gw.agent_feed()] == [None, "parked_answer"]  # once, retries dropped


async def test_retry_that_is_the_only_delivery_is_processed(gw: SlackGateway) -> None:
    thread_ts = await gw.open_thread()
    prompt = await gw.ask(f"slack:{CHANNEL}:{thread_ts}", TARGET)

    assert await gw.deliver(gw.reply(thread_ts, "2"), retry_num=1) == 200
    answered = await gw.runtime.gateway.get_prompt(prompt.prompt_id)
    assert [a.answer for a in answered.answers or []] == [["production"]]


async def test_message_and_mention_events_for_one_message_count_once(
    fake_slack: FakeSlack, gw: SlackGateway
) -> None:
    thread_ts = await gw.open_thread()
    ts = fake_slack.next_ts()
    text = f"<@{fake_slack.bot_user_id}> also run the migrations"
    as_message = message_event(CHANNEL, ALICE, text, ts=ts, thread_ts=thread_ts)
    as_mention = message_event(CHANNEL, ALICE, text, ts=ts, thread_ts=thread_ts, kind="app_mention")

    assert await gw.deliver(as_message) == 200
    assert await gw.deliver(as_mention) == 200
    texts = [m["text"] for m in await gw.agent_feed()]
    assert texts == ["deploy the new build", "also run the migrations"]


async def test_direct_message_starts_a_thread_on_itself(fake_slack: FakeSlack, gw: SlackGateway) -> None:
    ts = fake_slack.next_ts()
    assert await gw.deliver(message_event("D0ALICE", ALICE, "hello", ts=ts, channel_type="im")) == 200
    [message] = await gw.agent_feed()
    assert message["thread_id"] == f"slack:D0ALICE:{ts}"


async def test_bot_messages_and_channel_chatter_are_not_for_the_agent(
    fake_slack: FakeSlack, gw: SlackGateway
) -> None:
    thread_ts = await gw.open_thread()
    own = message_event(
        CHANNEL, fake_slack.bot_user_id, "posted by us", ts=fake_slack.next_ts(), thread_ts=thread_ts
    )
    own["bot_id"] = fake_slack.bot_id
    other_bot = message_event(
        CHANNEL, "U0CIBOT", "build passed", ts=fake_slack.next_ts(), thread_ts=thread_ts, bot_id="B0CI"
    )
    chatter = message_event(CHANNEL, BOB, "lunch?", ts=fake_slack.next_ts())
    for event in (own, other_bot, chatter):
        assert await gw.deliver(event) == 200
    assert [m["text"] for m in await gw.agent_feed()] == ["deploy the new build"]


async def test_prompt_post_rate_limited_briefly_is_waited_out(
    fake_slack: FakeSlack, gw: SlackGateway
) -> None:
    thread_ts = await gw.open_thread()
    fake_slack.rate_limit("chat.postMessage", retry_after=1)
    started = time.monotonic()
    prompt = await gw.ask(f"slack:{CHANNEL}:{thread_ts}", TARGET)
    assert time.monotonic() - started >= 1.0
    assert prompt.pending
    assert len(fake_slack.calls_to("chat.postMessage")) == 2
    assert [section_texts(m) for m in fake_slack.posted(thread_ts)] == [[SEED_TEXT]]


async def test_prompt_post_rate_limited_for_long_is_unavailable_not_denied(
    fake_slack: FakeSlack, gw: SlackGateway
) -> None:
    thread_ts = await gw.open_thread()
    fake_slack.rate_limit("chat.postMessage", retry_after=30)
    with pytest.raises(GatewayError) as raised:
        await gw.ask(f"slack:{CHANNEL}:{thread_ts}", DROP)
    assert raised.value.code == "PROMPT_UNAVAILABLE"
    assert raised.value.message.startswith("Approval unavailable")
    assert "retry in 30 s" in raised.value.message


async def test_burst_of_agent_messages_is_posted_in_order_through_a_rate_limit(
    fake_slack: FakeSlack, gw: SlackGateway
) -> None:
    thread_ts = await gw.open_thread()
    thread_id = f"slack:{CHANNEL}:{thread_ts}"
    fake_slack.rate_limit("chat.postMessage", retry_after=1)
    for number in range(1, 6):
        await gw.runtime.gateway.post_message(thread_id, f"step {number} done")
    await gw.settled()
    assert [m["text"] for m in fake_slack.posted(thread_ts)] == [f"step {n} done" for n in range(1, 6)]


async def test_audit_item_rate_limited_past_the_inline_wait_is_retried_not_dropped(
    fake_slack: FakeSlack, real_redis: str
) -> None:
    async with slack_gateway(fake_slack, real_redis, max_inline_wait=0.5) as gw:
        thread_ts = await gw.open_thread()
        await gw.ask(f"slack:{CHANNEL}:{thread_ts}", TARGET)
        fake_slack.rate_limit("chat.postMessage", retry_after=1)
        assert await gw.deliver(gw.reply(thread_ts, "staging")) == 200
        await gw.settled()
        assert len(fake_slack.posted(thread_ts)) == 1  # the audit item waits out retry_after
        deadline = time.monotonic() + 10
        while len(fake_slack.posted(thread_ts)) < 2 and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
            await gw.runtime.gateway.outbox.sweep(everything=True)
            await gw.settled()
        assert section_texts(fake_slack.posted(thread_ts)[-1]) == ["✓ Answered: staging"]


class FlakySink:
    """Our own inbound sink that fails its first call, as the store would while Redis is unreachable."""

    def __init__(self) -> None:
        self.received: list[InboundMessage] = []
        self.failures = 1

    async def receive(self, message: InboundMessage) -> Received:
        if self.failures:
            self.failures -= 1
            raise ConnectionError("store unreachable")
        self.received.append(message)
        return Received(Outcome.QUEUED)


async def test_event_is_acknowledged_only_once_stored_so_slack_delivers_it_again(
    fake_slack: FakeSlack, serve: ServeApp
) -> None:
    channel = SlackChannel(
        fake_slack.bot_token, signing_secret=fake_slack.signing_secret, api_url=fake_slack.api_url
    )
    sink = FlakySink()
    await channel.start(ChannelContext(sink=sink, lease=lambda name: Lease(None, name)))
    body = fake_slack.callback(
        message_event("D0ALICE", ALICE, "hello", ts=fake_slack.next_ts(), channel_type="im")
    )
    async with serve(Starlette(routes=channel.routes())) as base_url:
        assert await fake_slack.deliver(f"{base_url}/slack/events", body) == 500
        assert sink.received == []
        assert await fake_slack.deliver(f"{base_url}/slack/events", body, retry_num=1) == 200
    assert [m.text for m in sink.received] == ["hello"]
    await channel.stop()
