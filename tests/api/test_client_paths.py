"""Ids go into request paths as one segment each: an id holding ``/``, ``..``, ``?``, ``#`` or ``%`` reaches
the route it was meant for, in the sync and the async client alike (every call shares ``calls.py``)."""

from __future__ import annotations

import asyncio
import urllib.parse
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from gateway.client import Client, Threadgate, ThreadgateError

HOSTILE = ["../y", "a/b", "..", ".", "x?wait=1", "x#frag", "100%", "%2F", "a b", "../../v1/runs/r1/end"]
NOT_FOUND = {"error": {"code": "NOT_FOUND", "message": "no such thing", "details": {}}}

# (method, args given the hostile id, the route template with {} for each id, in order)
CALLS: list[tuple[str, Callable[[str], tuple[Any, ...]], str]] = [
    ("end_run", lambda i: (i,), "/v1/runs/{}/end"),
    ("abort_run", lambda i: (i,), "/v1/runs/{}/abort"),
    ("session_thread", lambda i: (i, "web:ops", "h"), "/v1/sessions/{}/thread"),
    ("session_run", lambda i: (i, "web:ops-1", "ops"), "/v1/sessions/{}/run"),
    ("session_call", lambda i: ("ops:s1", i), "/v1/sessions/{}/calls/{}"),
    ("bind_session_call", lambda i: (i, i, "prm_1"), "/v1/sessions/{}/calls/{}"),
    ("raise_prompt", lambda i: (i, "text", [{"question": "q"}]), "/v1/runs/{}/prompts"),
    ("request_approval", lambda i: (i, "Bash"), "/v1/runs/{}/approvals"),
    ("approval_decision", lambda i: (i, "Bash"), "/v1/runs/{}/approvals"),
    ("list_grants", lambda i: (i,), "/v1/runs/{}/grants"),
    ("revoke_grant", lambda i: (i, i), "/v1/runs/{}/grants/{}"),
    ("get_prompt", lambda i: (i,), "/v1/prompts/{}"),
    ("cancel_prompt", lambda i: (i,), "/v1/prompts/{}/cancel"),
    ("post_message", lambda i: (i, "hi"), "/v1/threads/{}/items"),
    ("thread_items", lambda i: (i,), "/v1/threads/{}/items"),
    ("list_inputs", lambda i: (i,), "/v1/agents/{}/inputs"),
    ("answer_input", lambda i: (i, i, "accept"), "/v1/agents/{}/inputs/{}"),
    ("respond", lambda i: (i, i, i), "/v1/agent-runs/{}/threads/{}/user-inputs/{}/respond"),
    ("put_agent", lambda i: (i,), "/v1/agents/{}"),
    ("get_agent", lambda i: (i,), "/v1/agents/{}"),
]


def _ids_in(raw_path: bytes, template: str) -> list[str] | None:
    """The ids ``raw_path`` carries when it has exactly the template's shape, else None."""
    sent, wanted = raw_path.decode().split("?", 1)[0].split("/"), template.split("/")
    if len(sent) != len(wanted):
        return None
    ids = []
    for got, want in zip(sent, wanted, strict=True):
        if want == "{}":
            ids.append(urllib.parse.unquote(got))
        elif got != want:
            return None
    return ids


def _recorder(paths: list[bytes]) -> Callable[[httpx.Request], httpx.Response]:
    def handle(request: httpx.Request) -> httpx.Response:
        paths.append(request.url.raw_path)
        return httpx.Response(404, json=NOT_FOUND)

    return handle


def _kwargs(method: str) -> dict[str, Any]:
    return {"approvers": []} if method == "put_agent" else {}


@pytest.mark.parametrize("hostile", HOSTILE)
@pytest.mark.parametrize(("method", "args", "template"), CALLS, ids=[c[0] for c in CALLS])
def test_the_sync_client_sends_each_id_as_one_segment(
    method: str, args: Callable[[str], tuple[Any, ...]], template: str, hostile: str
) -> None:
    paths: list[bytes] = []
    transport = httpx.MockTransport(_recorder(paths))
    with Client("http://gateway.test", "t", transport=transport) as client, pytest.raises(ThreadgateError):
        getattr(client, method)(*args(hostile), **_kwargs(method))
    given = [value for value in args(hostile) if value == hostile or value == "ops:s1"]
    assert [_ids_in(path, template) for path in paths] == [given[: template.count("{}")]]


@pytest.mark.parametrize("hostile", HOSTILE)
def test_the_async_client_sends_each_id_as_one_segment(hostile: str) -> None:
    async def sent() -> list[bytes]:
        paths: list[bytes] = []
        transport = httpx.MockTransport(_recorder(paths))
        async with Threadgate("http://gateway.test", "t", transport=transport) as tg:
            for method, args, _template in CALLS:
                with pytest.raises(ThreadgateError):
                    await getattr(tg, method)(*args(hostile), **_kwargs(method))
        return paths

    paths = asyncio.run(sent())
    for path, (_method, args, template) in zip(paths, CALLS, strict=True):
        given = [value for value in args(hostile) if value == hostile or value == "ops:s1"]
        assert _ids_in(path, template) == given[: template.count("{}")], path
