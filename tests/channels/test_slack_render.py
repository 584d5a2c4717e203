"""How thread items become Slack messages: exact prompt text, markup escaping, Slack's size limits."""

from __future__ import annotations

import pytest

from channels.slack.render import (
    EMPTY_TEXT,
    MAX_BLOCKS,
    MAX_PARTS,
    MESSAGE_TEXT_LIMIT,
    SECTION_LIMIT,
    SlackMessage,
    escape,
    render_item,
    render_notice,
    split_text,
)
from gateway.base.models import TextContent, ThreadItem

PROMPT_TEXT = "Pick one\n  1. *bold_label* — a & b\n  2. <none> — nothing"


def item(kind: str, *texts: str) -> ThreadItem:
    return ThreadItem(type=kind, content=[TextContent(text=text) for text in texts])


def sections(message: SlackMessage) -> list[dict[str, str]]:
    return [block["text"] for block in message.blocks if block["type"] == "section"]


def notes(message: SlackMessage) -> list[str]:
    return [block["elements"][0]["text"] for block in message.blocks if block["type"] == "context"]


def test_prompt_text_is_posted_exactly_as_plain_text() -> None:
    [message] = render_item(item("pending_prompt", PROMPT_TEXT))
    assert sections(message) == [{"type": "plain_text", "text": PROMPT_TEXT, "emoji": False}]
    assert notes(message) == []


def test_fallback_text_escapes_slack_markup_characters() -> None:
    [message] = render_item(item("pending_prompt", PROMPT_TEXT))
    assert message.text == "Pick one\n  1. *bold_label* — a &amp; b\n  2. &lt;none&gt; — nothing"


def test_agent_messages_are_slack_markup_with_control_characters_escaped() -> None:
    [message] = render_item(item("message", "use *bold* & <tags>"))
    assert sections(message) == [
        {"type": "mrkdwn", "text": "use *bold* &amp; &lt;tags&gt;", "verbatim": True}
    ]


def test_audit_item_is_plain_text() -> None:
    [message] = render_item(item("pending_prompt_resolved", "✓ Answered: a_b_c"))
    assert sections(message)[0]["type"] == "plain_text"


def test_text_over_one_section_is_split_at_line_breaks_into_several_sections() -> None:
    lines = [f"{n:04d} " + "x" * 95 for n in range(60)]  # 100 characters a line, 6,000 in all
    [message] = render_item(item("pending_prompt", "\n".join(lines)))
    texts = [section["text"] for section in sections(message)]
    assert all(len(text) <= SECTION_LIMIT for text in texts)
    assert "\n".join(texts) == "\n".join(lines)
    assert all(text.endswith("x") for text in texts)  # no line was cut in two


def test_text_over_one_message_is_split_into_marked_parts() -> None:
    source = item("message", *["word " * 7_999 + "word"] * 3)  # 120,000 characters
    messages = render_item(source)
    assert len(messages) == 3
    assert [notes(m) for m in messages] == [["Part 1 of 3"], ["Part 2 of 3"], ["Part 3 of 3"]]
    for message in messages:
        assert len(message.text) <= MESSAGE_TEXT_LIMIT
        assert len(message.blocks) <= MAX_BLOCKS
        assert all(len(section["text"]) <= SECTION_LIMIT for section in sections(message))
    words = " ".join(section["text"] for m in messages for section in sections(m)).split()
    assert words == source.text.split()


def test_escaping_counts_towards_the_section_limit() -> None:
    [message] = render_item(item("message", "&" * 1_000))  # 5,000 characters once escaped
    texts = [section["text"] for section in sections(message)]
    assert all(len(text) <= SECTION_LIMIT for text in texts)
    assert "".join(texts) == "&amp;" * 1_000


def test_text_past_the_last_part_is_cut_with_a_visible_note() -> None:
    source = item("pending_prompt", *["y" * 39_000] * (MAX_PARTS + 2))
    messages = render_item(source)
    assert len(messages) == MAX_PARTS
    posted = sum(len(section["text"]) for m in messages for section in sections(m))
    separators = len(source.text) - len(source.text.replace("\n", ""))
    cut = len(source.text) - separators - posted
    assert cut > 0
    assert notes(messages[-1]) == [
        f"Part {MAX_PARTS} of {MAX_PARTS} · "
        f"Truncated: {cut} more characters were not posted (Slack message limits)."
    ]


def test_empty_item_is_posted_visibly() -> None:
    [message] = render_item(item("message", "  "))
    assert message.text == EMPTY_TEXT
    assert sections(message)[0]["text"] == EMPTY_TEXT


def test_several_contents_are_joined_by_lines() -> None:
    [message] = render_item(item("message", "first", "second"))
    assert sections(message)[0]["text"] == "first\nsecond"


@pytest.mark.parametrize(
    ("text", "limit", "pieces"),
    [
        ("short", 10, ["short"]),
        ("aaaa\nbbbb\ncccc", 9, ["aaaa\nbbbb", "cccc"]),
        ("aaaa bbbb cccc", 9, ["aaaa bbbb", "cccc"]),
        ("abcdefghij", 4, ["abcd", "efgh", "ij"]),
        ("", 4, [""]),
    ],
)
def test_split_prefers_line_breaks_then_spaces_then_cuts_anywhere(
    text: str, limit: int, pieces: list[str]
) -> None:
    assert split_text(text, limit) == pieces


def test_escape_leaves_other_characters_alone() -> None:
    assert escape("a<b>&c — ✓") == "a&lt;b&gt;&amp;c — ✓"


def test_private_notice_is_one_plain_section() -> None:
    message = render_notice("Only approvers may answer.")
    assert sections(message) == [{"type": "plain_text", "text": "Only approvers may answer.", "emoji": False}]
