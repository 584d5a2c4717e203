"""Which Slack events become a person's message, and in which thread, from whom, saying what."""

from __future__ import annotations

from typing import Any

import pytest

from channels.slack.inbound import BotIdentity, strip_mention, to_inbound, unescape
from tests.fakes.slack import message_event

BOT = BotIdentity(user_id="U0BOT", bot_id="B0BOT")
ROOT, REPLY = "1712345678.000100", "1712345699.000200"


def test_reply_in_a_thread_belongs_to_that_thread() -> None:
    event = message_event("C0TEAM", "U0ALICE", "2", ts=REPLY, thread_ts=ROOT)
    message = to_inbound(event, "message", BOT)
    assert message is not None
    assert (message.thread_id, message.sender, message.text) == (f"slack:C0TEAM:{ROOT}", "slack:U0ALICE", "2")


def test_top_level_mention_starts_a_thread_on_itself() -> None:
    event = message_event("C0TEAM", "U0ALICE", "<@U0BOT> deploy", ts=ROOT, kind="app_mention")
    message = to_inbound(event, "app_mention", BOT)
    assert message is not None
    assert (message.thread_id, message.text) == (f"slack:C0TEAM:{ROOT}", "deploy")


def test_top_level_direct_message_starts_a_thread_on_itself() -> None:
    event = message_event("D0ALICE", "U0ALICE", "hello", ts=ROOT, channel_type="im")
    message = to_inbound(event, "message", BOT)
    assert message is not None and message.thread_id == f"slack:D0ALICE:{ROOT}"


@pytest.mark.parametrize("channel_type", ["channel", "group", "mpim"])
def test_top_level_chatter_without_a_mention_is_not_for_the_gateway(channel_type: str) -> None:
    event = message_event("C0TEAM", "U0ALICE", "lunch?", ts=ROOT, channel_type=channel_type)
    assert to_inbound(event, "message", BOT) is None


def test_message_and_mention_of_one_message_share_an_event_id() -> None:
    as_message = message_event("C0TEAM", "U0ALICE", "<@U0BOT> go", ts=REPLY, thread_ts=ROOT)
    as_mention = message_event(
        "C0TEAM", "U0ALICE", "<@U0BOT> go", ts=REPLY, thread_ts=ROOT, kind="app_mention"
    )
    first, second = to_inbound(as_message, "message", BOT), to_inbound(as_mention, "app_mention", BOT)
    assert first is not None and second is not None
    assert first.event_id == second.event_id == f"msg:C0TEAM:{REPLY}"


@pytest.mark.parametrize(
    ("extra", "allow_bots"),
    [
        pytest.param({"user": "U0BOT"}, True, id="own-bot-user"),
        pytest.param({"bot_id": "B0BOT"}, True, id="own-bot-id"),
        pytest.param({"bot_id": "B0CI"}, False, id="other-bot"),
        pytest.param({"subtype": "bot_message", "bot_id": "B0CI"}, False, id="other-bot-message"),
        pytest.param({"subtype": "message_changed"}, False, id="edit"),
        pytest.param({"subtype": "message_deleted"}, False, id="deletion"),
        pytest.param({"subtype": "channel_join"}, False, id="join"),
        pytest.param({"text": "<@U0BOT>"}, False, id="bare-mention"),
        pytest.param({"channel": "not-a-channel"}, False, id="malformed-channel"),
    ],
)
def test_events_that_are_not_a_person_speaking_are_ignored(extra: dict[str, Any], allow_bots: bool) -> None:
    event = message_event("C0TEAM", "U0ALICE", "2", ts=REPLY, thread_ts=ROOT)
    event.update(extra)
    assert to_inbound(event, "message", BOT, allow_bots=allow_bots) is None


def test_other_bots_are_heard_when_allowed() -> None:
    event = message_event("C0TEAM", "U0CIBOT", "build passed", ts=REPLY, thread_ts=ROOT, bot_id="B0CI")
    message = to_inbound(event, "message", BOT, allow_bots=True)
    assert message is not None and message.sender == "slack:U0CIBOT"


@pytest.mark.parametrize("subtype", ["thread_broadcast", "file_share", "me_message"])
def test_subtypes_that_are_still_a_person_speaking_are_heard(subtype: str) -> None:
    event = message_event("C0TEAM", "U0ALICE", "2", ts=REPLY, thread_ts=ROOT, subtype=subtype)
    assert to_inbound(event, "message", BOT) is not None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<@U0BOT> 2", "2"),
        ("<@U0BOT>: yes", "yes"),
        ("<@U0BOT|threadgate>, 1, 3", "1, 3"),
        ("  <@U0BOT>   approve  ", "approve"),
        ("ask <@U0BOT> later", "ask <@U0BOT> later"),
        ("<@U0OTHER> 2", "<@U0OTHER> 2"),
    ],
)
def test_a_leading_mention_of_the_app_is_not_part_of_the_answer(text: str, expected: str) -> None:
    assert strip_mention(text, "U0BOT") == expected


def test_slack_escapes_are_undone() -> None:
    assert unescape("a &lt;b&gt; &amp;amp; c") == "a <b> &amp; c"
    event = message_event("C0TEAM", "U0ALICE", "R&amp;D &lt;3", ts=REPLY, thread_ts=ROOT)
    message = to_inbound(event, "message", BOT)
    assert message is not None and message.text == "R&D <3"
