"""Graceful shutdown, for real: two `threadgate serve` processes on one Redis, one SIGTERMed mid-traffic.

Every prompt raised still resolves, every audit item lands in its thread exactly once, the request that
was in flight on the stopping process completes, and that process exits cleanly.
"""

from __future__ import annotations

import asyncio
import json
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.redis_server import RedisServer
from tests.support.serve import ServeProcess, serve_env, serving

pytestmark = [pytest.mark.slow, pytest.mark.redis]

AGENT = {"Authorization": "Bearer agent-token"}
THREADS = 36
SIGTERM_AFTER = 12  # prompts raised before process A is told to stop
QUESTION = {"kind": "text", "questions": [{"question": "Which branch should I deploy?"}]}


def events(process: ServeProcess) -> list[dict[str, Any]]:
    """The JSON log events the process wrote."""
    return [json.loads(line) for line in process.log.read_text().splitlines() if line.startswith("{")]


@pytest.fixture
def two_processes(redis_server: RedisServer, tmp_path: Path) -> Iterator[tuple[ServeProcess, ServeProcess]]:
    redis_server.flush()
    env = serve_env(
        REDIS_URL=redis_server.url,
        THREADGATE_API_TOKENS="agent:agent:agent-token:*,ops:operator:operator-token",
        THREADGATE_WEB_CHAT="open",
        THREADGATE_SHUTDOWN_GRACE_S="5",
        # The traffic is one name in many rooms from one address, far past the web chat's default caps.
        THREADGATE_WEB_POSTS_PER_NAME="100000",
        THREADGATE_WEB_POSTS_PER_CLIENT="100000",
        THREADGATE_WEB_NEW_ROOMS_PER_CLIENT="100000",
        THREADGATE_LOG_LEVEL="INFO",
    )
    a, b = ServeProcess(env, tmp_path, name="a"), ServeProcess(env, tmp_path, name="b")
    with serving(a, b, ready_path="/readyz"):
        yield a, b


class Balancer:
    """Sends each call to its preferred process, or to the other once that one stops taking connections
    (what a load balancer does). No keep-alive. It retries a refused connection, and one reset before any
    response: a connection still in the kernel's accept queue when the stopping process closes its
    listener is reset unread (in Kubernetes the preStop delay keeps traffic away from that moment)."""

    def __init__(self, processes: tuple[ServeProcess, ServeProcess]) -> None:
        self.processes = processes
        self.client = httpx.AsyncClient(timeout=30, limits=httpx.Limits(max_keepalive_connections=0))
        self.failovers = 0

    async def call(self, prefer: int, method: str, path: str, **kwargs: Any) -> httpx.Response:
        order = (self.processes[prefer % 2], self.processes[(prefer + 1) % 2])
        for attempt, process in enumerate(order):
            try:
                return await self.client.request(method, f"{process.url}{path}", **kwargs)
            except (httpx.ConnectError, httpx.ReadError, httpx.RemoteProtocolError):
                if attempt:
                    raise
                self.failovers += 1
        raise AssertionError("unreachable")


async def one_thread(balancer: Balancer, n: int, raised: list[str], sigterm: asyncio.Event) -> dict[str, str]:
    """Start a run, raise a prompt, answer it from the web chat: each step on alternating processes."""
    thread = f"web:room{n}"
    run = await balancer.call(
        n,
        "POST",
        "/v1/runs",
        headers=AGENT,
        json={
            "thread_id": thread,
            "agent": "ops",
            "started_by": "web:alice",
        },
    )
    assert run.status_code == 201, run.text
    prompt = await balancer.call(
        n + 1, "POST", f"/v1/runs/{run.json()['run_id']}/prompts", headers=AGENT, json=QUESTION
    )
    assert prompt.status_code == 201, prompt.text
    prompt_id = prompt.json()["prompt_id"]
    raised.append(prompt_id)
    if len(raised) == SIGTERM_AFTER:
        sigterm.set()
    await asyncio.sleep(0.05 * (n % 5))
    answer = await balancer.call(
        n,
        "POST",
        f"/chat/room{n}/messages",
        json={
            "name": "alice",
            "text": f"release-{n}",
            "client_id": f"answer-{n}",
        },
    )
    assert answer.status_code == 202, answer.text
    assert answer.json()["outcome"] in ("answered", "duplicate"), answer.text
    return {"thread_id": thread, "prompt_id": prompt_id, "answer": f"release-{n}"}


