"""uvicorn's server, told to drain the runtime's waits the moment it is asked to stop."""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import Callable
from types import FrameType

import uvicorn

from gateway.base.logs import event
from gateway.process.runtime import Runtime


class DrainingServer(uvicorn.Server):
    """On SIGTERM uvicorn stops accepting, waits for open requests up to the grace period, then cancels
    them (a plain-text 500 to each). Draining first ends every long-poll and event stream at once with a
    normal answer, so the grace period is spent only on requests that are doing work.

    ``announce`` runs once the server accepts connections (the runtime started, the sockets listening).
    A worker of ``serve --workers`` is given its end of the socket pair with its parent as ``parent``:
    when the parent's end closes (the parent died), the worker stops as on SIGTERM.
    """

    def __init__(
        self,
        config: uvicorn.Config,
        runtime: Runtime,
        announce: Callable[[], None] = lambda: None,
        parent: socket.socket | None = None,
    ) -> None:
        super().__init__(config)
        self.runtime = runtime
        self.announce = announce
        self.parent = parent
        self._loop: asyncio.AbstractEventLoop | None = None

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        self._loop = asyncio.get_running_loop()
        await super().startup(sockets)
        if self.started:
            if self.parent is not None:
                self.parent.setblocking(False)
                self._loop.add_reader(self.parent.fileno(), self._parent_spoke)
            self.announce()

    def _parent_spoke(self) -> None:
        """The parent never writes: readable means its end closed (or broke), so the parent is gone."""
        assert self.parent is not None and self._loop is not None
        try:
            if self.parent.recv(64):
                return
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            pass
        self._loop.remove_reader(self.parent.fileno())
        event("serve.parent_gone", logging.WARNING)
        self.should_exit = True
        self.runtime.drain()

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        super().handle_exit(sig, frame)
        # A signal handler runs between any two bytecodes of the loop: hand the drain to the loop.
        if self._loop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self.runtime.drain)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        self.runtime.drain()  # also when the stop came another way than a signal
        await super().shutdown(sockets)
