"""Server-Sent Events read line by line, whichever transport delivers the lines."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Event:
    """One Server-Sent Event: ``cursor`` resumes after it; ``id`` is the event's own id, for dedupe."""

    cursor: str
    type: str
    id: str
    created_at: str
    data: dict[str, Any] = field(default_factory=dict)


class EventParser:
    """Fed a stream's lines, it hands back each complete event; comments and unknown fields are skipped."""

    def __init__(self) -> None:
        self._cursor = ""
        self._kind = ""
        self._data: list[str] = []

    def feed(self, line: str) -> Event | None:
        """The event this line completes (a blank line ends one), else None."""
        if not line:
            event = self._event() if self._data else None
            self._kind, self._data = "", []
            return event
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "id":
            self._cursor = value
        elif name == "event":
            self._kind = value
        elif name == "data":
            self._data.append(value)
        return None

    def _event(self) -> Event:
        payload = json.loads("\n".join(self._data))
        return Event(
            cursor=self._cursor,
            type=self._kind or str(payload.get("type", "")),
            id=str(payload.get("id", "")),
            created_at=str(payload.get("created_at", "")),
            data=dict(payload.get("data") or {}),
        )
