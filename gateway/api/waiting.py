"""The API's held waits below FastAPI: ``GET /v1/prompts/{id}`` (a long-poll) and ``GET /v1/events``.

A gateway holds thousands of these at once, idle, and FastAPI's path costs a held request about a third
of its memory (dependency resolution, its exit stacks, the exception wrappers, sse-starlette's task
group). This ASGI layer sits inside the API's middlewares (allowed hosts, same-origin writes, store
outages, body limit, admission: the caller is already in the scope) and serves both from the same
functions as their routes. A request whose parameters it does not read as plainly valid goes on to the
FastAPI routes, which answer it as they always did (422 ``INVALID_PARAMS`` in the same words); those
routes also give the OpenAPI document.
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import parse_qsl

from starlette.types import ASGIApp, Receive, Scope, Send

from gateway.api.asgi import send_error
from gateway.api.auth import PRINCIPAL_SCOPE_KEY, Principal
from gateway.api.deps import MAX_WAIT_S, ApiOptions
from gateway.api.events import EventsQuery, open_events
from gateway.api.runs import held_prompt
from gateway.base.cursors import FEED_CURSOR, feed_cursor_value
from gateway.base.errors import GatewayError
from gateway.delivery.sse import send_stream
from gateway.process.runtime import Runtime

PROMPT_PATH = re.compile(r"/v1/prompts/([^/]{1,100})")
WAIT = re.compile(r"\d{1,2}(?:\.\d{1,6})?")
EVENTS_PATH = "/v1/events"
EVENTS_QUERY = {"after": 600, "thread_id": 200, "run_id": 100, "agent": 64}  # the routes' longest values


def _query(scope: Scope) -> dict[str, str] | None:
    """The query as a dict, read as Starlette reads it; None if a name repeats or a value is blank."""
    pairs = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
    query = dict(pairs)
    if len(query) != len(pairs) or not all(query.values()):
        return None
    return query


def _cursor(value: str | None) -> bool:
    """Whether ``value`` is absent or a feed cursor the route's own validators accept."""
    if value is None:
        return True
    if re.fullmatch(FEED_CURSOR, value) is None:
        return False
    try:
        feed_cursor_value(value)
    except ValueError:
        return False
    return True


def _json(content: Any) -> bytes:
    """As Starlette's ``JSONResponse`` renders it."""
    return json.dumps(content, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode()


class WaitPaths:
    """ASGI middleware: serves valid long-polls and event streams itself; everything else passes on."""

    def __init__(self, app: ASGIApp, runtime: Runtime, options: ApiOptions) -> None:
        self.app = app
        self.runtime = runtime
        self.options = options

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        caller = scope.get(PRINCIPAL_SCOPE_KEY)  # the admission layer's, under /v1
        if scope["type"] != "http" or scope["method"] != "GET" or not isinstance(caller, Principal):
            await self.app(scope, receive, send)
            return
        path: str = scope["path"]
        try:
            if path == EVENTS_PATH and (asked := _events_query(scope)) is not None:
                await self._events(receive, send, caller, asked)
                return
            found = PROMPT_PATH.fullmatch(path)
            if found is not None and (wait := _wait(scope)) is not None:
                await self._prompt(send, caller, found.group(1), wait)
                return
        except GatewayError as error:  # raised before a byte of the response went out
            await send_error(send, error)
            return
        await self.app(scope, receive, send)

    async def _prompt(self, send: Send, caller: Principal, prompt_id: str, wait: float) -> None:
        runtime = self.runtime
        prompt = await held_prompt(runtime.gateway, self.options, runtime.streams, caller, prompt_id, wait)
        body = _json(prompt)
        headers = [(b"content-length", str(len(body)).encode()), (b"content-type", b"application/json")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    async def _events(self, receive: Receive, send: Send, caller: Principal, asked: EventsQuery) -> None:
        runtime = self.runtime
        opened = await open_events(runtime.gateway, self.options, runtime.streams, caller, asked)
        await send_stream(receive, send, opened.frames, opened.slot)


def _wait(scope: Scope) -> float | None:
    """A long-poll's ``wait`` (0 when absent), or None to leave the request to the route."""
    query = _query(scope)
    if query is None:
        return None
    raw = query.get("wait", "0")
    if WAIT.fullmatch(raw) is None or float(raw) > MAX_WAIT_S:
        return None
    return float(raw)


def _events_query(scope: Scope) -> EventsQuery | None:
    """An event stream's parameters, or None to leave the request to the route."""
    query = _query(scope)
    if query is None:
        return None
    for name, longest in EVENTS_QUERY.items():
        if name in query and len(query[name]) > longest:
            return None
    resumes = [value for name, value in scope["headers"] if name == b"last-event-id"]
    if len(resumes) > 1:
        return None
    last_event_id = resumes[0].decode("latin-1") if resumes else None
    if not (_cursor(last_event_id) and _cursor(query.get("after"))):
        return None
    return EventsQuery(last_event_id or query.get("after"), query.get("thread_id"), query.get("run_id"),
                       query.get("agent"))  # fmt: skip
