"""Thread items as Telegram messages: plain text within the 4,096-character limit, split visibly."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from gateway.sdk import (
    Marks,
    ThreadItem,
    form_outcome,
    keep_end,
    split_marked,
    utf16_units,
    votes_of,
    votes_text,
)
from gateway.sdk import utf16_len as utf16_len

MAX_MESSAGE_UNITS = 4096
MAX_PARTS = 10
PLACEHOLDER = "Your answer"
EMPTY = "(empty message)"
MARKS = Marks(
    part="\n[{number}/{total}]",
    cut="\n… [truncated: {count} more characters not shown]",
    earlier="… [{count} earlier characters not shown]\n",
    cost=utf16_units,  # Telegram counts UTF-16 code units
)


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
    # People the message notifies besides (a reminder's): each named by their user id in the text.
    named: tuple[Mention, ...] = ()


def split_text(text: str, limit: int = MAX_MESSAGE_UNITS, max_parts: int = MAX_PARTS) -> list[str]:
    """``text`` in parts of at most ``limit`` units, marked ``[i/n]``; past ``max_parts`` the rest is cut
    and the last part says how many characters were not shown."""
    return split_marked(text, limit, max_parts, MARKS)


def fit_tail(text: str, limit: int = MAX_MESSAGE_UNITS) -> str:
    """``text`` in one message: whole when it fits, else its end (where a settled prompt's outcome is),
    with a note of how many characters of the start were left out."""
    return keep_end(text, limit, MARKS)


def asking_for_reply(parts: list[str], *, reply_to: int | None = None) -> list[Outgoing]:
    """A question's messages: the last asks for a reply (selective ForceReply), so answers reach the bot
    in groups with privacy mode on; the first answers ``reply_to``, whose sender the ForceReply is for."""
    last = len(parts) - 1
    return [
        Outgoing(text=part, force_reply=index == last, reply_to=reply_to if index == 0 else None)
        for index, part in enumerate(parts)
    ]


def settled_text(item: ThreadItem, by: str | None = None) -> str:
    """A settled prompt's text; an answered form's one-line outcome becomes a field a line; ``by`` (who
    answered) is the last line."""
    text = form_outcome(item) or item.text
    return f"{text}\n{by}" if by else text


def votes_message(item: ThreadItem, name: Callable[[str], str] = str) -> Outgoing | None:
    """An approval's votes so far (the core's ``votes`` item) as one short line, each approver shown by
    ``name``; None when the item is not one."""
    votes = votes_of(item)
    if votes is None:
        return None
    return Outgoing(split_text(votes_text(*votes, name), max_parts=1)[0])


def user_id(identity: str) -> int | None:
    """The user id of a Telegram person (``telegram:<id>``); None for anyone else."""
    platform, _, raw = identity.partition(":")
    return int(raw) if platform == "telegram" and raw.isdigit() and len(raw) <= 15 else None


def render_item(item: ThreadItem, *, reply_to: int | None = None, by: str | None = None) -> list[Outgoing]:
    """The messages an item becomes: a pending prompt asks for a reply; the first answers ``reply_to``;
    an audit item ends with ``by``, who answered. The people an item names (``metadata["mentions"]``) are
    mentioned on a line of its last message."""
    text = settled_text(item, by)
    parts = split_text(text if text.strip() else EMPTY)
    if item.type == "pending_prompt":
        return asking_for_reply(parts, reply_to=reply_to)
    messages = [
        Outgoing(text=part, reply_to=reply_to if index == 0 else None) for index, part in enumerate(parts)
    ]
    people = _named(item)
    if people:
        last = messages[-1]
        line, named = [], []
        offset = utf16_len(last.text) + 1
        for person in people:
            label = str(person)
            named.append(Mention(person, label, offset, utf16_len(label)))
            line.append(label)
            offset += utf16_len(label) + 2
        messages[-1] = Outgoing(f"{last.text}\n{', '.join(line)}", reply_to=last.reply_to, named=tuple(named))
    return messages


def _named(item: ThreadItem) -> list[int]:
    named = item.metadata.get("mentions")
    people = named if isinstance(named, list) else []
    return list(dict.fromkeys(user for one in people if isinstance(one, str) and (user := user_id(one))))
