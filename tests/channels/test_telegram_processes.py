"""Two ``threadgate serve`` processes on one Redis, Telegram polling: one poller, taken over after kill -9."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis.asyncio

from channels.telegram import TelegramChannel
from gateway.channel import Channels
from gateway.lease import Lease, lease_name
from gateway.models import PromptRequest, PromptState, RunRequest
from gateway.service import Gateway
from gateway.store import Store, keys
from tests.channels.telegram_support import ALICE, DEPLOY, DEPLOY_TEXT, TOKEN
from tests.fakes.telegram import FakeTelegram
from tests.support.redis_server import RedisServer, free_port

pytestmark = [pytest.mark.redis, pytest.mark.slow]
REPO = Path(__file__).resolve().parents[2]
LEASE_TTL_MS = 2000
DM = f"telegram:{ALICE}"


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    server = FakeTelegram(TOKEN)
    await server.start()
    yield server
    await server.stop()


def serve(fake: FakeTelegram, redis_url: str, workdir: Path, port: int) -> subprocess.Popen[bytes]:
    """``threadgate serve`` with Telegram polling against the fake, in a directory with no ``.env``."""
    workdir.mkdir()
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("SLACK_", "TELEGRAM_", "DISCORD_", "THREADGATE_", "REDIS_"))
    }
    env.update(
        PYTHONPATH=str(REPO),
        REDIS_URL=redis_url,
        TELEGRAM_BOT_TOKEN=TOKEN,
        TELEGRAM_BASE_URL=fake.base_url,
        THREADGATE_LEASE_TTL_MS=str(LEASE_TTL_MS),
    )
    log = (workdir / "serve.log").open("wb")
    command = [sys.executable, "-m", "gateway.cli", "serve", "--host", "127.0.0.1", "--port", str(port)]
    return subprocess.Popen(command, cwd=workdir, env=env, stdout=log, stderr=subprocess.STDOUT)


@pytest.fixture
def processes(
    fake: FakeTelegram, redis_server: RedisServer, tmp_path: Path
) -> Iterator[list[tuple[int, subprocess.Popen[bytes]]]]:
    redis_server.flush()
    started: list[tuple[int, subprocess.Popen[bytes]]] = []
    for name in ("a", "b"):
        port = free_port()
        started.append((port, serve(fake, redis_server.url, tmp_path / name, port)))
    yield started
    for _port, process in started:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


async def wait_healthy(port: int, process: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    async with httpx.AsyncClient() as client, asyncio.timeout(timeout):
        while True:
            assert process.poll() is None, "threadgate serve exited; see serve.log in the test's tmp dir"
            try:
                if (await client.get(f"http://127.0.0.1:{port}/healthz")).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            await asyncio.sleep(0.05)


async def wait_gone(client: Any, key: str, timeout: float = 10.0) -> None:
    async with asyncio.timeout(timeout):
        while True:
            if not await client.exists(key):
                return
            await asyncio.sleep(0.02)


def holder_pid(holder: str | None) -> int | None:
    """The pid inside a lease holder id (``host:pid:nonce``)."""
    return int(holder.rsplit(":", 2)[1]) if holder else None


async def test_two_processes_poll_one_at_a_time_and_after_kill_9_the_other_answers_the_next_reply(
    fake: FakeTelegram, redis_server: RedisServer, processes: list[tuple[int, subprocess.Popen[bytes]]]
) -> None:
    for port, process in processes:
        await wait_healthy(port, process)
    client = redis.asyncio.from_url(redis_server.url, decode_responses=True)
    lease = Lease(client, lease_name("telegram", TOKEN))
    # The agent's side, in this process: it posts the prompt but does not poll.
    agent = Gateway(Store(client), Channels([TelegramChannel(TOKEN, base_url=fake.base_url)]))
    await agent.start()
    try:
        hello = await fake.say(ALICE, ALICE, "hello")
        await fake.confirmed(hello["update_id"], timeout=10)
        first_pid = holder_pid(await lease.current_holder())
        [poller] = [process for _port, process in processes if process.pid == first_pid]
        [survivor] = [process for _port, process in processes if process is not poller]
        assert (fake.max_concurrent_polls, fake.conflicts) == (1, 0)  # exactly one process polls

        run = await agent.create_run(RunRequest(thread_id=DM, agent="ops", started_by=f"telegram:{ALICE}"))
        prompt = await agent.raise_prompt(run.run_id, PromptRequest.model_validate(DEPLOY))
        assert fake.sent[-1].text == DEPLOY_TEXT

        # A process killed mid-drain leaves its thread's outbox lock to expire (30 s) before another
        # process posts the audit item; kill between drains so the test shows the takeover alone.
        await agent.outbox.idle()
        await wait_gone(client, keys.outbox_lock(DM))
        poller.kill()  # kill -9: no shutdown, the lease is left to expire
        poller.wait()
        reply = await fake.say(ALICE, ALICE, "2")
        await fake.confirmed(reply["update_id"], timeout=25)  # lease TTL plus a retry, well within 30 s

        resolved = await agent.wait_prompt(prompt.prompt_id, 10)
        assert resolved.prompt_state is PromptState.ANSWERED
        assert [a.answer for a in resolved.answers or []] == [["production"]]
        assert holder_pid(await lease.current_holder()) == survivor.pid
        await fake.wait_for(lambda: fake.sent[-1].text == "✓ Answered: production", timeout=10)
        assert fake.conflicts == 0
    finally:
        await agent.stop()
        await client.aclose()
