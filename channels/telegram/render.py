"""Thread items as Telegram messages: plain text within the 4,096-character limit, split visibly."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gateway.models import ThreadItem
from gateway.render import NO_SELECTION

MAX_MESSAGE_UNITS = 4096  # Telegram counts UTF-16 code units
MAX_PARTS = 10
PLACEHOLDER = "Your answer"
EMPTY = "(empty message)"
_MARKER_RESERVE = 12  # room for "\n[10/10]"
_TRUNCATED = "\n… [truncated: {n} more characters not shown]"


@dataclass(frozen=True, slots=True)
class Button:
    """An inline keyboard button: what it says and the callback data it sends when pressed, or the link
    it opens (``url``, then ``data`` is empty)."""

    text: str
    data: str
    url: str | None = None


Keyboard = tuple[tuple[Button, ...], ...]


@dataclass(frozen=True, slots=True)
class Mention:
    """A person named in a message's text (UTF-16 offsets), so a selective ForceReply is for them."""

    user_id: int
    first_name: str
    offset: int
    length: int


@dataclass(frozen=True, slots=True)
class Outgoing:
    """One ``sendMessage``: its text, whether it asks for a reply or carries buttons, the message it
    answers, and the person it names."""

    text: str
    force_reply: bool = False
    reply_to: int | None = None
    keyboard: Keyboard | None = None
    mention: Mention | None = None


def utf16_len(text: str) -> int:
    """Length as Telegram measures it: characters outside the BMP count twice."""
    return len(text) + sum(1 for char in text if ord(char) > 0xFFFF)


def _fit(text: str, budget: int) -> int:
    """The largest prefix length (in characters) whose UTF-16 length is within ``budget``."""
    used = 0
    for index, char in enumerate(text):
        used += 2 if ord(char) > 0xFFFF else 1
        if used > budget:
            return index
    return len(text)


def _cut(text: str, budget: int) -> int:
    """Where to end a part: at a line break or a space in its second half when there is one."""
    end = _fit(text, budget)
    if end == len(text):
        return end
    for separator in ("\n", " "):
        at = text.rfind(separator, 0, end)
        if at > end // 2:
            return at + 1
    return end


def split_text(text: str, limit: int = MAX_MESSAGE_UNITS, max_parts: int = MAX_PARTS) -> list[str]:
    """``text`` in parts of at most ``limit`` units. Parts are marked ``[i/n]``; beyond ``max_parts`` the
    rest is cut and the last part says how many characters were not shown."""
    if utf16_len(text) <= limit:
        return [text]
    budget = limit - _MARKER_RESERVE
    parts: list[str] = []
    rest = text
    while rest and len(parts) < max_parts:
        end = _cut(rest, budget)
        parts.append(rest[:end].rstrip("\n"))
        rest = rest[end:]
    if rest:
        last = parts[-1]
        notice = _TRUNCATED.format(n=len(rest) + len(last))  # an upper bound, refined below
        keep = _fit(last, budget - utf16_len(notice))
        parts[-1] = last[:keep] + _TRUNCATED.format(n=len(rest) + len(last) - keep)
    total = len(parts)
    return [f"{part}\n[{number}/{total}]" for number, part in enumerate(parts, start=1)]


def fit_tail(text: str, limit: int = MAX_MESSAGE_UNITS) -> str:
    """``text`` in one message: whole when it fits, else its end (where a settled prompt's outcome is),
    with a note of how many characters of the start were left out."""
    if utf16_len(text) <= limit:
        return text
    note = "… [{n} earlier characters not shown]\n"
    room = limit - utf16_len(note.format(n=len(text)))
    keep = _fit(text[::-1], room)
    tail = text[len(text) - keep :]
    return note.format(n=len(text) - len(tail)) + tail


def asking_for_reply(parts: list[str], *, reply_to: int | None = None) -> list[Outgoing]:
    """A question's messages: the last asks for a reply (selective ForceReply), so answers reach the bot
    in groups with privacy mode on; the first answers ``reply_to``, whose sender the ForceReply is for."""
    last = len(parts) - 1
    return [
        Outgoing(text=part, force_reply=index == last, reply_to=reply_to if index == 0 else None)
        for index, part in enumerate(parts)
    ]


def _answered_form(item: ThreadItem) -> list[dict[str, Any]] | None:
    """The answers of an answered form's item, each ``{question, answer}``; None for any other item."""
    meta = item.metadata.get("prompt")
    if not isinstance(meta, dict) or (meta.get("kind"), meta.get("prompt_state")) != ("form", "answered"):
        return None
    answers = meta.get("answers")
    if not isinstance(answers, list) or not all(isinstance(answer, dict) for answer in answers):
        return None
    return answers


def _shown(answer: dict[str, Any]) -> str:
    values = answer.get("answer")
    return ", ".join(str(value) for value in values) if isinstance(values, list) and values else NO_SELECTION


def form_outcome(item: ThreadItem) -> str | None:
    """An answered form's outcome a field a line (``Environment: prod``); None for any other item."""
    answers = _answered_form(item)
    if answers is None:
        return None
    return "\n".join(["✓ Answered:", *(f"{answer.get('question')}: {_shown(answer)}" for answer in answers)])


def settled_text(item: ThreadItem) -> str:
    """A settled prompt's text; an answered form's one-line outcome becomes a field a line."""
    outcome, answers = form_outcome(item), _answered_form(item)
    if outcome is None or answers is None:
        return item.text
    line = f"✓ Answered: {' · '.join(_shown(answer) for answer in answers)}"
    if not item.text.endswith(line):
        return item.text
    head = item.text.removesuffix(line).rstrip()
    return f"{head}\n\n{outcome}" if head else outcome


def render_item(item: ThreadItem, *, reply_to: int | None = None) -> list[Outgoing]:
    """The messages an item becomes: a pending prompt asks for a reply; the first answers ``reply_to``."""
    text = settled_text(item)
    parts = split_text(text if text.strip() else EMPTY)
    if item.type == "pending_prompt":
        return asking_for_reply(parts, reply_to=reply_to)
    return [
        Outgoing(text=part, reply_to=reply_to if index == 0 else None) for index, part in enumerate(parts)
    ]
