"""Gateway events discord.py cannot read are logged and skipped instead of ending the connection."""

from __future__ import annotations

import logging
from collections.abc import Callable, MutableMapping
from typing import Any

from gateway.sdk import event

Parser = Callable[[Any], None]

# A session that cannot read its own READY has no bot user and would drop every message: better to fail,
# so the lease holder starts a fresh session.
MUST_PARSE = frozenset({"READY"})


def event_id_of(data: object) -> str | None:
    """The event's own id (a message's, an interaction's), when it has one."""
    if isinstance(data, dict):
        ident = data.get("id")
        if isinstance(ident, str | int):
            return str(ident)
    return None


def log_unreadable(kind: str, data: object, exc: BaseException) -> None:
    """One line naming the event and what went wrong, never its payload (it carries people's words)."""
    fields: dict[str, Any] = {"event_type": kind, "event_id": event_id_of(data), "error": type(exc).__name__}
    if isinstance(exc, KeyError) and exc.args and isinstance(exc.args[0], str):
        fields["missing"] = exc.args[0][:64]  # a field name, which says what Discord left out
    event("discord.event.unreadable", logging.WARNING, **fields)


def skipping_unreadable(kind: str, parse: Parser) -> Parser:
    """``parse``, except that an event it raises on is logged and skipped."""

    def parse_or_skip(data: Any) -> None:
        try:
            parse(data)
        except Exception as exc:  # discord.py's parsers index payloads freely; one odd event must not end all
            log_unreadable(kind, data, exc)

    parse_or_skip.__wrapped__ = parse  # type: ignore[attr-defined]
    return parse_or_skip


def guard_parsers(parsers: MutableMapping[str, Parser]) -> None:
    """Wrap discord.py's event parsers (``client._connection.parsers``, read by the websocket for every
    dispatch) so that an exception in one is logged and the session goes on."""
    for kind, parse in list(parsers.items()):
        if kind not in MUST_PARSE and not hasattr(parse, "__wrapped__"):
            parsers[kind] = skipping_unreadable(kind, parse)
