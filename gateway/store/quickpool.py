"""redis-py's blocking pool and connections, with the per-command Python overhead cut from the hot path.

A command's cost in the gateway is mostly the client's, not Redis's: redis-py's asyncio pool takes a
condition, a timeout and its observability hooks on every checkout and release, and packs each command in
Python. Here an idle connection is checked out and returned directly (the wait machinery only runs when
none is idle, or someone is waiting), and commands are packed by hiredis's C packer, as redis-py's own
synchronous client does.
"""

from __future__ import annotations

import asyncio
from typing import Any, cast

import hiredis
import redis.asyncio as aioredis
from redis._parsers.hiredis import _AsyncHiredisParser
from redis.asyncio.connection import AbstractConnection
from redis.connection import HiredisRespSerializer
from redis.exceptions import ConnectionError, ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

_PACK = cast(Any, HiredisRespSerializer)().pack  # typed in some redis-py releases, not in others
CHUNK = 6000  # bytes per write of a pipeline, as redis-py's own packer cuts them


class _QuickPacking:
    """Packs commands with hiredis (C) rather than redis-py's per-argument Python loop."""

    def pack_command(self, *args: Any) -> list[bytes]:
        first = args[0]
        if isinstance(first, str) and " " not in first:
            try:
                return [hiredis.pack_command(args)]
            except TypeError:  # a memoryview, or a value redis-py refuses: its packer says which
                pass
        packed: list[bytes] = _PACK(*args)
        return packed

    def pack_commands(self, commands: Any) -> list[bytes]:
        """A pipeline's commands, joined into writes of about ``CHUNK`` bytes (as redis-py does)."""
        output: list[bytes] = []
        pieces: list[bytes] = []
        size = 0
        for command in commands:
            packed = self.pack_command(*command)[0]
            pieces.append(packed)
            size += len(packed)
            if size > CHUNK:
                output.append(b"".join(pieces))
                pieces, size = [], 0
        if pieces:
            output.append(b"".join(pieces))
        return output


class QuickConnection(_QuickPacking, aioredis.Connection):
    pass


class QuickSSLConnection(_QuickPacking, aioredis.SSLConnection):
    pass


class QuickUnixConnection(_QuickPacking, aioredis.UnixDomainSocketConnection):
    pass


_QUICK: dict[type, type] = {
    aioredis.Connection: QuickConnection,
    aioredis.SSLConnection: QuickSSLConnection,
    aioredis.UnixDomainSocketConnection: QuickUnixConnection,
}
# Connections whose batches skip redis-py's per-command path: only this module's own (a subclass, such as
# the bench's round-trip counter, keeps every method it overrides in the path).
_LEAN = frozenset(_QUICK.values())


async def _stale(connection: Any) -> bool:
    """Whether an idle connection cannot take a command as it is: data left unread on it, or a server that
    closed it (a Redis restart), which newer redis-py reports by raising rather than as readable data."""
    try:
        return bool(await connection.can_read())
    except (ConnectionError, OSError):
        return True


class QuickBlockingPool(aioredis.BlockingConnectionPool):
    """A ``BlockingConnectionPool`` (a burst beyond ``max_connections`` waits) with a direct fast path."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        connection_class = kwargs.get("connection_class", aioredis.Connection)
        kwargs["connection_class"] = _QUICK.get(connection_class, connection_class)
        super().__init__(*args, **kwargs)
        self._waiting = 0

    async def get_connection(self, *args: Any, **kwargs: Any) -> AbstractConnection:
        if self._available_connections and not self._in_maintenance and not self._waiting:
            idle: Any = self._available_connections.pop()
            self._in_use_connections.add(idle)
            try:
                if not idle.is_connected:
                    await idle.connect()
                if await _stale(idle):  # the full check reconnects it
                    await self.ensure_connection(idle)
            except BaseException:
                await self.release(idle)
                raise
            return idle  # type: ignore[no-any-return]
        self._waiting += 1
        try:
            waited: AbstractConnection = await super().get_connection()  # type: ignore[no-untyped-call]
        finally:
            self._waiting -= 1
        return waited

    async def release(self, connection: Any) -> None:
        if self._waiting or self._in_maintenance:
            await super().release(connection)  # wakes a waiter under the pool's condition
            return
        self._in_use_connections.remove(connection)
        if connection.should_reconnect():
            await connection.disconnect()
        self._available_connections.append(connection)

    async def execute(self, commands: list[tuple[Any, ...]]) -> list[Any]:
        """Send ``commands`` in one write and read their replies: a pipeline without redis-py's per-command
        bookkeeping. An error reply is returned in its place (a ``ResponseError``), not raised.

        For commands whose replies need no conversion (scripts, XADD, ZADD, ZREM ...). A connection that
        fails is dropped and the whole batch sent once more on a fresh one, as redis-py's own pipeline does.
        """
        connection: Any = await self.get_connection()
        try:
            replies: list[Any] = await connection.retry.call_with_retry(
                lambda: self._send_and_read(connection, commands), connection.disconnect
            )
            return replies
        except BaseException:
            await connection.disconnect()  # replies may be left unread on it
            raise
        finally:
            await self.release(connection)

    @staticmethod
    async def _send_and_read(connection: Any, commands: list[tuple[Any, ...]]) -> list[Any]:
        loop = asyncio.get_running_loop()
        writer = connection._writer
        due = connection.health_check_interval and loop.time() > connection.next_health_check
        lean = type(connection) in _LEAN and isinstance(connection._parser, _AsyncHiredisParser)
        if lean and writer is not None and not due:
            return await _send_and_read_lean(connection, writer, commands, loop)
        await connection.send_packed_command(connection.pack_commands(commands))
        replies: list[Any] = []
        for _ in commands:
            try:
                replies.append(await connection.read_response())
            except ResponseError as error:
                replies.append(error)
        return replies


async def _send_and_read_lean(
    connection: Any, writer: Any, commands: list[tuple[Any, ...]], loop: asyncio.AbstractEventLoop
) -> list[Any]:
    """A batch written and its replies read straight from the connection's hiredis reader, under one
    timeout (the connection's own) for the whole batch. redis-py's per-command path costs a task for the
    write's timeout, and for every reply a timeout (a timer in the loop), a protocol check and a health
    stamp: about a tenth of a resolve's CPU. Failures are raised as redis-py raises them (its
    ConnectionError and TimeoutError), so the retry and the caller's disconnect treat them alike; error
    replies come back in their place, as on the full path. A connection due for its health check (idle
    for a while) takes redis-py's path, which PINGs it first."""
    parser = connection._parser
    replies: list[Any] = []
    try:
        async with asyncio.timeout(connection.socket_timeout):
            if writer.transport.is_closing():
                raise ConnectionError("Connection closed by the server before write")
            writer.writelines(connection.pack_commands(commands))
            await writer.drain()
            for _ in commands:
                replies.append(await parser.read_response())
    except TimeoutError:  # asyncio's timeout: caught before OSError, which it is a kind of
        raise RedisTimeoutError(f"Timeout reading from {connection._host_error()}") from None
    except OSError as exc:
        raise ConnectionError(f"Error while reading from {connection._host_error()} : {exc.args}") from exc
    if connection.health_check_interval:
        connection.next_health_check = loop.time() + connection.health_check_interval
    return replies
