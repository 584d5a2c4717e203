"""Rendering thread items as Telegram messages: limits measured as Telegram measures them, splits visible."""

from __future__ import annotations

import pytest

from channels.telegram.render import (
    EMPTY,
    MAX_MESSAGE_UNITS,
    Outgoing,
    render_item,
    split_text,
    utf16_len,
)
from gateway.base.models import TextContent, ThreadItem
from gateway.rules.render import message_item


def prompt_item(text: str) -> ThreadItem:
    return ThreadItem(
        type="pending_prompt",
        content=[TextContent(text=text)],
        metadata={"type": "pending_prompt", "prompt": {"prompt_id": "prm_1"}},
    )


def body(parts: list[str]) -> str:
    """The parts without their ``[i/n]`` markers, joined back."""
    return "\n".join(part.rsplit("\n", 1)[0] for part in parts)


def test_text_within_the_limit_is_sent_as_it_stands() -> None:
    text = "x" * MAX_MESSAGE_UNITS

    assert split_text(text) == [text]


def test_characters_outside_the_bmp_count_twice_as_telegram_counts_them() -> None:
    assert utf16_len("ok 👍") == 5
    text = "👍" * (MAX_MESSAGE_UNITS // 2 + 1)  # 2,049 characters, 4,098 units

    parts = split_text(text)

    assert len(parts) == 2
    assert all(utf16_len(part) <= MAX_MESSAGE_UNITS for part in parts)
    assert "".join(part.rsplit("\n", 1)[0] for part in parts) == text


def test_long_text_is_split_at_line_breaks_and_each_part_is_marked() -> None:
    lines = [f"{number:03d} " + "y" * 95 for number in range(100)]  # 100 lines of 99 characters
    text = "\n".join(lines)

    parts = split_text(text)

    assert [part.rsplit("\n", 1)[1] for part in parts] == ["[1/3]", "[2/3]", "[3/3]"]
    assert all(len(part) <= MAX_MESSAGE_UNITS for part in parts)
    assert all(part.rsplit("\n", 1)[0].split("\n")[-1] in lines for part in parts)  # no line is cut
    assert body(parts) == text


def test_a_word_longer_than_a_message_is_cut_hard() -> None:
    text = "z" * 10_000

    parts = split_text(text)

    assert len(parts) == 3
    assert "".join(part.rsplit("\n", 1)[0] for part in parts) == text


def test_beyond_the_part_limit_the_rest_is_cut_and_the_cut_is_said() -> None:
    text = "w" * 50_000

    parts = split_text(text, max_parts=3)

    assert len(parts) == 3
    assert all(len(part) <= MAX_MESSAGE_UNITS for part in parts)
    last_body = parts[-1].rsplit("\n", 1)[0]
    shown = sum(len(part.rsplit("\n", 1)[0]) for part in parts[:-1]) + last_body.index("\n")
    assert last_body.endswith(f"… [truncated: {50_000 - shown} more characters not shown]")


def test_a_prompt_asks_for_a_reply_on_its_last_part_and_answers_the_turn_on_its_first() -> None:
    question = "Pick one?\n" + "\n".join(f"  {n}. option {n} — " + "d" * 290 for n in range(1, 26))

    messages = render_item(prompt_item(question), reply_to=42)

    assert len(messages) == 2
    assert [(m.force_reply, m.reply_to) for m in messages] == [(False, 42), (True, None)]


def test_a_short_prompt_is_one_message_with_its_exact_text() -> None:
    text = "What's the deployment target?\n  1. staging — push to staging.example.com"

    assert render_item(prompt_item(text)) == [Outgoing(text, force_reply=True)]


@pytest.mark.parametrize("text", ["", "   \n"])
def test_an_empty_message_is_posted_visibly_rather_than_refused(text: str) -> None:
    assert render_item(message_item(text)) == [Outgoing(EMPTY)]


def test_agent_messages_and_audit_items_do_not_ask_for_a_reply() -> None:
    audit = ThreadItem(type="pending_prompt_resolved", content=[TextContent(text="✓ Answered: staging")])

    assert render_item(audit, reply_to=7) == [Outgoing("✓ Answered: staging", reply_to=7)]
    assert render_item(message_item("done")) == [Outgoing("done")]
