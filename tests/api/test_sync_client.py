"""The sync ``Client`` is the async ``Threadgate``'s twin: the same methods, the same answers and errors."""

from __future__ import annotations

import asyncio
import inspect
import itertools
import json

import httpx
import pytest

from gateway.client import Client, PromptCancelled, Threadgate, ThreadgateError
from tests.api.conftest import AGENT_TOKEN, OPERATOR_TOKEN, STARTER, THREAD, Served


def _public_methods(cls: type) -> dict[str, inspect.Signature]:
    members = inspect.getmembers(cls, callable)
    return {name: inspect.signature(member) for name, member in members if not name.startswith("_")}


async def _first_pending(tg: Threadgate) -> str:
    for _ in range(250):
        page = await tg.list_prompts(agent="ops")
        if page.items:
            return page.items[0].prompt_id
        await asyncio.sleep(0.02)
    raise AssertionError("no pending prompt of ops appeared")


def test_the_sync_client_has_every_method_of_the_async_one_with_the_same_signature() -> None:
    twins = _public_methods(Client)
    for name, signature in _public_methods(Threadgate).items():
        if name == "aclose":
            assert "close" in twins
            continue
        assert name in twins, f"Client lacks {name}"
        assert str(twins[name]) == str(signature).replace("AsyncIterator", "Iterator"), name


async def test_ask_from_a_script_returns_the_answer(served: Served) -> None:
    def script() -> list[str]:
        with Client(served.base_url, AGENT_TOKEN) as tg:
            run = tg.create_run(THREAD, agent="ops", started_by=STARTER)
            return tg.ask(run.run_id, "Deploy where?", ["staging", "production"])

    asking = asyncio.create_task(asyncio.to_thread(script))
    async with Threadgate(served.base_url, OPERATOR_TOKEN) as desk:
        prompt_id = await _first_pending(desk)
        await desk.answer_input("ops", prompt_id, "accept", content="production", from_=STARTER)
    assert await asyncio.wait_for(asking, 5) == ["production"]


async def test_errors_and_cancellations_are_the_same_values(served: Served) -> None:
    with Client(served.base_url, AGENT_TOKEN) as tg:
        with pytest.raises(ThreadgateError) as raised:
            await asyncio.to_thread(tg.get_prompt, "prm_nope")
        assert (raised.value.code, raised.value.status) == ("PROMPT_NOT_FOUND", 404)
        run = await asyncio.to_thread(tg.create_run, THREAD, "ops", STARTER)
        approving = asyncio.create_task(asyncio.to_thread(tg.approval, run.run_id, "db__drop", timeout=5))
        async with Threadgate(served.base_url, AGENT_TOKEN) as agent:
            await _first_pending(agent)
            await agent.end_run(run.run_id)
        with pytest.raises(PromptCancelled) as cancelled:
            await approving
    assert cancelled.value.prompt.reason_code is not None
    assert cancelled.value.prompt.reason_code.value == "run_ended"


def _sse(cursor: str, event_id: str) -> str:
    payload = {"id": event_id, "created_at": "2026-01-01T00:00:00Z", "data": {"prompt_id": "prm_1"}}
    return f"id: {cursor}\nevent: input.resolved\ndata: {json.dumps(payload)}\n\n"


def test_the_sync_event_stream_resumes_after_the_last_event_seen() -> None:
    resumed_from: list[str | None] = []

    def gateway(request: httpx.Request) -> httpx.Response:
        resumed_from.append(request.headers.get("Last-Event-ID"))
        if len(resumed_from) == 2:
            raise httpx.ConnectError("connection refused", request=request)
        cursor = str(len(resumed_from))
        return httpx.Response(
            200, text=_sse(cursor, f"evt_{cursor}"), headers={"content-type": "text/event-stream"}
        )

    transport = httpx.MockTransport(gateway)
    with Client("http://gateway.test", "t", transport=transport, reconnect_delay=0.001) as tg:
        events = list(itertools.islice(tg.events(after="0", thread_id=THREAD), 2))
    assert [(event.cursor, event.id, event.type) for event in events] == [
        ("1", "evt_1", "input.resolved"),
        ("3", "evt_3", "input.resolved"),
    ]
    assert resumed_from == ["0", "1", "1"]


def test_the_sync_event_stream_raises_the_gateways_refusal() -> None:
    refusal = {"error": {"code": "UNAUTHORIZED", "message": "no such token", "details": {}}}
    transport = httpx.MockTransport(lambda _request: httpx.Response(401, json=refusal))
    with (
        Client("http://gateway.test", "t", transport=transport) as tg,
        pytest.raises(ThreadgateError) as raised,
    ):
        next(tg.events())
    assert (raised.value.code, raised.value.status) == ("UNAUTHORIZED", 401)
