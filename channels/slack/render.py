"""Thread items as Slack messages: text in section blocks, split within Slack's limits. Pure functions."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gateway.models import ThreadItem

SECTION_LIMIT = 3_000  # characters in one section block's text
MESSAGE_TEXT_LIMIT = 40_000  # characters in a message's top-level text
MAX_BLOCKS = 50  # blocks in one message
MAX_PARTS = 10  # messages one item may become; beyond that the rest is cut, visibly
_SECTIONS_PER_MESSAGE = MAX_BLOCKS - 1  # one block is kept for the "Part i of n" marker
EMPTY_TEXT = "(empty message)"  # Slack refuses a message with no text
_ESCAPES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}


@dataclass(frozen=True, slots=True)
class SlackMessage:
    """One ``chat.postMessage`` body, minus the channel and thread: fallback text and blocks."""

    text: str
    blocks: list[dict[str, Any]]


def escape(text: str) -> str:
    """Escape the three characters Slack reads as markup in message text."""
    return "".join(_ESCAPES.get(char, char) for char in text)


def _escaped_length(char: str) -> int:
    return len(_ESCAPES.get(char, char))


def _plain_length(_char: str) -> int:
    return 1


def split_text(text: str, limit: int, cost: Callable[[str], int] = _plain_length) -> list[str]:
    """Cut ``text`` into pieces whose cost is at most ``limit``, at a line break, else a space, else anywhere.

    The line break or space a piece ends at is dropped: the piece boundary shows it.
    """
    pieces: list[str] = []
    start = 0
    while start < len(text):
        end, spent = start, 0
        while end < len(text) and spent + cost(text[end]) <= limit:
            spent += cost(text[end])
            end += 1
        if end == len(text):
            pieces.append(text[start:])
            break
        cut = text.rfind("\n", start, end + 1)
        if cut <= start:
            cut = text.rfind(" ", start, end + 1)
        if cut <= start:
            pieces.append(text[start:end])
            start = end
        else:
            pieces.append(text[start:cut])
            start = cut + 1
    return pieces or [""]


def _section(text: str, plain: bool) -> dict[str, Any]:
    if plain:
        return {"type": "section", "text": {"type": "plain_text", "text": text, "emoji": False}}
    return {"type": "section", "text": {"type": "mrkdwn", "text": escape(text), "verbatim": True}}


def _context(text: str) -> dict[str, Any]:
    return {"type": "context", "elements": [{"type": "plain_text", "text": text, "emoji": False}]}


def _group(pieces: list[str]) -> list[list[str]]:
    """Pack pieces into messages: at most 49 sections and 40,000 characters of fallback text each."""
    groups: list[list[str]] = [[]]
    size = 0
    for piece in pieces:
        piece_size = len(escape(piece)) + 1
        if groups[-1] and (
            len(groups[-1]) == _SECTIONS_PER_MESSAGE or size + piece_size > MESSAGE_TEXT_LIMIT
        ):
            groups.append([])
            size = 0
        groups[-1].append(piece)
        size += piece_size
    return groups


def render_item(item: ThreadItem) -> list[SlackMessage]:
    """The messages an item becomes, in posting order.

    Prompts and audit items are plain text, so their wording (numbered options, labels with ``*`` or
    ``_``) shows exactly as the gateway wrote it; agent messages are Slack markup. Over-long text is split
    across messages marked "Part i of n"; past ten messages the rest is cut with a visible note.
    """
    plain = item.type != "message"
    if not item.text.strip():
        return [SlackMessage(text=EMPTY_TEXT, blocks=[_section(EMPTY_TEXT, plain=True)])]
    pieces = split_text(item.text, SECTION_LIMIT, _plain_length if plain else _escaped_length)
    groups = _group(pieces)
    cut_chars = 0
    if len(groups) > MAX_PARTS:
        cut_chars = sum(len(piece) for group in groups[MAX_PARTS:] for piece in group)
        groups = groups[:MAX_PARTS]
    messages: list[SlackMessage] = []
    for number, group in enumerate(groups, start=1):
        blocks = [_section(piece, plain) for piece in group]
        notes: list[str] = []
        if len(groups) > 1:
            notes.append(f"Part {number} of {len(groups)}")
        if cut_chars and number == len(groups):
            notes.append(f"Truncated: {cut_chars} more characters were not posted (Slack message limits).")
        if notes:
            blocks.append(_context(" · ".join(notes)))
        messages.append(SlackMessage(text=escape("\n".join(group)), blocks=blocks))
    return messages


def render_notice(text: str) -> SlackMessage:
    """A private notice (ephemeral message): one plain-text section."""
    piece = split_text(text, SECTION_LIMIT)[0]
    return SlackMessage(text=escape(piece), blocks=[_section(piece, plain=True)])
