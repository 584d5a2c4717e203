"""A restart nobody waiting notices: at SIGTERM every long-poll is answered as a timeout would be (200, the
prompt still pending) and every event stream ends with a reconnect hint, instead of a 500 when the grace
period runs out; and a client waiting across a restart gets the answer given afterwards."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis.asyncio

from gateway.client import Threadgate
from tests.support.conditions import until_watched
from tests.support.redis_server import RedisServer
from tests.support.serve import ServeProcess, serve_env, serving

pytestmark = [pytest.mark.slow, pytest.mark.redis]

AGENT = {"Authorization": "Bearer agent-token"}
OPERATOR = {"Authorization": "Bearer operator-token"}
THREAD = "web:restart"
QUESTION = {"kind": "text", "questions": [{"question": "Which branch should I deploy?"}]}


@pytest.fixture
def process(redis_server: RedisServer, tmp_path: Path) -> Iterator[ServeProcess]:
    redis_server.flush()
    env = serve_env(
        REDIS_URL=redis_server.url,
        THREADGATE_API_TOKENS="agent:agent:agent-token:*,ops:operator:operator-token",
        THREADGATE_WEB_CHAT="open",
        THREADGATE_SHUTDOWN_GRACE_S="1",  # a long-poll still open after this is cut off with a 500
    )
    gateway = ServeProcess(env, tmp_path)
    with serving(gateway, ready_path="/readyz"):
        yield gateway


async def _raise(client: httpx.AsyncClient) -> dict[str, Any]:
    run = await client.post(
        "/v1/runs", headers=AGENT, json={"thread_id": THREAD, "agent": "ops", "started_by": "web:alice"}
    )
    prompt = await client.post(f"/v1/runs/{run.json()['run_id']}/prompts", headers=AGENT, json=QUESTION)
    assert prompt.status_code == 201, prompt.text
    body: dict[str, Any] = prompt.json()
    return body


async def _event_stream(
    client: httpx.AsyncClient, path: str, opened: asyncio.Event, headers: dict[str, str] = AGENT
) -> tuple[int, str]:
    """Read an event stream until the server ends it: its status and everything it sent."""
    chunks: list[str] = []
    async with client.stream("GET", path, headers=headers, timeout=httpx.Timeout(30)) as response:
        async for chunk in response.aiter_text():
            chunks.append(chunk)
            opened.set()
    return response.status_code, "".join(chunks)


async def test_sigterm_answers_open_long_polls_pending_and_ends_event_streams_cleanly(
    process: ServeProcess, redis_server: RedisServer
) -> None:
    store = redis.asyncio.from_url(redis_server.url)
    async with httpx.AsyncClient(base_url=process.url, timeout=60) as client:
        prompt = await _raise(client)
        poll = asyncio.create_task(
            client.get(f"/v1/prompts/{prompt['prompt_id']}", params={"wait": 30}, headers=AGENT)
        )
        inbox = asyncio.create_task(client.get("/v1/messages", params={"wait": 30}, headers=AGENT))
        opened, page_opened = asyncio.Event(), asyncio.Event()
        stream = asyncio.create_task(_event_stream(client, "/v1/events", opened))
        page = asyncio.create_task(  # the room's page, read as the person who started its run
            _event_stream(client, "/chat/restart/events?name=alice", page_opened, headers={})
        )
        await until_watched(store, THREAD, prompt["prompt_id"])
        await asyncio.wait_for(opened.wait(), 10)
        await asyncio.wait_for(page_opened.wait(), 10)
        process.running.send_signal(signal.SIGTERM)
        polled = await poll
        messages = await inbox
        status, sent = await stream
        page_status, page_sent = await page
    await store.aclose()
    assert polled.status_code == 200, polled.text
    assert polled.json()["prompt_state"] == "pending"
    assert messages.status_code == 200, messages.text
    assert messages.json()["items"] == []
    assert status == 200
    assert sent.rstrip().endswith(": the gateway is restarting; reconnect")
    assert "retry: 1000" in sent
    assert page_status == 200
    assert page_sent.rstrip().endswith(": the gateway is restarting; reconnect")
    assert process.running.wait(timeout=20) in (0, -signal.SIGTERM)


async def test_a_client_waiting_across_a_restart_gets_the_answer_given_afterwards(
    process: ServeProcess, redis_server: RedisServer
) -> None:
    store = redis.asyncio.from_url(redis_server.url)
    async with httpx.AsyncClient(base_url=process.url, timeout=30) as client:
        prompt = await _raise(client)
    async with Threadgate(process.url, "agent-token", reconnect_delay=0.05) as tg:
        waiting = asyncio.create_task(tg.wait_prompt(prompt["prompt_id"], timeout=60))
        await until_watched(store, THREAD, prompt["prompt_id"])
        process.kill()
        process.start(ready_path="/readyz")
        async with httpx.AsyncClient(base_url=process.url, timeout=30) as client:
            answer = {"action": "accept", "content": "main", "from": "web:alice"}
            given = await client.post(
                f"/v1/agents/ops/inputs/{prompt['prompt_id']}", headers=OPERATOR, json=answer
            )
            assert given.status_code == 200, given.text
        settled = await asyncio.wait_for(waiting, 30)
    await store.aclose()
    assert settled.prompt_state.value == "answered"
    assert [a.answer for a in settled.answers or []] == [["main"]]
