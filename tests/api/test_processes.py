"""Several `threadgate serve` processes on one Redis: answers cross processes, waits survive kill -9."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from gateway.client import Threadgate
from tests.api.conftest import AGENT_AUTH, AGENT_TOKEN, OPERATOR_AUTH, TOKENS
from tests.support.redis_server import RedisServer
from tests.support.serve import ServeProcess, serve_env

pytestmark = pytest.mark.slow
ROOM = "web:ops-room"
ALICE = "web:alice"


@pytest.fixture
def spawn(redis_server: RedisServer, tmp_path: Path) -> Iterator[list[ServeProcess]]:
    redis_server.flush()
    env = serve_env(
        REDIS_URL=redis_server.url,
        THREADGATE_WEB_CHAT="open",
        THREADGATE_API_TOKENS=TOKENS,
        THREADGATE_LOG_LEVEL="WARNING",
    )
    processes = [ServeProcess(env, tmp_path, name=f"serve-{index}") for index in range(2)]
    yield processes
    for process in processes:
        process.stop()


async def test_answer_through_one_process_wakes_the_long_poll_on_another_within_100ms(
    spawn: list[ServeProcess],
) -> None:
    first, second = spawn
    first.start()
    second.start()
    async with (
        httpx.AsyncClient(base_url=first.url, headers=AGENT_AUTH, timeout=30) as agent,
        httpx.AsyncClient(base_url=second.url, headers=OPERATOR_AUTH, timeout=30) as operator,
    ):
        run = (
            await agent.post("/v1/runs", json={"thread_id": ROOM, "agent": "ops", "started_by": ALICE})
        ).json()
        prompt = (
            await agent.post(
                f"/v1/runs/{run['run_id']}/prompts",
                json={"kind": "approval", "questions": [{"question": "Ship it?"}]},
            )
        ).json()

        async def poll() -> tuple[float, dict[str, object]]:
            response = await agent.get(f"/v1/prompts/{prompt['prompt_id']}", params={"wait": 20})
            return time.monotonic(), response.json()

        waiting = asyncio.create_task(poll())
        await asyncio.sleep(0.5)
        answer = await operator.post(
            f"/v1/agents/ops/inputs/{prompt['prompt_id']}", json={"action": "accept", "from": ALICE}
        )
        answered_at = time.monotonic()
        returned_at, settled = await waiting
    assert answer.status_code == 200
    assert settled["prompt_state"] == "answered"
    assert settled["resolution"] == "resolved_hot"
    assert returned_at - answered_at < 0.1


async def test_client_ask_keeps_waiting_across_kill_9_and_restart(spawn: list[ServeProcess]) -> None:
    gateway = spawn[0]
    gateway.start()
    async with Threadgate(gateway.url, AGENT_TOKEN, reconnect_delay=0.05) as client:
        run = await client.create_run(ROOM, agent="ops", started_by=ALICE)
        asking = asyncio.create_task(
            client.ask(run.run_id, "Deploy where?", ["staging", "production"], timeout=60)
        )
        async with httpx.AsyncClient(base_url=gateway.url, headers=OPERATOR_AUTH) as operator:
            pending: list[dict[str, str]] = []
            while not pending:
                pending = (await operator.get("/v1/agents/ops/inputs")).json()["items"]
        await asyncio.sleep(0.2)
        gateway.kill()
        await asyncio.sleep(0.5)
        assert not asking.done()
        gateway.start()
        async with httpx.AsyncClient(base_url=gateway.url, headers=OPERATOR_AUTH) as operator:
            answer = await operator.post(
                f"/v1/agents/ops/inputs/{pending[0]['prompt_id']}",
                json={"action": "accept", "content": "2", "from": ALICE},
            )
        assert answer.status_code == 200, answer.text
        assert await asyncio.wait_for(asking, 20) == ["production"]
