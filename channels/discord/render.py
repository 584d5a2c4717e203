"""Render a thread item as Discord messages: within the 2,000-character limit, split or cut visibly."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import discord

from channels.discord.inbound import user_id_of
from gateway.sdk import (
    Marks,
    PromptKind,
    ThreadItem,
    form_outcome,
    keep_end,
    notices,
    split_marked,
    votes_of,
    votes_text,
)

MAX_MESSAGE_CHARS = 2000
MAX_PARTS = 5
EMPTY_TEXT = "(empty message)"
NOT_GIVEN = "—"
SMALL = "-# "  # a line of subtext
MARKS = Marks(
    part="\n({number}/{total})",
    cut="\n… ({count} more characters not shown)",
    earlier="… ({count} earlier characters not shown)\n",
)


@dataclass(frozen=True, slots=True)
class DiscordMessage:
    """One message to send. ``nonce`` lets Discord drop a repeated send of the same part."""

    content: str
    nonce: str | None = None
    # The people it notifies (the only mentions Discord is allowed to act on in it).
    mentions: tuple[int, ...] = ()


def mention_id(identity: str) -> int | None:
    """The user id a Discord person is mentioned by (``<@id>``); None for anyone else."""
    platform, _, raw = identity.partition(":")
    return int(raw) if platform == "discord" and raw.isdigit() and len(raw) <= 25 else None


def render_item(item: ThreadItem, channel_id: int | None = None) -> list[DiscordMessage]:
    """The messages an item becomes, in order (a pending prompt's controls go on the last); an approval's
    ends with how a typed reply answers it, and its votes so far are one line. The people an item names
    (``metadata["mentions"]``) are mentioned on a line of its last message. A prompt's nonces are its own
    in ``channel_id`` (its copy in another channel is another message)."""
    votes = votes_message(item)
    if votes is not None:
        return [votes]
    parts = split_text(item_text(item) + approval_hint(item))
    named = item.metadata.get("mentions")
    people = tuple(
        dict.fromkeys(
            user for person in named if isinstance(person, str) and (user := mention_id(person)) is not None
        )
        if isinstance(named, list)
        else ()
    )
    if people:
        line = " ".join(f"<@{user}>" for user in people)
        return [
            *(DiscordMessage(part) for part in parts[:-1]),
            DiscordMessage(f"{parts[-1]}\n{line}", None, people),
        ]
    prompt_id = prompt_id_of(item)
    if prompt_id is None:
        return [DiscordMessage(part) for part in parts]
    return [
        DiscordMessage(part, stable_nonce(f"{channel_id or ''}:{item.type}:{prompt_id}:{index}"))
        for index, part in enumerate(parts)
    ]


def approval_hint(item: ThreadItem) -> str:
    """Under a pending approval's text, small: how a typed reply denies it (with a reason) or edits it."""
    prompt = item.metadata.get("prompt")
    if item.type != "pending_prompt" or not isinstance(prompt, dict):
        return ""
    if prompt.get("kind") != PromptKind.APPROVAL.value:
        return ""
    return f"\n\n{SMALL}{notices.approval_hint(prompt.get('editable') is True)}"


def votes_message(item: ThreadItem) -> DiscordMessage | None:
    """An approval's votes so far (the core's ``votes`` item) as one short line, approvers by name; None
    when the item is not one."""
    votes = votes_of(item)
    if votes is None:
        return None
    return DiscordMessage(split_text(votes_text(*votes, person), max_parts=1)[0])


def item_text(item: ThreadItem) -> str:
    """The item's text; an answered form's outcome reads one ``Title: value`` line per field; an answered
    prompt's ends with who answered, in small print (``-# Approved by @alice``)."""
    text = form_outcome(item, empty=NOT_GIVEN) or item.text
    by = notices.answered_by(item, person)
    return f"{text}\n{SMALL}{by}" if by else text


def person(identity: str) -> str:
    """A Discord user as a mention, which Discord shows as their name (messages are sent with mentions
    off, so nobody is pinged); anyone else (a REST answer's identity) as the identity, markdown escaped."""
    user_id = user_id_of(identity)
    return f"<@{user_id}>" if user_id is not None else discord.utils.escape_markdown(identity)


def prompt_id_of(item: ThreadItem) -> str | None:
    """The prompt a pending_prompt or its audit item belongs to (``None`` for agent messages)."""
    prompt = item.metadata.get("prompt")
    if isinstance(prompt, dict) and isinstance(prompt.get("prompt_id"), str):
        return str(prompt["prompt_id"])
    return None


def stable_nonce(key: str) -> str:
    """A nonce (at most 25 characters) that is the same each time the same part is sent."""
    return hashlib.sha256(key.encode()).hexdigest()[:24]


def split_text(text: str, *, limit: int = MAX_MESSAGE_CHARS, max_parts: int = MAX_PARTS) -> list[str]:
    """Text as messages of at most ``limit`` characters: text that fits exactly as it is; longer text
    split at line breaks (else spaces), each part marked ``(n/N)``, past ``max_parts`` cut with a note."""
    return [EMPTY_TEXT] if not text.strip() else split_marked(text, limit, max_parts, MARKS)


def fit_edit(text: str, *, limit: int = MAX_MESSAGE_CHARS) -> str:
    """A settled prompt's text for its (last) message: whole when it fits, else its end, which holds the
    outcome, with a note of how much of the start was left out."""
    return keep_end(text, limit, MARKS)
