"""Posting into Slack through slack_sdk against the fake: splitting, failures as values, private notices."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import pytest

from channels.slack import SlackChannel
from channels.slack.render import escape
from gateway.base.ids import parse_thread_id
from gateway.base.models import InboundMessage, TextContent, ThreadItem
from gateway.base.settings import Settings
from gateway.decision.service import Received
from gateway.delivery.channel import ChannelContext, ChannelError
from gateway.delivery.lease import Lease
from gateway.rules.render import pending_prompt_item
from tests.fakes.slack import FakeSlack
from tests.support.new_kinds import FORM, FORM_TEXT, URL, URL_TEXT, prompt_of
from tests.support.platforms import build_channel

THREAD = parse_thread_id("slack:C0TEAM:1712345678.000100")
LONG = ThreadItem(type="message", content=[TextContent(text="word " * 7_999 + "word")] * 3)


def channel_for(fake: FakeSlack, max_inline_wait: float = 5.0) -> SlackChannel:
    return SlackChannel(
        fake.bot_token,
        signing_secret=fake.signing_secret,
        api_url=fake.api_url,
        max_inline_wait=max_inline_wait,
    )


async def test_long_item_is_posted_as_parts_in_order_within_slack_limits(fake_slack: FakeSlack) -> None:
    ref = await channel_for(fake_slack).post(THREAD, LONG)
    posted = fake_slack.posted("1712345678.000100")
    assert len(posted) == 3  # the fake refuses what Slack would: over-long text, sections, block counts
    assert [m["blocks"][-1]["elements"][0]["text"] for m in posted] == [
        "Part 1 of 3",
        "Part 2 of 3",
        "Part 3 of 3",
    ]
    assert ref.message_id == posted[0]["ts"]


async def test_retry_after_a_failed_part_posts_only_the_parts_still_missing(fake_slack: FakeSlack) -> None:
    channel = channel_for(fake_slack, max_inline_wait=0.0)
    fake_slack.rate_limit("chat.postMessage", retry_after=30, after=1)
    with pytest.raises(ChannelError) as raised:
        await channel.post(THREAD, LONG)
    assert raised.value.retry_after == 30

    ref = await channel.post(THREAD, LONG)
    posted = fake_slack.posted()
    assert [m["blocks"][-1]["elements"][0]["text"] for m in posted] == [
        "Part 1 of 3",
        "Part 2 of 3",
        "Part 3 of 3",
    ]
    assert ref.message_id == posted[0]["ts"]


async def test_refusal_is_a_permanent_error_saying_what_to_do(fake_slack: FakeSlack) -> None:
    fake_slack.refuse("chat.postMessage", "not_in_channel")
    item = ThreadItem(type="message", content=[TextContent(text="hello")])
    with pytest.raises(ChannelError) as raised:
        await channel_for(fake_slack).post(THREAD, item)
    assert raised.value.permanent
    assert "not_in_channel" in str(raised.value) and "invite the app" in str(raised.value)


async def test_unknown_refusal_is_an_error_that_may_be_retried(fake_slack: FakeSlack) -> None:
    fake_slack.refuse("chat.postMessage", "internal_error")
    item = ThreadItem(type="message", content=[TextContent(text="hello")])
    with pytest.raises(ChannelError) as raised:
        await channel_for(fake_slack).post(THREAD, item)
    assert not raised.value.permanent and raised.value.retry_after is None


async def test_unreachable_slack_is_a_channel_error(fake_slack: FakeSlack) -> None:
    channel = channel_for(fake_slack)
    await fake_slack.stop()
    item = ThreadItem(type="message", content=[TextContent(text="hello")])
    with pytest.raises(ChannelError, match="could not be reached"):
        await channel.post(THREAD, item)


async def test_tokens_never_appear_in_errors(fake_slack: FakeSlack) -> None:
    channel = SlackChannel("xoxb-wrong", signing_secret="s", api_url=fake_slack.api_url)
    item = ThreadItem(type="message", content=[TextContent(text="hello")])
    with pytest.raises(ChannelError) as raised:
        await channel.post(THREAD, item)
    assert "invalid_auth" in str(raised.value)
    assert "xoxb" not in str(raised.value)


async def test_private_notice_is_ephemeral_in_the_thread(fake_slack: FakeSlack) -> None:
    await channel_for(fake_slack).notify_private(THREAD, "slack:U0EVE", "Only approvers may answer.")
    [notice] = fake_slack.ephemerals()
    assert (notice["channel"], notice["user"], notice["thread_ts"]) == (
        "C0TEAM",
        "U0EVE",
        "1712345678.000100",
    )
    assert notice["text"] == "Only approvers may answer."
    assert fake_slack.posted() == []


async def test_private_notice_needs_a_slack_identity(fake_slack: FakeSlack) -> None:
    with pytest.raises(ChannelError):
        await channel_for(fake_slack).notify_private(THREAD, "telegram:42", "hi")
    assert fake_slack.ephemerals() == []


def test_events_endpoint_is_served_only_with_a_signing_secret() -> None:
    both = build_channel(
        "slack",
        Settings(
            _env_file=None, slack_bot_token="xoxb-1", slack_signing_secret="s", slack_app_token="xapp-1"
        ),
    )
    socket_only = build_channel(
        "slack", Settings(_env_file=None, slack_bot_token="xoxb-1", slack_app_token="xapp-1")
    )
    assert [getattr(route, "path", None) for route in both.routes()] == ["/slack/events"]
    assert socket_only.routes() == []


def test_a_bot_token_alone_is_not_enough() -> None:
    with pytest.raises(ValueError, match="SLACK_SIGNING_SECRET"):
        SlackChannel("xoxb-1")


async def test_a_bad_bot_token_is_reported_at_start_without_the_token(
    fake_slack: FakeSlack, caplog: pytest.LogCaptureFixture
) -> None:
    channel = SlackChannel("xoxb-bad", signing_secret="s", api_url=fake_slack.api_url)
    caplog.set_level(logging.INFO, logger="threadgate")
    await channel.start(ChannelContext(sink=Refusing(), lease=lambda name: Lease(None, name)))
    deadline = time.monotonic() + 5
    while not [r for r in caplog.records if r.getMessage() == "slack.auth_failed"]:
        assert time.monotonic() < deadline, "no slack.auth_failed event"
        await asyncio.sleep(0.01)
    await channel.stop()
    record = next(r for r in caplog.records if r.getMessage() == "slack.auth_failed")
    error = record.fields["error"]  # type: ignore[attr-defined]
    assert "invalid_auth" in error and "SLACK_BOT_TOKEN is not valid" in error
    assert "xoxb" not in error


class Refusing:
    """An inbound sink that must not be called."""

    async def receive(self, message: InboundMessage) -> Received:
        raise AssertionError(f"unexpected inbound message {message}")


@pytest.mark.parametrize(
    ("payload", "text", "buttons"),
    [(FORM, FORM_TEXT, ["Fill in…", "Decline"]), (URL, URL_TEXT, ["Open the page", "Done", "Decline"])],
)
async def test_a_form_or_url_step_is_posted_as_its_text_then_its_controls(
    fake_slack: FakeSlack, payload: dict[str, Any], text: str, buttons: list[str]
) -> None:
    await channel_for(fake_slack).post(THREAD, pending_prompt_item(prompt_of(payload, THREAD.thread_id)))
    [posted] = fake_slack.posted("1712345678.000100")
    assert posted["text"] == escape(text)
    assert [block["type"] for block in posted["blocks"]] == ["section", "actions"]
    assert [element["text"]["text"] for element in posted["blocks"][1]["elements"]] == buttons
