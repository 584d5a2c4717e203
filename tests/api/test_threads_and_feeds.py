"""Agent messages into threads, the thread's item log, the queued messages feed and the SSE event stream."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx

from gateway.base.models import InboundMessage
from gateway.store import keys
from tests.api.conftest import STARTER, THREAD, Served, raise_prompt, respond_path, start_run
from tests.support.conditions import until_connected, until_waiting_on


async def _person_says(served: Served, text: str, thread_id: str = THREAD) -> None:
    await served.runtime.gateway.receive(InboundMessage(thread_id=thread_id, sender=STARTER, text=text))
    await served.runtime.gateway.outbox.idle()  # the message reaches the feed through the outbox


async def test_posting_an_item_queues_it_for_the_chat(agent: httpx.AsyncClient, served: Served) -> None:
    response = await agent.post(
        f"/v1/threads/{THREAD}/items", json={"content": [{"type": "text", "text": "Deploying now."}]}
    )
    assert response.status_code == 202
    assert response.json()["item_id"].startswith("itm_")
    await served.runtime.gateway.outbox.idle()
    assert served.channel.posts[-1].item.text == "Deploying now."


async def test_item_log_lists_what_was_posted_oldest_first(agent: httpx.AsyncClient, served: Served) -> None:
    run = await start_run(agent)
    prompt = await raise_prompt(agent, run["run_id"])
    await agent.post(f"/v1/prompts/{prompt['prompt_id']}/cancel")
    await served.runtime.gateway.outbox.idle()
    log = (await agent.get(f"/v1/threads/{THREAD}/items")).json()
    assert [item["type"] for item in log["items"]] == ["pending_prompt", "pending_prompt_resolved"]
    assert log["cursor"] == log["items"][-1]["id"]
    rest = (await agent.get(f"/v1/threads/{THREAD}/items", params={"after": log["items"][0]["id"]})).json()
    assert [item["type"] for item in rest["items"]] == ["pending_prompt_resolved"]


async def test_item_log_of_a_malformed_thread_is_400(agent: httpx.AsyncClient) -> None:
    response = await agent.get("/v1/threads/nowhere/items")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "INVALID_THREAD_ID"


async def test_messages_feed_loses_nothing_between_two_reads(
    agent: httpx.AsyncClient, served: Served
) -> None:
    await _person_says(served, "one")
    first = (await agent.get("/v1/messages")).json()
    await _person_says(served, "two")
    await _person_says(served, "three")
    second = (await agent.get("/v1/messages", params={"after": first["cursor"]})).json()
    third = (await agent.get("/v1/messages", params={"after": second["cursor"]})).json()
    assert [m["text"] for m in first["items"]] == ["one"]
    assert [m["text"] for m in second["items"]] == ["two", "three"]
    assert third == {"items": [], "cursor": second["cursor"]}
    assert first["items"][0]["tag"] is None


async def test_messages_long_poll_wakes_on_a_new_message(agent: httpx.AsyncClient, served: Served) -> None:
    poll = asyncio.create_task(agent.get("/v1/messages", params={"wait": 5}))
    await until_waiting_on(served.runtime.gateway.feeds, keys.MESSAGES)
    assert not poll.done()
    await _person_says(served, "hello")
    feed = (await asyncio.wait_for(poll, 2)).json()
    assert [m["text"] for m in feed["items"]] == ["hello"]


async def test_messages_feed_filters_by_thread(agent: httpx.AsyncClient, served: Served) -> None:
    await _person_says(served, "elsewhere", "web:other")
    await _person_says(served, "here")
    feed = (await agent.get("/v1/messages", params={"thread_id": THREAD})).json()
    assert [m["text"] for m in feed["items"]] == ["here"]


async def _read_events(lines: AsyncIterator[str], count: int) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    current: dict[str, Any] = {}
    async for line in lines:
        if line.startswith("id: "):
            current["cursor"] = line[4:]
        elif line.startswith("event: "):
            current["event"] = line[7:]
        elif line.startswith("data: "):
            current["data"] = json.loads(line[6:])
        elif not line and "data" in current:
            events.append(current)
            current = {}
            if len(events) == count:
                return events
    return events


async def test_event_stream_carries_requested_and_resolved_and_resumes(
    agent: httpx.AsyncClient, served: Served
) -> None:
    run = await start_run(agent)
    async with agent.stream("GET", "/v1/events") as stream:
        lines = stream.aiter_lines()
        await until_connected(lines)  # the stream starts from now: only what happens next reaches it
        prompt = await raise_prompt(agent, run["run_id"])
        await agent.post(f"/v1/prompts/{prompt['prompt_id']}/cancel")
        first = await asyncio.wait_for(_read_events(lines, 2), 5)
    assert [e["event"] for e in first] == ["input.requested", "input.resolved"]
    assert first[0]["data"]["id"] == f"{prompt['prompt_id']}.requested"
    assert first[1]["data"]["data"]["prompt_state"] == "cancelled"
    await _person_says(served, "after the drop")
    headers = {"Last-Event-ID": first[1]["cursor"]}
    async with agent.stream("GET", "/v1/events", headers=headers) as stream:
        [resumed] = await asyncio.wait_for(_read_events(stream.aiter_lines(), 1), 5)
    assert resumed["event"] == "message.received"
    assert resumed["data"]["data"]["text"] == "after the drop"


async def test_event_stream_for_a_thread_makes_answers_hot(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient
) -> None:
    run = await start_run(agent)
    prompt = await raise_prompt(agent, run["run_id"], kind="text", questions=[{"question": "Name?"}])
    async with agent.stream("GET", "/v1/events", params={"run_id": run["run_id"]}) as stream:
        await until_connected(stream.aiter_lines())
        response = await operator.post(
            respond_path(run, prompt["prompt_id"]),
            json={"answers": [{"questionId": "q1", "otherText": "Ada"}]},
            headers={"X-Threadgate-From": STARTER},
        )
    assert response.json()["status"] == "resolved_hot"


async def test_unfiltered_event_stream_does_not_make_answers_hot(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient
) -> None:
    run = await start_run(agent)
    prompt = await raise_prompt(agent, run["run_id"], kind="text", questions=[{"question": "Name?"}])
    async with agent.stream("GET", "/v1/events") as stream:
        await until_connected(stream.aiter_lines())
        response = await operator.post(
            respond_path(run, prompt["prompt_id"]),
            json={"answers": [{"questionId": "q1", "otherText": "Ada"}]},
            headers={"X-Threadgate-From": STARTER},
        )
    assert response.json()["status"] == "resolved_parked"


async def test_event_stream_for_an_unknown_run_is_404(agent: httpx.AsyncClient) -> None:
    response = await agent.get("/v1/events", params={"run_id": "run_missing"})
    assert response.status_code == 404
