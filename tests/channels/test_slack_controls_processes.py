"""Two ``threadgate serve`` processes on one Redis, Slack over HTTP: presses racing on both answer once."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
import redis.asyncio

from channels.slack import SlackChannel
from gateway.channel import Channels
from gateway.models import AgentDefinition, HumanInput, PromptRequest, PromptState, RunRequest
from gateway.service import Gateway
from gateway.store import Store
from tests.channels.slack_support import ALICE, BOB, CHANNEL
from tests.channels.test_slack_controls import TARGET
from tests.fakes.slack import FakeSlack
from tests.support.redis_server import RedisServer, free_port

pytestmark = [pytest.mark.redis, pytest.mark.slow]
REPO = Path(__file__).resolve().parents[2]
THREAD_TS = "1712345678.000100"


def serve(fake: FakeSlack, redis_url: str, workdir: Path, port: int) -> subprocess.Popen[bytes]:
    """``threadgate serve`` with Slack's Events API against the fake, in a directory with no ``.env``."""
    workdir.mkdir()
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("SLACK_", "TELEGRAM_", "DISCORD_", "THREADGATE_", "REDIS_"))
    }
    env.update(
        PYTHONPATH=str(REPO),
        REDIS_URL=redis_url,
        SLACK_BOT_TOKEN=fake.bot_token,
        SLACK_SIGNING_SECRET=fake.signing_secret,
        SLACK_API_URL=fake.api_url,
    )
    log = (workdir / "serve.log").open("wb")
    command = [sys.executable, "-m", "gateway.cli", "serve", "--host", "127.0.0.1", "--port", str(port)]
    return subprocess.Popen(command, cwd=workdir, env=env, stdout=log, stderr=subprocess.STDOUT)


@pytest.fixture
async def fake() -> AsyncIterator[FakeSlack]:
    server = FakeSlack()
    await server.start()
    yield server
    await server.stop()


@pytest.fixture
async def ports(fake: FakeSlack, redis_server: RedisServer, tmp_path: Path) -> AsyncIterator[list[int]]:
    redis_server.flush()
    started: list[tuple[int, subprocess.Popen[bytes]]] = []
    for name in ("a", "b"):
        port = free_port()
        started.append((port, serve(fake, redis_server.url, tmp_path / name, port)))
    try:
        await wait_healthy(started)
        yield [port for port, _process in started]
    finally:
        for _port, process in started:
            process.terminate()
        for _port, process in started:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


async def wait_healthy(started: list[tuple[int, subprocess.Popen[bytes]]], timeout: float = 30.0) -> None:
    async with httpx.AsyncClient() as client, asyncio.timeout(timeout):
        for port, process in started:
            while True:
                assert process.poll() is None, "threadgate serve exited; see serve.log in the test's tmp dir"
                try:
                    if (await client.get(f"http://127.0.0.1:{port}/healthz")).status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                await asyncio.sleep(0.05)


async def test_presses_racing_on_two_processes_resolve_the_prompt_once(
    fake: FakeSlack, redis_server: RedisServer, ports: list[int]
) -> None:
    client = redis.asyncio.from_url(redis_server.url, decode_responses=True)
    # The agent's side, in this process: it raises the prompt; the two servers take the presses.
    slack = SlackChannel(fake.bot_token, signing_secret=fake.signing_secret, api_url=fake.api_url)
    agent = Gateway(Store(client), Channels([slack]))
    await agent.start()
    try:
        await agent.store.put_agent(
            AgentDefinition(name="ops", human_input=HumanInput(approvers=[f"slack:{BOB}"]))
        )
        thread_id = f"slack:{CHANNEL}:{THREAD_TS}"
        run = await agent.create_run(
            RunRequest(thread_id=thread_id, agent="ops", started_by=f"slack:{ALICE}")
        )
        prompt = await agent.raise_prompt(run.run_id, PromptRequest.model_validate(TARGET))
        [message] = fake.posted(THREAD_TS)

        statuses = await asyncio.gather(
            fake.press(f"http://127.0.0.1:{ports[0]}/slack/events", message, "staging", user=ALICE),
            fake.press(f"http://127.0.0.1:{ports[1]}/slack/events", message, "production", user=BOB),
        )
        assert list(statuses) == [200, 200]

        settled = await agent.wait_prompt(prompt.prompt_id, 10)
        assert settled.prompt_state is PromptState.ANSWERED
        winner = {f"slack:{ALICE}": "staging", f"slack:{BOB}": "production"}[settled.answered_by or ""]
        assert [answer.answer for answer in settled.answers or []] == [[winner]]

        await fake.wait_for(lambda: len(fake.responses) == 2 and bool(fake.calls_to("chat.update")), 10)
        await fake.wait_for(lambda: fake.posted(THREAD_TS)[-1]["text"].startswith("✓"), 10)
        notices = sorted(response["text"] for response in fake.responses)
        assert notices == sorted(
            [
                f"Your answer was recorded: {winner}",
                f"This prompt was already answered ({winner}), so nothing was changed.",
            ]
        )
        assert len(fake.calls_to("chat.update")) == 1
        assert [m["text"] for m in fake.posted(THREAD_TS)[1:]] == [f"✓ Answered: {winner}"]
    finally:
        await agent.stop()
        await client.aclose()
