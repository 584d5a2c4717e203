"""What one web chat visitor may write and hold open: posts per name and client, rooms brought into use,
message size, open chat streams."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gateway.sdk import Audiences, GatewayError, RateLimiter

if TYPE_CHECKING:
    from channels.web.settings import WebSettings

MAX_MESSAGE_CHARS = 16_000


@dataclass(frozen=True, slots=True)
class WebLimits:
    """``THREADGATE_WEB_POSTS_PER_NAME`` and friends (see ``.env.example``)."""

    posts_per_name: int = 20
    posts_per_client: int = 60
    post_window_s: int = 10
    new_rooms_per_client: int = 20
    new_room_window_s: int = 3_600
    # Open chat streams per web token (or visitor address) and in all, in each process.
    streams_per_client: int = 100
    streams: int = 2_000

    @classmethod
    def from_settings(cls, settings: WebSettings) -> WebLimits:
        return cls(
            settings.threadgate_web_posts_per_name,
            settings.threadgate_web_posts_per_client,
            settings.threadgate_web_post_window_s,
            settings.threadgate_web_new_rooms_per_client,
            settings.threadgate_web_new_room_window_s,
            settings.threadgate_max_browser_streams_per_client,
            settings.threadgate_max_browser_streams,
        )


def message_chars(
    text: str,
    answers: list[dict[str, Any]] | None,
    note: str | None = None,
    arguments: dict[str, Any] | None = None,
) -> int:
    """A message's size as stored: its text and an approval's note, plus its structured answers and
    edited arguments as JSON."""
    chars = len(text) + len(note or "")
    for part in (answers, arguments):
        if part is not None:
            chars += len(json.dumps(part, ensure_ascii=False, separators=(",", ":")))
    return chars


def check_size(
    text: str,
    answers: list[dict[str, Any]] | None,
    note: str | None = None,
    arguments: dict[str, Any] | None = None,
) -> None:
    """413 TOO_LARGE for a message over ``MAX_MESSAGE_CHARS``, before anything is stored."""
    chars = message_chars(text, answers, note, arguments)
    if chars > MAX_MESSAGE_CHARS:
        raise GatewayError(
            "TOO_LARGE",
            f"A chat message (its text, answers, note and arguments) is at most {MAX_MESSAGE_CHARS:,} "
            f"characters; this one has {chars:,}. Shorten it or split it.",
            413,
            {"max_chars": MAX_MESSAGE_CHARS, "chars": chars},
        )


async def admit_post(
    limiter: RateLimiter, audiences: Audiences, limits: WebLimits, thread_id: str, identity: str, client: str
) -> None:
    """Count a post against its name and its client, and a first post into an unused room against the
    client's new rooms; 429 RATE_LIMITED beyond any of them."""
    await limiter.enforce(
        [
            (f"web-post:name:{identity}", limits.posts_per_name, limits.post_window_s),
            (f"web-post:client:{client}", limits.posts_per_client, limits.post_window_s),
        ],
        "messages",
    )
    if not (await audiences.of(thread_id)).used:
        await limiter.enforce(
            [(f"web-room:client:{client}", limits.new_rooms_per_client, limits.new_room_window_s)],
            "new rooms from this address",
        )
