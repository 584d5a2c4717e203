"""Render a thread item as Discord messages: within the 2,000-character limit, split or cut visibly."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from gateway.models import Answer, ThreadItem
from gateway.render import answers_summary

MAX_MESSAGE_CHARS = 2000
MAX_PARTS = 5
EMPTY_TEXT = "(empty message)"
ANSWERED = "✓ Answered:"
NOT_GIVEN = "—"
_MARKER_ROOM = len("\n(99/99)")


@dataclass(frozen=True, slots=True)
class DiscordMessage:
    """One message to send. ``nonce`` lets Discord drop a repeated send of the same part."""

    content: str
    nonce: str | None = None


def render_item(item: ThreadItem) -> list[DiscordMessage]:
    """The messages an item becomes, in order (a pending prompt's controls go on the last)."""
    parts = split_text(item_text(item))
    prompt_id = prompt_id_of(item)
    if prompt_id is None:
        return [DiscordMessage(part) for part in parts]
    return [
        DiscordMessage(part, stable_nonce(f"{item.type}:{prompt_id}:{index}"))
        for index, part in enumerate(parts)
    ]


def item_text(item: ThreadItem) -> str:
    """The item's text; an answered form's outcome reads one ``Title: value`` line per field."""
    prompt = item.metadata.get("prompt")
    if (
        item.type != "pending_prompt_resolved"
        or not isinstance(prompt, dict)
        or prompt.get("kind") != "form"
        or prompt.get("prompt_state") != "answered"
    ):
        return item.text
    answers = _answers(prompt.get("answers"))
    summary = f"{ANSWERED} {answers_summary(answers)}"
    if not answers or not item.text.endswith(summary):  # not the core's wording: leave it be
        return item.text
    lines = [f"{answer.question}: {', '.join(answer.answer) or NOT_GIVEN}" for answer in answers]
    return item.text[: -len(summary)] + "\n".join([ANSWERED, *lines])


def _answers(entries: Any) -> list[Answer]:
    if not isinstance(entries, list):
        return []
    try:
        return [Answer(question=e["question"], question_id="", answer=e["answer"]) for e in entries]
    except (KeyError, TypeError, ValueError):
        return []


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
    """Text as messages of at most ``limit`` characters.

    Text that fits is sent exactly as it is. Longer text is split at line breaks (else spaces), each part
    marked ``(n/N)``; past ``max_parts`` the rest is cut with a note saying how much was left out.
    """
    if not text.strip():
        return [EMPTY_TEXT]
    if len(text) <= limit:
        return [text]
    room = limit - _MARKER_ROOM
    chunks: list[str] = []
    rest = text
    while rest:
        if len(chunks) == max_parts - 1 and len(rest) > room:
            chunks.append(_cut(rest, room))
            break
        chunk = rest if len(rest) <= room else rest[: _break_at(rest, room)]
        chunks.append(chunk)
        rest = rest[len(chunk) :]
    total = len(chunks)
    return [f"{chunk}\n({index}/{total})" for index, chunk in enumerate(chunks, start=1)]


def fit_edit(text: str, *, limit: int = MAX_MESSAGE_CHARS) -> str:
    """A settled prompt's text for its (last) message: whole when it fits, else its end, which holds the
    outcome, with a note of how much of the start was left out."""
    if len(text) <= limit:
        return text
    note_room = len(f"… ({len(text)} earlier characters not shown)\n")
    tail = text[len(text) - (limit - note_room) :]
    start = tail.find("\n")
    if 0 <= start < len(tail) // 2:  # begin at a line, unless that would drop too much
        tail = tail[start + 1 :]
    return f"… ({len(text) - len(tail)} earlier characters not shown)\n{tail}"


def _break_at(text: str, room: int) -> int:
    """Where to end a part of at most ``room`` characters: after a line break, a space, or hard."""
    window = text[:room]
    for separator in ("\n", " "):
        position = window.rfind(separator)
        if position >= room // 2:
            return position + 1
    return room


def _cut(text: str, room: int) -> str:
    """The start of ``text`` and a note of how many characters were left out, within ``room``."""
    note_room = len(f"\n… ({len(text)} more characters not shown)")
    kept = text[: _break_at(text, room - note_room)]
    return f"{kept}\n… ({len(text) - len(kept)} more characters not shown)"
