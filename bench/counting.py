"""Counting Redis round trips: a connection class that tallies each write to the socket and each command.

One ``send_packed_command`` is one round trip (a single command, or a whole pipeline). Each round trip is
booked to the asyncio task that made it: the caller's own, an outbox drain, or another background job.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from redis.asyncio.connection import Connection

OUTBOX_TASK = "threadgate.outbox."


def _booked_to() -> str:
    try:
        task = asyncio.current_task()
    except RuntimeError:
        return "call"
    name = task.get_name() if task is not None else ""
    if name.startswith(OUTBOX_TASK):
        return "outbox"
    if name.startswith("threadgate."):
        return "background"
    return "call"


@dataclass
class Tally:
    """Round trips and commands seen since the last ``reset``, by who made them."""

    round_trips: Counter[str] = field(default_factory=Counter)
    commands: dict[str, list[str]] = field(default_factory=dict)

    def reset(self) -> None:
        self.round_trips.clear()
        self.commands.clear()

    def count_round_trip(self) -> None:
        self.round_trips[_booked_to()] += 1

    def count_command(self, name: str) -> None:
        self.commands.setdefault(_booked_to(), []).append(name)


TALLY = Tally()


class CountingConnection(Connection):
    """A redis-py connection that books every round trip and command in ``TALLY``."""

    async def send_packed_command(self, command: Any, check_health: bool = True) -> None:
        TALLY.count_round_trip()
        await super().send_packed_command(command, check_health)

    def pack_command(self, *args: Any) -> list[bytes]:
        name = args[0].decode() if isinstance(args[0], bytes) else str(args[0])
        TALLY.count_command(name.split(" ")[0].upper())
        return super().pack_command(*args)


def count_round_trips(client: Any) -> None:
    """Make ``client``'s pool open counting connections (call before it opened any)."""
    client.connection_pool.connection_class = CountingConnection
