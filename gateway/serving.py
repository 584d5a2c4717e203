"""uvicorn's server, told to drain the runtime's waits the moment it starts shutting down."""

from __future__ import annotations

import socket

import uvicorn

from gateway.runtime import Runtime


class DrainingServer(uvicorn.Server):
    """On SIGTERM uvicorn stops accepting, waits for open requests up to the grace period, then cancels
    them (a plain-text 500 to each). Draining first ends every long-poll and event stream at once with a
    normal answer, so the grace period is spent only on requests that are doing work."""

    def __init__(self, config: uvicorn.Config, runtime: Runtime) -> None:
        super().__init__(config)
        self.runtime = runtime

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        self.runtime.drain()
        await super().shutdown(sockets)
