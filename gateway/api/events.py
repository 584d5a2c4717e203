"""``GET /v1/events``: the event feed as Server-Sent Events, resumable with ``Last-Event-ID``.

A stream filtered to one thread or run also says the agent is waiting there: while it is open, the
thread's pending prompt resolves ``resolved_hot``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import APIRouter, Header, Query, Request
from pydantic import AfterValidator

from gateway.api.auth import Caller, Principal
from gateway.api.deps import ApiOptions, Core, Options, streams_of
from gateway.api.errors import error_responses
from gateway.api.scope import event_visible, own_run, require_thread
from gateway.base.cursors import FEED_CURSOR, feed_cursor_value
from gateway.base.errors import not_found
from gateway.base.ids import parse_thread_id
from gateway.decision.service import WATCH_GRACE_MS, Gateway
from gateway.delivery.feeds import Feeds, StreamCaps
from gateway.delivery.sse import HEARTBEAT, RESTART_HINT, EventStream
from gateway.store.outage import store_unavailable

router = APIRouter(prefix="/v1", tags=["agent side"])

EVENT_TYPES = ("input.requested", "input.resolved", "message.received")
_SSE_DOC: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "A text/event-stream: each event has `id` (the resume cursor), `event` (its type) and "
        "`data`, the JSON `{id, type, created_at, data}`. Comment lines keep idle streams open.",
        "content": {"text/event-stream": {"schema": {"type": "string"}}},
    }
}


@dataclass(frozen=True, slots=True)
class Filter:
    thread_id: str | None = None
    run_id: str | None = None
    agent: str | None = None

    def matches(self, entry: dict[str, Any]) -> bool:
        data = entry.get("data") or {}
        if self.thread_id is not None and data.get("thread_id") != self.thread_id:
            return False
        is_message = entry.get("type") == "message.received"
        if self.run_id is not None and not is_message and data.get("run_id") != self.run_id:
            return False
        return self.agent is None or is_message or data.get("agent") == self.agent


class WaitMarker:
    """Marks the agent as waiting on a thread's pending prompt (of one run, if given), renewed as it goes."""

    def __init__(self, gateway: Gateway, thread_id: str, run_id: str | None, every_s: float) -> None:
        self.gateway = gateway
        self.thread_id = thread_id
        self.run_id = run_id
        self.every_s = every_s
        self.ttl_ms = int(every_s * 1000) + WATCH_GRACE_MS
        self._last = 0.0

    async def mark(self, prompt_id: str | None = None) -> None:
        """Mark ``prompt_id`` now, or the thread's active prompt when it is time to renew."""
        store = self.gateway.store
        if prompt_id is None:
            if time.monotonic() - self._last < self.every_s / 2:
                return
            self._last = time.monotonic()
            prompt_id = await store.active_prompt_id(self.thread_id)
            if prompt_id is None:
                return
            if self.run_id is not None:
                prompt = await store.get_prompt(prompt_id, self.thread_id)
                if prompt is None or prompt.run_id != self.run_id:
                    return
        await store.watch(self.thread_id, prompt_id, self.ttl_ms)


async def stream(
    feeds: Feeds,
    options: ApiOptions,
    cursor: str | None,
    where: Filter,
    marker: WaitMarker | None,
    reaches: Callable[[dict[str, Any]], Awaitable[bool]] | None = None,
) -> AsyncGenerator[bytes, None]:
    """Events after ``cursor`` (default: from now), then each new one as it lands, and a ``: heartbeat``
    comment whenever nothing was sent for ``sse_heartbeat_s``.

    Read from the process's one follower of the event feed (``gateway.delivery.feeds``): an idle stream holds
    no Redis connection. ``where`` and ``reaches`` are this subscriber's own filters (its query, its
    token's scope).
    """
    tail = feeds.events
    position = tail.vector(cursor) if cursor else await feeds.head(tail)
    every_s = max(0.05, options.sse_heartbeat_s)
    clock = asyncio.get_running_loop().time
    if marker is not None:
        await marker.mark()  # before the first line: once a listener sees it, answers resolve hot
    yield f"retry: 2000\n: connected at {tail.cursor(position)}\n\n".encode()
    beat_at = clock() + every_s
    while True:
        if feeds.draining:  # the process is stopping: say so, then end; the client resumes elsewhere
            yield RESTART_HINT
            return
        if marker is not None:
            await marker.mark()
        if (quiet_s := beat_at - clock()) <= 0:
            yield HEARTBEAT
            beat_at = clock() + every_s
            continue
        for entry in await feeds.read(tail, position, 100, wait_s=quiet_s):
            position = tail.advance(position, entry)
            if not where.matches(entry.data) or (reaches is not None and not await reaches(entry.data)):
                continue
            if marker is not None and entry.data.get("type") == "input.requested":
                await marker.mark(entry.data["data"]["prompt_id"])
            yield entry.frame(tail.cursor_after(position, entry))
            beat_at = clock() + every_s


