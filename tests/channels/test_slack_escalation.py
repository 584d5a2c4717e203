"""Reminders and escalation on Slack, end to end against the fake Slack: the reminder mentions who may
answer, a copy starts a thread in another channel and its buttons answer the prompt, both threads show
the outcome."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from gateway.base.models import PromptRequest, PromptState
from tests.channels.slack_support import ALICE, BOB, CHANNEL, EVE, SlackGateway, slack_gateway
from tests.fakes.slack import FakeSlack

ONCALL = "C0999"
DROP = PromptRequest.model_validate(
    {
        "kind": "approval",
        "questions": [{"question": "Allow db__drop to run?"}],
        "tool_call": {"name": "db__drop", "arguments": {"database": "staging"}},
        "escalation": [{"after_seconds": 1, "remind": True}, {"after_seconds": 2, "to": [f"slack:{ONCALL}"]}],
    }
)


@pytest.fixture
async def gw(fake_slack: FakeSlack, real_redis: str) -> AsyncIterator[SlackGateway]:
    async with slack_gateway(fake_slack, real_redis, sweep_interval=0.1) as gateway:
        await gateway.approvers(f"slack:{BOB}")
        yield gateway


async def posted_when(fake: FakeSlack, condition: Any) -> list[dict[str, Any]]:
    """Every message posted, once ``condition`` holds of them."""
    await fake.wait_for(lambda: condition(fake.posted()), timeout=10)
    return fake.posted()


async def test_a_reminder_mentions_who_may_answer_and_a_copy_answered_in_another_channel_settles_it(
    gw: SlackGateway,
) -> None:
    thread_ts = await gw.open_thread()
    prompt = await gw.ask(f"slack:{CHANNEL}:{thread_ts}", DROP)

    posts = await posted_when(gw.fake, lambda posts: sum(p["channel"] == ONCALL for p in posts) >= 2)
    reminder = next(p for p in posts if p.get("thread_ts") == thread_ts and "Reminder" in p["text"])
    assert f"<@{ALICE}> <@{BOB}>" in reminder["text"]
    assert any(
        block["text"]["text"] == f"<@{ALICE}> <@{BOB}>"
        for block in reminder["blocks"]
        if block["type"] == "section"
    )
    header, copy = [p for p in posts if p["channel"] == ONCALL]
    assert "thread_ts" not in header and "Escalated" in header["text"]
    assert copy["thread_ts"] == header["ts"]

    assert await gw.fake.press(gw.events_url, copy, "Approve", user=EVE) == 200
    await gw.channel.presses.idle()
    assert (await gw.runtime.gateway.get_prompt(prompt.prompt_id)).pending, "Eve may not answer"
    assert await gw.fake.press(gw.events_url, copy, "Approve", user=BOB) == 200
    await gw.channel.presses.idle()

    settled = await gw.runtime.gateway.get_prompt(prompt.prompt_id)
    assert (settled.prompt_state, settled.answered_by) == (PromptState.ANSWERED, f"slack:{BOB}")
    assert settled.escalations is not None
    assert settled.escalations[1].threads == [f"slack:{ONCALL}:{header['ts']}"]
    for channel, ts in ((CHANNEL, thread_ts), (ONCALL, header["ts"])):
        await posted_when(
            gw.fake,
            lambda posts, channel=channel, ts=ts: any(
                p["channel"] == channel and p.get("thread_ts") == ts and p["text"] == "✓ Answered: Approve"
                for p in posts
            ),
        )
    await gw.fake.wait_for(lambda: "edited" in gw.fake.message(copy))
    updated = gw.fake.message(copy)
    assert not [b for b in updated["blocks"] if b["type"] == "actions"]
