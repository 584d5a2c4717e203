"""Agent side: messages into a thread, the thread's item log, and the feed of people's queued messages."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Awaitable, Callable
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import JSONResponse
from pydantic import AfterValidator

from gateway.api.auth import AgentCaller, Caller
from gateway.api.deps import MAX_WAIT_S, Core, Options, streams_of
from gateway.api.errors import error_responses
from gateway.api.schemas import ItemList, MessageList, PostedItem, PostItemBody
from gateway.api.scope import message_visible, require_thread
from gateway.base.cursors import FEED_CURSOR, STREAM_ID, feed_cursor_value, stream_position
from gateway.base.ids import parse_thread_id
from gateway.delivery.feeds import Feeds

router = APIRouter(prefix="/v1", tags=["agent side"])

ThreadId = Annotated[str, Path(min_length=1, max_length=200)]
After = Annotated[
    str | None,
    Query(pattern=STREAM_ID, description="Read entries after this cursor."),
    AfterValidator(stream_position),
]
FeedAfter = Annotated[
    str | None,
    Query(pattern=FEED_CURSOR, description="Read entries after this cursor (an earlier page's `cursor`)."),
    AfterValidator(feed_cursor_value),
]


@router.post(
    "/threads/{thread_id}/items",
    status_code=202,
    response_model=PostedItem,
    responses=error_responses(400, 403),
)
async def post_item(thread_id: ThreadId, body: PostItemBody, core: Core, caller: AgentCaller) -> JSONResponse:
    """Queue an agent message for the chat: posted in order with the audit items, retried on failure.

    403 FORBIDDEN in a thread only other agents own (their runs, or a channel they claim).
    """
    await require_thread(core.store, caller, parse_thread_id(thread_id).thread_id)
    posted = await core.post_message(thread_id, body.text)
    return JSONResponse(posted, status_code=202)


def _logged(entry_id: str, entry: dict[str, Any]) -> dict[str, Any]:
    """A log entry as served: people's messages (logged as they came in) get role and type too."""
    return {
        "id": entry_id,
        "role": entry.get("role", "person"),
        "type": entry.get("type", "message"),
        **entry,
    }


@router.get("/threads/{thread_id}/items", response_model=ItemList, responses=error_responses(400))
async def thread_items(
    thread_id: ThreadId,
    core: Core,
    caller: Caller,
    after: After = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
) -> JSONResponse:
    """The thread's item log, oldest first: prompts, audit items, agent messages and people's messages.

    403 FORBIDDEN in a thread only other agents own.
    """
    thread = parse_thread_id(thread_id)
    await require_thread(core.store, caller, thread.thread_id)
    rows = await core.store.thread_items(thread.thread_id, after, limit)
    items = [_logged(entry_id, entry) for entry_id, entry in rows]
    return JSONResponse({"items": items, "cursor": rows[-1][0] if rows else None})


async def read_messages(
    feeds: Feeds,
    *,
    after: str | None,
    wait_s: float,
    thread_id: str | None,
    limit: int,
    reaches: Callable[[dict[str, Any]], Awaitable[bool]] | None = None,
) -> tuple[list[dict[str, Any]], str | None]:
    """Queued messages after the cursor, waiting up to ``wait_s`` while none match.

    The wait is on the process's one follower of the feed (``gateway.delivery.feeds``), not on Redis: a held
    long-poll costs no connection. ``reaches`` keeps the messages the caller may see (a token's scope).
    """
    deadline = time.monotonic() + wait_s
    tail = feeds.messages
    at = tail.vector(after)
    cursor = after
    while True:
        rows = await feeds.read(tail, at, limit, max(0.0, deadline - time.monotonic()))
        for row in rows:
            at = tail.advance(at, row)
        if rows:
            cursor = tail.cursor_after(at, rows[-1])
        items = [row.data for row in rows if thread_id is None or row.data.get("thread_id") == thread_id]
        if reaches is not None:
            items = [entry for entry in items if await reaches(entry)]
        if items or not rows or time.monotonic() >= deadline:
            return items, cursor


@router.get("/messages", response_model=MessageList, responses=error_responses(400, 429))
async def messages(
    request: Request,
    core: Core,
    options: Options,
    caller: Caller,
    after: FeedAfter = None,
    wait: Annotated[float, Query(ge=0, le=MAX_WAIT_S, description="Seconds to hold while empty.")] = 0,
    thread_id: Annotated[str | None, Query(min_length=1, max_length=200)] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
) -> JSONResponse:
    """People's messages queued for agents, oldest first after ``after``; parked answers carry a ``tag``.

    The cursor is a position in one durable feed: pass the returned ``cursor`` as ``after`` and no message
    between two reads is lost, across any number of gateway processes. A token scoped to some agents
    gets the messages of threads its agents own and of channels nobody claims.
    """
    if thread_id is not None:
        thread_id = parse_thread_id(thread_id).thread_id
    wait_s = min(wait, options.max_wait_s)

    async def reaches(entry: dict[str, Any]) -> bool:
        return await message_visible(core.store, caller, entry.get("thread_id"))

    with streams_of(request).open(caller.name) if wait_s > 0 else contextlib.nullcontext():
        items, cursor = await read_messages(
            core.feeds,
            after=after,
            wait_s=wait_s,
            thread_id=thread_id,
            limit=limit,
            reaches=None if caller.agents is None else reaches,
        )
    return JSONResponse({"items": items, "cursor": cursor})
