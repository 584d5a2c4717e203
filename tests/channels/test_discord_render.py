"""How thread items become Discord messages, and how Discord text and ids read back. Pure functions."""

from __future__ import annotations

import pytest

from channels.discord.inbound import user_id_of, without_bot_mention
from channels.discord.render import EMPTY_TEXT, MAX_MESSAGE_CHARS, render_item, split_text
from gateway.base.models import TextContent, ThreadItem

BOT = 900_000_000_000_000_001


def item(kind: str, text: str, prompt_id: str | None = None) -> ThreadItem:
    metadata = {"type": kind, "prompt": {"prompt_id": prompt_id}} if prompt_id else {}
    return ThreadItem(type=kind, content=[TextContent(text=text)], metadata=metadata)  # type: ignore[arg-type]


def test_text_within_the_limit_is_sent_exactly_as_it_is() -> None:
    text = "What's the deployment target?\n  1. staging — push to staging.example.com"
    assert split_text(text) == [text]
    assert split_text("x" * MAX_MESSAGE_CHARS) == ["x" * MAX_MESSAGE_CHARS]


def test_longer_text_is_split_at_line_breaks_and_each_part_is_numbered() -> None:
    lines = [f"line {index:03d} " + "y" * 90 for index in range(40)]  # about 4,000 characters

    parts = split_text("\n".join(lines))

    assert len(parts) == 3
    assert all(len(part) <= MAX_MESSAGE_CHARS for part in parts)
    assert [part.rsplit("\n", 1)[1] for part in parts] == ["(1/3)", "(2/3)", "(3/3)"]
    bodies = [part.rsplit("\n", 1)[0].strip("\n") for part in parts]
    assert "\n".join(bodies).split("\n") == lines  # no line was cut in two


def test_text_without_breaks_is_split_hard_and_nothing_is_lost() -> None:
    text = "z" * 4500

    parts = split_text(text)

    assert all(len(part) <= MAX_MESSAGE_CHARS for part in parts)
    assert "".join(part.rsplit("\n", 1)[0] for part in parts) == text


def test_text_beyond_the_part_limit_is_cut_with_a_note_of_what_was_left_out() -> None:
    text = "word " * 4000  # 20,000 characters

    parts = split_text(text, max_parts=3)

    assert len(parts) == 3
    assert all(len(part) <= MAX_MESSAGE_CHARS for part in parts)
    kept = sum(len(part.rsplit("\n", 1)[0]) for part in parts[:2])
    last_body = parts[2].rsplit("\n", 2)[0]
    note = parts[2].rsplit("\n", 2)[1]
    assert note == f"… ({len(text) - kept - len(last_body)} more characters not shown)"
    assert parts[2].endswith("(3/3)")


@pytest.mark.parametrize("text", ["", "   ", "\n"])
def test_blank_text_is_posted_as_a_visible_placeholder(text: str) -> None:
    assert split_text(text) == [EMPTY_TEXT]


def test_a_prompts_messages_get_the_same_nonce_every_time_so_a_resend_is_not_posted_twice() -> None:
    first = render_item(item("pending_prompt", "Deploy?", "prm_1"))
    again = render_item(item("pending_prompt", "Deploy?", "prm_1"))
    audit = render_item(item("pending_prompt_resolved", "✓ Answered: yes", "prm_1"))
    other = render_item(item("pending_prompt", "Deploy?", "prm_2"))

    assert first == again
    assert first[0].nonce is not None and len(first[0].nonce) <= 25
    assert len({first[0].nonce, audit[0].nonce, other[0].nonce}) == 3


def test_agent_messages_leave_the_nonce_to_each_send() -> None:
    [message] = render_item(item("message", "hello"))
    assert message.content == "hello"
    assert message.nonce is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"<@{BOT}> 2", "2"),
        (f"<@!{BOT}>   approve", "approve"),
        (f"  <@{BOT}>\nstaging", "staging"),
        (f"2 <@{BOT}>", f"2 <@{BOT}>"),
        ("<@123> 2", "<@123> 2"),
    ],
)
def test_only_a_leading_mention_of_the_bot_is_dropped(text: str, expected: str) -> None:
    assert without_bot_mention(text, BOT) == expected


@pytest.mark.parametrize(
    ("identity", "expected"),
    [("discord:80351110224678912", 80351110224678912), ("slack:U0123", None), ("discord:abc", None)],
)
def test_only_discord_identities_name_a_discord_user(identity: str, expected: int | None) -> None:
    assert user_id_of(identity) == expected
