"""Several `threadgate serve` processes on one Redis: answers cross processes, waits survive kill -9."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from redis.asyncio import from_url

from gateway.client import Threadgate
from tests.api.conftest import AGENT_AUTH, AGENT_TOKEN, OPERATOR_AUTH, TOKENS
from tests.support.conditions import until_watched
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


@pytest.fixture
async def redis(redis_server: RedisServer) -> AsyncIterator[Any]:
    client = from_url(redis_server.url, decode_responses=True)
    yield client
    await client.aclose()


async def test_answer_through_one_process_wakes_the_long_poll_on_another(
    spawn: list[ServeProcess], redis: Any
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

        waiting = asyncio.create_task(agent.get(f"/v1/prompts/{prompt['prompt_id']}", params={"wait": 60}))
        await until_watched(redis, ROOM, prompt["prompt_id"])
        answer = await operator.post(
            f"/v1/agents/ops/inputs/{prompt['prompt_id']}", json={"action": "accept", "from": ALICE}
        )
        # Woken by the answer: a poll left to run out its 60 s would end the test with a timeout.
        settled = (await asyncio.wait_for(waiting, 30)).json()
    assert answer.status_code == 200
    assert settled["prompt_state"] == "answered"
    assert settled["resolution"] == "resolved_hot"


async def test_client_ask_keeps_waiting_across_kill_9_and_restart(
    spawn: list[ServeProcess], redis: Any
) -> None:
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
        await until_watched(redis, ROOM, pending[0]["prompt_id"])  # the ask's wait reached the gateway
        gateway.kill()
        # In a thread, so the client runs meanwhile: it keeps retrying while the gateway is down.
        await asyncio.to_thread(gateway.start)
        assert not asking.done()
        async with httpx.AsyncClient(base_url=gateway.url, headers=OPERATOR_AUTH) as operator:
            answer = await operator.post(
                f"/v1/agents/ops/inputs/{pending[0]['prompt_id']}",
                json={"action": "accept", "content": "2", "from": ALICE},
            )
        assert answer.status_code == 200, answer.text
        assert await asyncio.wait_for(asking, 20) == ["production"]


async def test_a_claim_made_through_one_process_holds_on_the_other(spawn: list[ServeProcess]) -> None:
    first, second = spawn
    first.start()
    second.start()
    bob = "web:bob"
    async with (
        httpx.AsyncClient(base_url=first.url, headers=AGENT_AUTH, timeout=30) as agent,
        httpx.AsyncClient(base_url=first.url, headers=OPERATOR_AUTH, timeout=30) as here,
        httpx.AsyncClient(base_url=second.url, headers=OPERATOR_AUTH, timeout=30) as there,
    ):
        defined = await here.put("/v1/agents/ops", json={"human_input": {"approvers": [bob]}})
        assert defined.status_code == 200, defined.text
        run = (
            await agent.post("/v1/runs", json={"thread_id": ROOM, "agent": "ops", "started_by": ALICE})
        ).json()
        prompt = (
            await agent.post(
                f"/v1/runs/{run['run_id']}/prompts",
                json={"kind": "approval", "questions": [{"question": "Ship it?"}]},
            )
        ).json()
        claimed = await here.post(f"/v1/prompts/{prompt['prompt_id']}/claim", json={"from": bob})
        assert claimed.status_code == 200 and claimed.json()["claimed_by"] == bob
        path = f"/v1/agents/ops/inputs/{prompt['prompt_id']}"
        refused = await there.post(path, json={"action": "accept", "from": ALICE})
        shown = (await there.get(f"/v1/prompts/{prompt['prompt_id']}")).json()
        answered = await there.post(path, json={"action": "accept", "from": bob})
    assert (refused.status_code, refused.json()["error"]["code"]) == (409, "CLAIMED")
    assert refused.json()["error"]["details"]["claimed_by"] == bob
    assert shown["claimed_by"] == bob
    assert answered.status_code == 200 and answered.json()["answered_by"] == bob
