"""Two ``threadgate serve`` processes on one Redis, Telegram by webhook: racing presses answer once."""

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

from channels.telegram import TelegramChannel
from channels.telegram.presses import settled_notice
from gateway.channel import Channels
from gateway.models import AgentDefinition, HumanInput, PromptRequest, PromptState, RunRequest
from gateway.service import Gateway
from gateway.store import Store
from tests.channels.telegram_support import ALICE, CAROL, DEPLOY, GROUP, TOKEN
from tests.fakes.telegram import FakeTelegram
from tests.support.redis_server import RedisServer, free_port

pytestmark = [pytest.mark.redis, pytest.mark.slow]
REPO = Path(__file__).resolve().parents[2]
SECRET = "race-Secret_1"


def serve(fake: FakeTelegram, redis_url: str, workdir: Path, port: int) -> subprocess.Popen[bytes]:
    """``threadgate serve`` taking Telegram's pushes at its own webhook URL, in a directory with no .env."""
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
        TELEGRAM_WEBHOOK_URL=f"http://127.0.0.1:{port}/telegram/webhook",
        TELEGRAM_WEBHOOK_SECRET=SECRET,
    )
    log = (workdir / "serve.log").open("wb")
    command = [sys.executable, "-m", "gateway.cli", "serve", "--host", "127.0.0.1", "--port", str(port)]
    return subprocess.Popen(command, cwd=workdir, env=env, stdout=log, stderr=subprocess.STDOUT)


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    server = FakeTelegram(TOKEN)
    await server.start()
    yield server
    await server.stop()


@pytest.fixture
async def webhooks(fake: FakeTelegram, redis_server: RedisServer, tmp_path: Path) -> AsyncIterator[list[str]]:
    """The webhook URLs of two running gateway processes."""
    redis_server.flush()
    started = []
    for name in ("a", "b"):
        port = free_port()
        started.append((port, serve(fake, redis_server.url, tmp_path / name, port)))
    try:
        async with httpx.AsyncClient() as client, asyncio.timeout(30):
            for port, process in started:
                while True:
                    assert process.poll() is None, "threadgate serve exited; see serve.log in the tmp dir"
                    try:
                        if (await client.get(f"http://127.0.0.1:{port}/healthz")).status_code == 200:
                            break
                    except httpx.TransportError:
                        pass
                    await asyncio.sleep(0.05)
        yield [f"http://127.0.0.1:{port}/telegram/webhook" for port, _process in started]
    finally:
        for _port, process in started:
            process.terminate()
        for _port, process in started:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


async def test_presses_racing_on_two_processes_resolve_the_prompt_once(
    fake: FakeTelegram, redis_server: RedisServer, webhooks: list[str]
) -> None:
    client = redis.asyncio.from_url(redis_server.url, decode_responses=True)
    # The agent's side, in this process: it raises the prompt; the two servers take the presses.
    agent = Gateway(Store(client), Channels([TelegramChannel(TOKEN, base_url=fake.base_url)]))
    await agent.start()
    try:
        await agent.store.put_agent(
            AgentDefinition(name="ops", human_input=HumanInput(approvers=[f"telegram:{CAROL}"]))
        )
        run = await agent.create_run(
            RunRequest(thread_id=f"telegram:{GROUP}", agent="ops", started_by=f"telegram:{ALICE}")
        )
        prompt = await agent.raise_prompt(run.run_id, PromptRequest.model_validate(DEPLOY))
        [_question, posted] = fake.sent
        alices = fake.press_update(ALICE, posted.message_id, fake.button(posted.message_id, "staging").data)
        carols = fake.press_update(
            CAROL, posted.message_id, fake.button(posted.message_id, "production").data
        )

        statuses = await asyncio.gather(
            fake.deliver(alices, url=webhooks[0]), fake.deliver(carols, url=webhooks[1])
        )

        assert list(statuses) == [200, 200]
        resolved = await agent.wait_prompt(prompt.prompt_id, 10)
        assert resolved.prompt_state is PromptState.ANSWERED
        winner = {f"telegram:{ALICE}": "staging", f"telegram:{CAROL}": "production"}[
            resolved.answered_by or ""
        ]
        assert [answer.answer for answer in resolved.answers or []] == [[winner]]
        notices = sorted([(await fake.answered(alices))["text"], (await fake.answered(carols))["text"]])
        assert notices == sorted([f"✓ Your answer was taken: {winner}", settled_notice(resolved)])
        await fake.wait_for(lambda: fake.buttons(posted.message_id) == [], 10)  # after the audit item
        assert [sent.text for sent in fake.sent[2:]] == [f"✓ Answered: {winner}"]
        assert len([edit for edit in fake.edits if edit.message_id == posted.message_id]) == 1
        assert fake.buttons(posted.message_id) == []
    finally:
        await agent.stop()
        await client.aclose()
