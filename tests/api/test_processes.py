"""Several `threadgate serve` processes on one Redis: answers cross processes, waits survive kill -9."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest

from gateway.client import Threadgate
from tests.api.conftest import AGENT_AUTH, AGENT_TOKEN, OPERATOR_AUTH, TOKENS
from tests.support.redis_server import RedisServer, free_port

pytestmark = pytest.mark.slow
ROOM = "web:ops-room"
ALICE = "web:alice"


@dataclass
class GatewayProcess:
    """`threadgate serve` in a subprocess, on a fixed port so it can be restarted in place."""

    redis_url: str
    port: int
    workdir: str
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        env = {
            **os.environ,
            "REDIS_URL": self.redis_url,
            "THREADGATE_WEB_CHAT": "open",
            "THREADGATE_API_TOKENS": TOKENS,
            "THREADGATE_LOG_LEVEL": "WARNING",
        }
        command = [sys.executable, "-m", "gateway.cli", "serve", "--port", str(self.port)]
        self.process = subprocess.Popen(
            command, env=env, cwd=self.workdir, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"threadgate serve exited with {self.process.returncode}")
            try:
                if httpx.get(f"{self.url}/healthz", timeout=0.5).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.05)
        raise RuntimeError("threadgate serve did not come up")

    def kill(self) -> None:
        """kill -9: no shutdown at all."""
        if self.process is not None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()
            self.process = None

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()
            self.process = None


@pytest.fixture
def spawn(redis_server: RedisServer) -> Iterator[list[GatewayProcess]]:
    redis_server.flush()
    workdir = tempfile.mkdtemp(prefix="threadgate-serve-")  # no stray .env is read from here
    processes = [GatewayProcess(redis_server.url, free_port(), workdir) for _ in range(2)]
    yield processes
    for process in processes:
        process.stop()


async def test_answer_through_one_process_wakes_the_long_poll_on_another_within_100ms(
    spawn: list[GatewayProcess],
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


async def test_client_ask_keeps_waiting_across_kill_9_and_restart(spawn: list[GatewayProcess]) -> None:
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
