"""Server-Sent Events responses: keep-alive comments, disconnect detection, send timeouts, stream slots."""

from __future__ import annotations

from collections.abc import AsyncIterator

from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.types import Receive, Scope, Send

from gateway.delivery.feeds import StreamSlot

HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
SEND_TIMEOUT_S = 30.0  # a client that reads nothing for this long is dropped, not buffered for forever
# At SIGTERM a stream's own body ends it (with RESTART_HINT, once the runtime drains); the library's
# cut-off on the exit signal waits this long first, so the last frame is not lost to a race.
SHUTDOWN_GRACE_S = 2.0
RESTART_HINT = b"retry: 1000\n: the gateway is restarting; reconnect\n\n"


def _heartbeat() -> ServerSentEvent:
    return ServerSentEvent(comment="heartbeat", sep="\n")


class SlotStream(EventSourceResponse):
    """An event stream that gives its slot back however it ends (done, disconnect, error, shutdown)."""

    def __init__(self, body: AsyncIterator[bytes], ping_s: float, slot: StreamSlot | None) -> None:
        super().__init__(
            body,
            headers=HEADERS,
            ping=ping_s,
            ping_message_factory=_heartbeat,
            sep="\n",  # the frames are written with LF; one line ending throughout
            send_timeout=SEND_TIMEOUT_S,
            shutdown_grace_period=SHUTDOWN_GRACE_S,
        )
        self.slot = slot

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            if self.slot is not None:
                self.slot.release()


def event_stream(body: AsyncIterator[bytes], ping_s: float, slot: StreamSlot | None = None) -> SlotStream:
    """``body`` (encoded events) as ``text/event-stream``, with a ``: heartbeat`` comment every ``ping_s``."""
    return SlotStream(body, ping_s, slot)
