"""The Slack channel over Socket Mode: the real slack-bolt websocket client against the fake Slack."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, AsyncExitStack

import httpx
import pytest

from gateway.base.models import PromptKind, PromptRequest, PromptState, Question
from gateway.delivery.lease import lease_name
from tests.channels.slack_support import CHANNEL, SlackGateway, slack_gateway
from tests.fakes.slack import FakeSlack

DROP = PromptRequest(kind=PromptKind.APPROVAL, questions=[Question(question="Allow db__drop to run?")])
TTL_MS = 1_000


@pytest.fixture
async def gw(fake_slack: FakeSlack, real_redis: str) -> AsyncIterator[SlackGateway]:
    """The gateway taking Slack's events over Socket Mode alone."""
    async with slack_gateway(fake_slack, real_redis, http=False, socket_mode=True) as gateway:
        yield gateway


def leased(fake_slack: FakeSlack, redis_url: str) -> AbstractAsyncContextManager[SlackGateway]:
    """A gateway process that holds Slack's socket under a short lease, as in a multi-process deploy."""
    return slack_gateway(fake_slack, redis_url, socket_mode=True, lease_ttl_ms=TTL_MS)


def mention(gw: SlackGateway, text: str) -> tuple[str, dict[str, object]]:
    ts = gw.fake.next_ts()
    event = {"type": "app_mention", "channel": CHANNEL, "user": "U0ALICE", "ts": ts}
    event["text"] = f"<@{gw.fake.bot_user_id}> {text}"
    return ts, gw.fake.callback(event)


async def test_full_story_over_socket_mode(fake_slack: FakeSlack, gw: SlackGateway) -> None:
    await fake_slack.wait_sockets(1)
    thread_ts, body = mention(gw, "rotate the keys")
    ack = await fake_slack.push(body)
    assert "envelope_id" in ack
    [message] = await gw.agent_feed()
    assert (message["thread_id"], message["text"]) == (f"slack:{CHANNEL}:{thread_ts}", "rotate the keys")

    prompt = await gw.ask(message["thread_id"], DROP)
    assert fake_slack.posted(thread_ts)[0]["blocks"][0]["text"]["text"] == (
        "Allow db__drop to run?\n  1. Approve\n  2. Deny"
    )

    await fake_slack.push(gw.fake.callback(gw.reply(thread_ts, "approve")))
    answered = await gw.runtime.gateway.get_prompt(prompt.prompt_id)
    assert answered.prompt_state is PromptState.ANSWERED
    assert [a.answer for a in answered.answers or []] == [["Approve"]]
    await gw.settled()
    assert fake_slack.posted(thread_ts)[-1]["text"] == "✓ Answered: Approve"


async def test_socket_mode_alone_serves_no_http_endpoint(gw: SlackGateway) -> None:
    async with httpx.AsyncClient() as client:
        response = await client.post(gw.events_url, json={"type": "url_verification", "challenge": "x"})
    assert response.status_code == 404


async def test_redelivered_envelope_resolves_once(fake_slack: FakeSlack, gw: SlackGateway) -> None:
    await fake_slack.wait_sockets(1)
    thread_ts, body = mention(gw, "drop the table")
    await fake_slack.push(body)
    prompt = await gw.ask(f"slack:{CHANNEL}:{thread_ts}", DROP)
    answer = gw.fake.callback(gw.reply(thread_ts, "deny"), event_id="Ev0ANSWER")

    await fake_slack.push(answer)
    await fake_slack.push(answer, retry_attempt=1)
    await gw.settled()

    answered = await gw.runtime.gateway.get_prompt(prompt.prompt_id)
    assert [a.answer for a in answered.answers or []] == [["Deny"]]
    audits = [m for m in fake_slack.posted(thread_ts) if m["text"].startswith("✓")]
    assert len(audits) == 1


async def test_only_one_process_holds_the_socket_and_another_takes_over_when_it_stops(
    fake_slack: FakeSlack, real_redis: str
) -> None:
    async with AsyncExitStack() as stack:
        first = await stack.enter_async_context(leased(fake_slack, real_redis))
        await fake_slack.wait_sockets(1)
        second = await stack.enter_async_context(leased(fake_slack, real_redis))
        await asyncio.sleep(TTL_MS / 1000)  # several renewals and acquisition attempts
        assert fake_slack.open_sockets == 1
        assert fake_slack.connections_opened == 1

        await first.channel.stop()
        await fake_slack.wait_sockets(1, timeout=TTL_MS / 1000 + 2)
        assert fake_slack.connections_opened == 2

        _, body = mention(second, "still there?")
        await fake_slack.push(body)
        assert [m["text"] for m in await second.agent_feed()] == ["still there?"]


async def test_holder_that_loses_its_lease_disconnects_and_another_takes_over(
    fake_slack: FakeSlack, real_redis: str
) -> None:
    async with AsyncExitStack() as stack:
        first = await stack.enter_async_context(leased(fake_slack, real_redis))
        await fake_slack.wait_sockets(1)
        holder_key = f"tg:lease:{lease_name('slack', fake_slack.app_token)}"
        holder = await first.runtime.connection.client.get(holder_key)
        await stack.enter_async_context(leased(fake_slack, real_redis))

        # As if the holder stalled past its TTL: the key lapses and the other process takes it.
        await first.runtime.connection.client.delete(holder_key)
        deadline = asyncio.get_running_loop().time() + 5
        while await first.runtime.connection.client.get(holder_key) in (None, holder):
            assert asyncio.get_running_loop().time() < deadline, "nobody took the lease over"
            await asyncio.sleep(0.02)
        await asyncio.sleep(TTL_MS / 1000)  # the old holder notices at its next renewal
        assert fake_slack.open_sockets == 1
        assert fake_slack.connections_opened == 2
