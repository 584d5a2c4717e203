"""Slack message events as the core's InboundMessage: which events count, their thread, sender and text."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from gateway.sdk import MAX_TEXT_CHARS, GatewayError, InboundMessage, parse_thread_id

# Subtypes that are still a person saying something; every other subtype (edits, deletions, joins, topic
# changes) is not a message to the agent.
_SPEAKING_SUBTYPES = frozenset({None, "thread_broadcast", "file_share", "me_message"})
_UNESCAPES = (("&lt;", "<"), ("&gt;", ">"), ("&amp;", "&"))


@dataclass(frozen=True, slots=True)
class BotIdentity:
    """Who this app is in the workspace (from ``auth.test``): its bot user and bot ids."""

    user_id: str | None
    bot_id: str | None


def unescape(text: str) -> str:
    """Undo Slack's escaping of ``<``, ``>`` and ``&`` in message text."""
    for escaped, char in _UNESCAPES:
        text = text.replace(escaped, char)
    return text


def strip_mention(text: str, bot_user_id: str | None) -> str:
    """Drop a leading ``<@BOT>`` mention (and a ``:`` or ``,`` after it): ``<@U0BOT> 2`` answers ``2``."""
    if bot_user_id:
        text = re.sub(rf"^\s*<@{re.escape(bot_user_id)}(?:\|[^>]*)?>[\s:,]*", "", text)
    return text.strip()


def thread_ts_of(event: dict[str, Any], kind: str) -> str | None:
    """The root ts of the thread an event belongs to, or None when the gateway does not take part.

    A reply in a thread belongs to that thread. A top-level message starts a thread on itself when it
    mentions the app (``app_mention``) or is a direct message; other top-level channel chatter is not
    for the gateway.
    """
    ts = event.get("ts")
    thread_ts = event.get("thread_ts")
    if thread_ts and thread_ts != ts:
        return str(thread_ts)
    if kind == "app_mention" or event.get("channel_type") == "im":
        return str(ts) if ts else None
    return None


def is_direct(event: dict[str, Any]) -> bool:
    """A message in the app's direct message with one person: its channel type ``im``, or a ``D`` channel
    id (an ``app_mention`` carries no channel type)."""
    return event.get("channel_type") == "im" or str(event.get("channel") or "").startswith("D")


def _is_thread_id(thread_id: str) -> bool:
    try:
        parse_thread_id(thread_id)
    except GatewayError:
        return False
    return True


def is_from_bot(event: dict[str, Any]) -> bool:
    return bool(event.get("bot_id")) or event.get("subtype") == "bot_message"


def _skip_sender(event: dict[str, Any], bot: BotIdentity, allow_bots: bool) -> bool:
    """This app's own messages always; other bots' unless they are allowed."""
    if bot.user_id and event.get("user") == bot.user_id:
        return True
    if not is_from_bot(event):
        return False
    return not allow_bots or (bot.bot_id is not None and event.get("bot_id") == bot.bot_id)


class UnreadableEvent(ValueError):
    """An event whose fields are not of the types Slack documents."""


# The fields read here; each is text whenever Slack sends it.
_TEXT_FIELDS = ("subtype", "user", "bot_id", "channel", "channel_type", "ts", "thread_ts", "text")


def check_fields(event: object) -> dict[str, Any]:
    """``event``, once its fields are known to be of the documented types; UnreadableEvent if not."""
    if not isinstance(event, dict):
        raise UnreadableEvent("the event is not an object")
    wrong = [name for name in _TEXT_FIELDS if not isinstance(event.get(name), str | None)]
    if wrong:
        raise UnreadableEvent(f"not text: {', '.join(wrong)}")
    return event


def to_inbound(
    event: dict[str, Any], kind: str, bot: BotIdentity, *, allow_bots: bool = False
) -> InboundMessage | None:
    """The InboundMessage for a ``message`` or ``app_mention`` event, or None when it is not for us.

    Never this app's own messages; other bots' only with ``allow_bots``. The event id is the message's
    own coordinates, so a Slack retry and the ``message``/``app_mention`` pair for one message dedupe
    to the same key.
    """
    check_fields(event)
    if event.get("subtype") not in _SPEAKING_SUBTYPES and event.get("subtype") != "bot_message":
        return None
    sender = event.get("user") or event.get("bot_id")
    if not sender or _skip_sender(event, bot, allow_bots):
        return None
    channel = event.get("channel")
    thread_ts = thread_ts_of(event, kind)
    if not channel or thread_ts is None or not _is_thread_id(f"slack:{channel}:{thread_ts}"):
        return None
    text = strip_mention(unescape(str(event.get("text") or "")), bot.user_id)
    if not text:
        return None
    return InboundMessage(
        thread_id=f"slack:{channel}:{thread_ts}",
        sender=f"slack:{sender}",
        text=text[:MAX_TEXT_CHARS],
        event_id=f"msg:{channel}:{event.get('ts')}",
        direct=is_direct(event),
    )
