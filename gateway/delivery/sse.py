"""Server-Sent Events responses: keep-alive comments, disconnect detection, send timeouts, stream slots.

Two writers: ``send_stream``, a small one in plain ASGI (one task per stream and a watcher of the
client's ``receive``) for the API's event feed, where thousands of idle streams are held; and
``event_stream`` (sse-starlette, a task group per stream) for the channels' pages.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncGenerator, AsyncIterator

from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from gateway.base.logs import event
from gateway.delivery.feeds import StreamSlot

HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
STREAM_HEADERS = [
    (b"content-type", b"text/event-stream; charset=utf-8"),
    (b"cache-control", b"no-cache"),
    (b"connection", b"keep-alive"),
    (b"x-accel-buffering", b"no"),
]
SEND_TIMEOUT_S = 30.0  # a client that reads nothing for this long is dropped, not buffered for forever
# At SIGTERM a stream's own body ends it (with RESTART_HINT, once the runtime drains); the library's
# cut-off on the exit signal waits this long first, so the last frame is not lost to a race.
SHUTDOWN_GRACE_S = 2.0
RESTART_HINT = b"retry: 1000\n: the gateway is restarting; reconnect\n\n"
HEARTBEAT = b": heartbeat\n\n"  # a comment line: keeps proxies from closing an idle stream


class _Held:
    """One stream's state shared with its disconnect watcher."""

    __slots__ = ("done", "gone", "task")

    def __init__(self, task: asyncio.Task[object]) -> None:
        self.task = task
        self.done = False  # the stream ended on its own: a disconnect now cancels nothing
        self.gone = False  # the client left and the stream's task was cancelled for it


async def _until_gone(receive: Receive, held: _Held) -> None:
    with contextlib.suppress(Exception):  # a body past the limit on a GET: end as if the client left
        while (await receive())["type"] != "http.disconnect":
            pass  # a GET's empty body; the next message is the disconnect
    if not held.done:
        held.gone = True
        held.task.cancel()


async def send_stream(
    receive: Receive, send: Send, frames: AsyncGenerator[bytes, None], slot: StreamSlot | None = None
) -> None:
    """Send ``frames`` (encoded events, comments) as ``text/event-stream`` until they end, the client
    leaves, or it reads nothing for ``SEND_TIMEOUT_S``; ``slot`` is given back however it ends.

    The frames are read in the calling task; a second task waits on ``receive`` and, when the client
    leaves, cancels the first wherever it waits (the feed, Redis). Heartbeats are the frames' own job.
    An error raised by ``frames`` propagates once the response started, as any ASGI app's would.
    """
    task = asyncio.current_task()
    assert task is not None
    held = _Held(task)
    watcher = asyncio.ensure_future(_until_gone(receive, held))
    try:
        await send({"type": "http.response.start", "status": 200, "headers": STREAM_HEADERS})
        async for frame in frames:
            async with asyncio.timeout(SEND_TIMEOUT_S):
                await send({"type": "http.response.body", "body": frame, "more_body": True})
        held.done = True
        await send({"type": "http.response.body", "body": b"", "more_body": False})
    except asyncio.CancelledError:
        if not held.gone or task.uncancel() > 0:
            raise  # not (only) the client leaving: the server is cancelling the request
    except TimeoutError:  # the client stopped reading: the server closes the connection
        event("sse.send_timeout", logging.WARNING, after_s=SEND_TIMEOUT_S)
    finally:
        held.done = True
        watcher.cancel()
        with contextlib.suppress(Exception):
            await frames.aclose()
        if slot is not None:
            slot.release()


class EventStream(Response):
    """``send_stream`` as a response a route returns; the API's raw path calls ``send_stream`` itself."""

    def __init__(
        self, frames: AsyncGenerator[bytes, None], slot: StreamSlot | None = None, status_code: int = 200
    ) -> None:
        self.frames = frames
        self.slot = slot
        self.status_code = status_code  # its signature's default is what the OpenAPI document shows
        self.background = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send_stream(receive, send, self.frames, self.slot)


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