async def test_sigterm_mid_traffic_loses_nothing_and_posts_each_audit_item_once(
    two_processes: tuple[ServeProcess, ServeProcess],
) -> None:
    a, b = two_processes
    balancer = Balancer((a, b))
    raised: list[str] = []
    sigterm = asyncio.Event()

    # A long-poll in flight on A when it is told to stop: it must still be answered, not cut off.
    run = await balancer.call(
        0,
        "POST",
        "/v1/runs",
        headers=AGENT,
        json={
            "thread_id": "web:inflight",
            "agent": "ops",
            "started_by": "web:alice",
        },
    )
    held = (
        await balancer.call(
            0, "POST", f"/v1/runs/{run.json()['run_id']}/prompts", headers=AGENT, json=QUESTION
        )
    ).json()["prompt_id"]
    long_poll = asyncio.create_task(
        balancer.client.get(f"{a.url}/v1/prompts/{held}", params={"wait": 4}, headers=AGENT)
    )

    async def stop_a() -> None:
        await sigterm.wait()
        a.running.send_signal(signal.SIGTERM)
        await asyncio.sleep(0.3)
        answered = await balancer.call(
            1, "POST", "/chat/inflight/messages", json={"name": "alice", "text": "main"}
        )
        assert answered.json()["outcome"] == "answered"

    semaphore = asyncio.Semaphore(6)

    async def limited(n: int) -> dict[str, str]:
        async with semaphore:
            return await one_thread(balancer, n, raised, sigterm)

    stopper = asyncio.create_task(stop_a())
    stories = await asyncio.gather(*(limited(n) for n in range(THREADS)))
    await stopper
    in_flight = await long_poll

    # Drained at SIGTERM: answered as a timeout would be (still pending), never cut off with a 500.
    assert in_flight.status_code == 200
    assert in_flight.json()["prompt_state"] == "pending"
    held_now = (await balancer.call(1, "GET", f"/v1/prompts/{held}", headers=AGENT)).json()
    assert held_now["prompt_state"] == "answered"
    assert a.running.wait(timeout=20) in (0, -signal.SIGTERM)  # the server re-raises SIGTERM once stopped
    assert balancer.failovers > 0  # traffic really met the stopped process

    # Every prompt resolved with its answer, and every thread holds exactly one audit item for it.
    deadline = time.monotonic() + 20
    while True:
        missing = []
        for story in stories:
            prompt = (
                await balancer.call(1, "GET", f"/v1/prompts/{story['prompt_id']}", headers=AGENT)
            ).json()
            assert prompt["prompt_state"] == "answered", prompt
            assert prompt["answers"][0]["answer"] == [story["answer"]]
            items = (
                await balancer.call(1, "GET", f"/v1/threads/{story['thread_id']}/items", headers=AGENT)
            ).json()
            audits = [
                item
                for item in items["items"]
                if item.get("metadata", {}).get("type") == "pending_prompt_resolved"
                and item["metadata"]["prompt"]["prompt_id"] == story["prompt_id"]
            ]
            assert len(audits) <= 1, audits
            if not audits:
                missing.append(story["thread_id"])
        if not missing or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.2)
    assert missing == []
    await balancer.client.aclose()

    stopped = [line["event"] for line in events(a)]
    assert stopped.index("shutdown.started") < stopped.index("shutdown.finished")
    assert "shutdown.outbox_flushed" in stopped
