"""uvicorn's server, told to drain the runtime's waits the moment it is asked to stop."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable
from types import FrameType

import uvicorn

from gateway.runtime import Runtime


class DrainingServer(uvicorn.Server):
    """On SIGTERM uvicorn stops accepting, waits for open requests up to the grace period, then cancels
    them (a plain-text 500 to each). Draining first ends every long-poll and event stream at once with a
    normal answer, so the grace period is spent only on requests that are doing work.

    ``announce`` runs once the server accepts connections (the runtime started, the sockets listening).
    """

    def __init__(
        self, config: uvicorn.Config, runtime: Runtime, announce: Callable[[], None] = lambda: None
    ) -> None:
        super().__init__(config)
        self.runtime = runtime
        self.announce = announce
        self._loop: asyncio.AbstractEventLoop | None = None

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        self._loop = asyncio.get_running_loop()
        await super().startup(sockets)
        if self.started:
            self.announce()

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        super().handle_exit(sig, frame)
        # A signal handler runs between any two bytecodes of the loop: hand the drain to the loop.
        if self._loop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self.runtime.drain)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        self.runtime.drain()  # also when the stop came another way than a signal
        await super().shutdown(sockets)