@dataclass(frozen=True, slots=True)
class EventsQuery:
    """What ``GET /v1/events`` asks: where to resume (``Last-Event-ID``, else ``after``), its filters."""

    cursor: str | None = None
    thread_id: str | None = None
    run_id: str | None = None
    agent: str | None = None


async def open_events(
    core: Gateway, options: ApiOptions, streams: StreamCaps, caller: Principal, query: EventsQuery
) -> EventStream:
    """The checks before a stream opens (the store is up, the run and thread are the caller's, a slot is
    free), then the stream; its frames are read once it is sent."""
    if not core.health.available:
        raise store_unavailable()
    thread = parse_thread_id(query.thread_id).thread_id if query.thread_id is not None else None
    if query.run_id is not None:
        run = await own_run(core.store, caller, query.run_id)
        if thread is not None and run.thread_id != thread:
            raise not_found("RUN_NOT_FOUND", "run", query.run_id)
        thread = run.thread_id
    if thread is not None:
        await require_thread(core.store, caller, thread)  # a stream on a thread marks its prompt waited on
    where = Filter(thread, query.run_id, query.agent)
    marker = WaitMarker(core, thread, query.run_id, options.sse_heartbeat_s) if thread is not None else None

    async def reaches(entry: dict[str, Any]) -> bool:
        return await event_visible(core, caller, entry)

    scoped = None if caller.agents is None else reaches
    slot = streams.open(caller.name)
    return EventStream(stream(core.feeds, options, query.cursor, where, marker, scoped), slot)


@router.get("/events", response_class=EventStream, responses={**_SSE_DOC, **error_responses(400, 404, 429)})
async def events(
    request: Request,
    core: Core,
    options: Options,
    caller: Caller,
    last_event_id: Annotated[
        str | None, Header(alias="Last-Event-ID", pattern=FEED_CURSOR), AfterValidator(feed_cursor_value)
    ] = None,
    after: Annotated[
        str | None,
        Query(pattern=FEED_CURSOR, description="Resume after this event (its `id` line)."),
        AfterValidator(feed_cursor_value),
    ] = None,
    thread_id: Annotated[str | None, Query(min_length=1, max_length=200)] = None,
    run_id: Annotated[str | None, Query(min_length=1, max_length=100)] = None,
    agent: Annotated[str | None, Query(min_length=1, max_length=64)] = None,
) -> EventStream:
    """Server-Sent Events: ``input.requested``, ``input.resolved``, ``message.received``.

    Starts from now, or after ``Last-Event-ID`` (or ``after``) to resume without losing an event. With
    ``thread_id`` or ``run_id`` the stream carries that thread's events only, and counts as the agent
    waiting there: a person's answer to its pending prompt then resolves hot. A token scoped to some
    agents gets their prompts' events, and people's messages as ``GET /v1/messages`` says. Open streams
    are capped per token and per process (429 ``RATE_LIMITED`` with ``Retry-After`` beyond). While the
    store is unreachable no stream opens: 503 ``STORE_UNAVAILABLE`` with ``Retry-After``.
    """
    # Served by ``gateway.api.waiting`` below FastAPI; this route gives the schema, and answers requests
    # whose parameters that path leaves to FastAPI's validation.
    query = EventsQuery(last_event_id or after, thread_id, run_id, agent)
    return await open_events(core, options, streams_of(request), caller, query)
