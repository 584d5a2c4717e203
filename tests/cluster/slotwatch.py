"""Watch what scripts really touch on a Redis Cluster, through MONITOR on every node.

Redis feeds MONITOR an EVAL/EVALSHA line and then, contiguously, each command the script ran (tagged
``lua``). Grouping those lines by script shows every key a script touched, declared or not, so a script
that reaches outside its declared key's slot is caught even where Redis would let it pass (a legacy
script without a shebang may touch another slot of the same node).
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from redis.crc import key_slot

_ARG = re.compile(r'"((?:[^"\\]|\\.)*)"')
_SOURCE = re.compile(r"^\+\d+\.\d+ \[\d+ (?P<source>[^\]]+)\] (?P<args>.*)$")
NOT_KEYS = {"PUBLISH"}  # commands scripts run whose first argument is not a key


def slot(key: str) -> int:
    return int(key_slot(key.encode()))


@dataclass
class ScriptRun:
    """One script execution seen on one node: its sha, declared keys, and the keys its commands touched."""

    node: int
    sha: str
    declared: list[str]
    touched: list[str] = field(default_factory=list)

    @property
    def slots(self) -> set[int]:
        return {slot(key) for key in (*self.declared, *self.touched)}


@dataclass
class SlotWatch:
    """MONITOR on each node's port; ``runs`` holds every script execution seen."""

    ports: list[int]
    runs: list[ScriptRun] = field(default_factory=list)
    _sentinel: str = field(default_factory=lambda: f"slotwatch-{uuid.uuid4().hex}")

    @contextlib.asynccontextmanager
    async def watching(self) -> AsyncIterator[SlotWatch]:
        streams = [await asyncio.open_connection("127.0.0.1", port) for port in self.ports]
        try:
            for reader, writer in streams:
                writer.write(b"MONITOR\r\n")
                await writer.drain()
                assert (await reader.readline()).startswith(b"+OK")
            yield self
            for port, (reader, _writer) in zip(self.ports, streams, strict=True):
                await self._mark_end(port)
                await asyncio.wait_for(self._collect(port, reader), timeout=10)
        finally:
            for _reader, writer in streams:
                writer.close()
                with contextlib.suppress(Exception):
                    await writer.wait_closed()

    async def _mark_end(self, port: int) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(f"ECHO {self._sentinel}\r\n".encode())
        await writer.drain()
        await reader.readline()
        writer.close()
        await writer.wait_closed()

    async def _collect(self, port: int, reader: asyncio.StreamReader) -> None:
        current: ScriptRun | None = None
        while True:
            line = (await reader.readline()).decode("utf-8", "replace").rstrip("\r\n")
            match = _SOURCE.match(line)
            if match is None:
                continue
            args = [arg.encode().decode("unicode_escape") for arg in _ARG.findall(match["args"])]
            if not args:
                continue
            command = args[0].upper()
            if match["source"] == "lua":
                if current is not None and command not in NOT_KEYS and len(args) > 1:
                    current.touched.append(args[1])
                continue
            if command == "ECHO" and args[1:] == [self._sentinel]:
                return
            current = None
            if command in ("EVAL", "EVALSHA"):
                numkeys = int(args[2])
                current = ScriptRun(port, args[1], args[3 : 3 + numkeys])
                self.runs.append(current)

    def crossing(self) -> list[ScriptRun]:
        """The script runs that touched more than one slot."""
        return [run for run in self.runs if len(run.slots) > 1]
