"""Thread items as Slack messages: text in section blocks within Slack's limits, a prompt's controls. Pure."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from channels.slack.controls import control_blocks
from channels.slack.forms import form_controls, url_controls
from gateway.sdk import (
    PromptKind,
    PromptView,
    Question,
    ThreadItem,
    form_outcome,
    notices,
    one,
    prompt_text,
    split_text,
    votes_of,
    votes_text,
)

SECTION_LIMIT = 3_000  # characters in one section block's text
MESSAGE_TEXT_LIMIT = 40_000  # characters in a message's top-level text
MAX_BLOCKS = 50  # blocks in one message
MAX_PARTS = 10  # messages one item may become; beyond that the rest is cut, visibly
_SECTIONS_PER_MESSAGE = MAX_BLOCKS - 1  # one block is kept for the "Part i of n" marker
CONTROL_RESERVE = 3  # blocks kept free for a prompt's controls (tool call, options, buttons)
EMPTY_TEXT = "(empty message)"  # Slack refuses a message with no text
ANSWERED_MARK = "✓ Answered"
NO_VALUE = "—"  # an optional field left empty
PERSON_PREFIX = "slack:"
_ESCAPES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
_SLACK_USER = re.compile(r"[UW][A-Z0-9]{1,30}", re.ASCII)


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


def _section(text: str, plain: bool) -> dict[str, Any]:
    if plain:
        return {"type": "section", "text": {"type": "plain_text", "text": text, "emoji": False}}
    return {"type": "section", "text": {"type": "mrkdwn", "text": escape(text), "verbatim": True}}


def _context(text: str) -> dict[str, Any]:
    return {"type": "context", "elements": [{"type": "plain_text", "text": text, "emoji": False}]}


def person(identity: str) -> str:
    """How a person is shown in message markup: a Slack user as a mention, which Slack shows as their
    current display name; anyone else (a REST answer's identity) as the identity, escaped."""
    user = identity.removeprefix(PERSON_PREFIX)
    return f"<@{user}>" if identity.startswith(PERSON_PREFIX) and user.isalnum() else escape(identity)


def code(text: str) -> str:
    """A grant's pattern as inline code, escaped: a command is never read as a mention or a link."""
    return notices.code(escape(text))


def answered_by(item: ThreadItem) -> list[dict[str, Any]]:
    """The context block naming who answered a settled prompt (the core's line); none for other items."""
    line = notices.answered_by(item, person, code)
    return [{"type": "context", "elements": [{"type": "mrkdwn", "text": line}]}] if line else []


def _group(pieces: list[str], reserve: int = 0) -> list[list[str]]:
    """Pack pieces into messages: at most 49 sections (less ``reserve`` blocks kept for controls) and
    40,000 characters of fallback text each."""
    groups: list[list[str]] = [[]]
    size = 0
    for piece in pieces:
        piece_size = len(escape(piece)) + 1
        if groups[-1] and (
            len(groups[-1]) == _SECTIONS_PER_MESSAGE - reserve or size + piece_size > MESSAGE_TEXT_LIMIT
        ):
            groups.append([])
            size = 0
        groups[-1].append(piece)
        size += piece_size
    return groups


def mention(identity: str) -> str | None:
    """``<@U0123ABC>`` for a Slack person (Slack notifies them); None for anyone else."""
    platform, _, user = identity.partition(":")
    return f"<@{user}>" if platform == "slack" and _SLACK_USER.fullmatch(user) else None


def _mentions(item: ThreadItem) -> str:
    """The markup that notifies the people an item names (``metadata["mentions"]``), on one line."""
    named = item.metadata.get("mentions")
    people = named if isinstance(named, list) else []
    return " ".join(markup for person in people if isinstance(person, str) and (markup := mention(person)))


def render_item(item: ThreadItem) -> list[SlackMessage]:
    """The messages an item becomes, in posting order.

    Prompts and audit items are plain text, so their wording (numbered options, labels with ``*`` or
    ``_``) shows exactly as the gateway wrote it; agent messages are Slack markup. Over-long text is split
    across messages marked "Part i of n"; past ten messages the rest is cut with a visible note. A
    pending prompt's controls follow its text in its last message (see ``controls``).
    """
    votes = render_votes(item)
    if votes is not None:
        return [votes]
    plain = item.type != "message"
    if not item.text.strip():
        return [SlackMessage(text=EMPTY_TEXT, blocks=[_section(EMPTY_TEXT, plain=True)])]
    extra = _controls(item) + answered_by(item)
    text = settled_text(item)
    messages = _render_text(text, plain, reserve=CONTROL_RESERVE if extra else 0)
    last = messages[-1]
    if named := _mentions(item):  # its markup is ours, never the item's text: kept unescaped
        section = {"type": "section", "text": {"type": "mrkdwn", "text": named}}
        last = SlackMessage(text=f"{last.text}\n{named}", blocks=[*last.blocks, section])
    messages[-1] = SlackMessage(text=last.text, blocks=last.blocks + extra)
    return messages


def _controls(item: ThreadItem) -> list[dict[str, Any]]:
    """A pending prompt's controls, by its kind; none for other items."""
    prompt = item.metadata.get("prompt") if item.type == "pending_prompt" else None
    if not isinstance(prompt, dict) or not isinstance(prompt.get("prompt_id"), str):
        return []
    if prompt.get("kind") == PromptKind.FORM:
        return form_controls(prompt["prompt_id"])
    if prompt.get("kind") == PromptKind.URL:
        url = prompt.get("url")
        return url_controls(prompt["prompt_id"], url) if isinstance(url, str) else []
    return control_blocks(prompt) if PromptView.of_metadata(item.metadata) is not None else []


def settled_text(item: ThreadItem) -> str:
    """The item's text; an answered form's outcome reads one ``title: value`` line per field."""
    return form_outcome(item, header=ANSWERED_MARK, empty=NO_VALUE) or item.text


def _render_text(text: str, plain: bool, reserve: int = 0) -> list[SlackMessage]:
    pieces = split_text(text, SECTION_LIMIT, one if plain else _escaped_length)
    groups = _group(pieces, reserve)
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


def render_settled(item: ThreadItem) -> SlackMessage:
    """What a settled prompt's message becomes (``settled_prompt_item``): its text, then the outcome and
    who answered, and no controls. A prompt that took several messages keeps its earlier parts; the last
    one, which carried the controls, becomes this."""
    by = answered_by(item)
    questions = (item.metadata.get("prompt") or {}).get("questions") or []
    body = prompt_text([Question.model_validate(question) for question in questions]) if questions else ""
    if not body or not item.text.startswith(body):
        first = _render_text(settled_text(item), plain=True, reserve=len(by))[0]
        return SlackMessage(text=first.text, blocks=first.blocks + by)
    outcome = item.text[len(body) :].strip("\n")
    last = _render_text(body, plain=True, reserve=CONTROL_RESERVE)[-1]
    outcome_sections = [_section(piece, plain=True) for piece in split_text(outcome, SECTION_LIMIT)]
    text = f"{last.text}\n\n{escape(outcome)}"[:MESSAGE_TEXT_LIMIT]
    return SlackMessage(text=text, blocks=(last.blocks + outcome_sections)[: MAX_BLOCKS - len(by)] + by)


def _person(identity: str) -> str:
    """A person in message markup: a Slack user as a mention, which Slack shows as their name."""
    platform, _, user = identity.partition(":")
    return f"<@{user}>" if platform == "slack" and _SLACK_USER.fullmatch(user) else escape(identity)


def render_votes(item: ThreadItem) -> SlackMessage | None:
    """An approval's votes so far (the core's ``votes`` item) as one small context line in the thread,
    approvers by name; None when the item is not one, or its votes do not read."""
    votes = votes_of(item)
    if votes is None:
        return None
    line = votes_text(*votes, _person)
    block = {"type": "context", "elements": [{"type": "mrkdwn", "text": line[:SECTION_LIMIT]}]}
    return SlackMessage(text=line[:MESSAGE_TEXT_LIMIT], blocks=[block])


def render_notice(text: str) -> SlackMessage:
    """A private notice (ephemeral message): one plain-text section."""
    piece = split_text(text, SECTION_LIMIT)[0]
    return SlackMessage(text=escape(piece), blocks=[_section(piece, plain=True)])
