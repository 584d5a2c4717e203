"""The feeds' stream reader: the streams of a read are taken at the last moment before it blocks."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from gateway.store.stream_reader import StreamReader


class RecordingClient:
    """A Redis client that records the commands it is sent, and runs ``meanwhile`` during a round trip
    (our own fake, not a mock)."""

    def __init__(self, log: list[str], meanwhile: dict[str, Callable[[], Awaitable[None]]] | None = None):
        self.log = log
        self.meanwhile = meanwhile or {}

    async def _round_trip(self, command: str) -> None:
        self.log.append(command)
        if (during := self.meanwhile.get(command.split()[0])) is not None:
            await during()

    async def client_id(self) -> int:
        await self._round_trip("client_id")
        return 7

    async def xread(self, streams: dict[str, str], count: int, block: int) -> Any:
        await self._round_trip(f"xread {sorted(streams)}")
        return [["tg:events", [("1-0", {"j": "{}"})]]]

    async def client_unblock(self, client_id: int) -> None:
        await self._round_trip(f"client_unblock {client_id}")


async def test_a_stream_added_while_the_reader_learns_its_connection_is_in_the_read() -> None:
    """The connection's id costs a round trip on the first read: the streams are asked for after it, so
    a stream added meanwhile is read at once rather than after the block times out."""
    log: list[str] = []
    followed = {"tg:events": "0-0"}

    async def add_a_stream() -> None:
        followed["tg:messages"] = "0-0"

    def heads() -> dict[str, str]:
        log.append("heads")
        return dict(followed)

    reader = StreamReader(RecordingClient(log, {"client_id": add_a_stream}), control=RecordingClient(log))
    rows = await reader.read(heads, 10, 60_000)
    assert log == ["client_id", "heads", "xread ['tg:events', 'tg:messages']"]
    assert rows == [("tg:events", [("1-0", {"j": "{}"})])]


async def test_a_blocked_read_is_ended_through_the_shared_client_and_an_idle_one_is_left_alone() -> None:
    log: list[str] = []
    reader: StreamReader

    async def unblock() -> None:  # as a follower adding a stream does while the read blocks
        await reader.unblock()

    reader = StreamReader(RecordingClient(log, {"xread": unblock}), control=RecordingClient(log))
    await reader.unblock()  # nothing is blocked yet
    assert log == []
    await reader.read(lambda: {"tg:events": "0-0"}, 10, 60_000)
    assert log == ["client_id", "xread ['tg:events']", "client_unblock 7"]
    await reader.unblock()  # the read is over
    assert log[-1] == "client_unblock 7" and len(log) == 3
