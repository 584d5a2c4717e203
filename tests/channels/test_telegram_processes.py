"""Two ``threadgate serve`` processes on one Redis, Telegram polling: one poller, taken over after kill -9."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio

from channels.telegram import TelegramChannel
from gateway.base.models import PromptRequest, PromptState, RunRequest
from gateway.decision.service import Gateway
from gateway.delivery.channel import Channels
from gateway.delivery.lease import Lease, lease_name
from gateway.store import Store, keys
from tests.channels import telegram_support
from tests.channels.telegram_support import ALICE, DEPLOY, DEPLOY_TEXT, TOKEN
from tests.fakes.telegram import FakeTelegram
from tests.support.serve import ServeProcess, serve_env, serving

pytestmark = [pytest.mark.redis, pytest.mark.slow]
LEASE_TTL_MS = 2000
DM = f"telegram:{ALICE}"

fake = telegram_support.fake


@pytest.fixture
def processes(fake: FakeTelegram, real_redis: str, tmp_path: Path) -> Iterator[list[ServeProcess]]:
    """Two ``threadgate serve`` processes on one Redis with Telegram polling against the fake."""
    env = serve_env(
        REDIS_URL=real_redis,
        TELEGRAM_BOT_TOKEN=TOKEN,
        TELEGRAM_BASE_URL=fake.base_url,
        THREADGATE_LEASE_TTL_MS=str(LEASE_TTL_MS),
    )
    servers = [ServeProcess(env, tmp_path / name) for name in ("a", "b")]
    # Not waited for here: the fake Bot API they call at startup runs on the test's event loop.
    with serving(*servers, ready_path=None):
        yield servers


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
    fake: FakeTelegram, real_redis: str, processes: list[ServeProcess]
) -> None:
    await asyncio.gather(*(asyncio.to_thread(server.wait_ready) for server in processes))
    client = redis.asyncio.from_url(real_redis, decode_responses=True)
    lease = Lease(client, lease_name("telegram", TOKEN))
    # The agent's side, in this process: it posts the prompt but does not poll.
    agent = Gateway(Store(client), Channels([TelegramChannel(TOKEN, base_url=fake.base_url)]))
    await agent.start()
    try:
        hello = await fake.say(ALICE, ALICE, "hello")
        await fake.confirmed(hello["update_id"], timeout=10)
        first_pid = holder_pid(await lease.current_holder())
        [poller] = [server for server in processes if server.running.pid == first_pid]
        [survivor] = [server for server in processes if server is not poller]
        assert (fake.max_concurrent_polls, fake.conflicts) == (1, 0)  # exactly one process polls

        run = await agent.create_run(RunRequest(thread_id=DM, agent="ops", started_by=f"telegram:{ALICE}"))
        prompt = await agent.raise_prompt(run.run_id, PromptRequest.model_validate(DEPLOY))
        assert fake.sent[-1].text == DEPLOY_TEXT

        # A process killed mid-drain leaves its thread's outbox lock to expire (30 s) before another
        # process posts the audit item; kill between drains so the test shows the takeover alone.
        await agent.outbox.idle()
        await wait_gone(client, f"{keys.thread_prefix(DM)}lock")  # the lock take_outbox.lua holds
        poller.kill()  # kill -9: no shutdown, the lease is left to expire
        reply = await fake.say(ALICE, ALICE, "2")
        await fake.confirmed(reply["update_id"], timeout=25)  # lease TTL plus a retry, well within 30 s

        resolved = await agent.wait_prompt(prompt.prompt_id, 10)
        assert resolved.prompt_state is PromptState.ANSWERED
        assert [a.answer for a in resolved.answers or []] == [["production"]]
        assert holder_pid(await lease.current_holder()) == survivor.running.pid
        await fake.wait_for(lambda: fake.sent[-1].text.startswith("✓ Answered: production"), timeout=10)
        assert fake.conflicts == 0
    finally:
        await agent.stop()
        await client.aclose()


async def test_workers_of_one_serve_poll_one_at_a_time_under_the_lease(
    fake: FakeTelegram, real_redis: str, tmp_path: Path
) -> None:
    env = serve_env(
        REDIS_URL=real_redis,
        TELEGRAM_BOT_TOKEN=TOKEN,
        TELEGRAM_BASE_URL=fake.base_url,
        THREADGATE_LEASE_TTL_MS=str(LEASE_TTL_MS),
    )
    server = ServeProcess(env, tmp_path, options=("--workers", "2"))
    client = redis.asyncio.from_url(real_redis, decode_responses=True)
    with serving(server, ready_path=None):
        await asyncio.to_thread(server.wait_ready, "/readyz", 120)
        await asyncio.to_thread(server.wait_workers, 120)
        try:
            for text in ("hello", "again", "and again"):
                update = await fake.say(ALICE, ALICE, text)
                await fake.confirmed(update["update_id"], timeout=10)
            holder = holder_pid(await Lease(client, lease_name("telegram", TOKEN)).current_holder())
            workers = [line for line in server.log.read_text().splitlines() if line.startswith("Workers:")]
            assert str(holder) in workers[0] and holder != server.running.pid  # a worker holds it
            assert (fake.max_concurrent_polls, fake.conflicts) == (1, 0)  # exactly one worker polls
        finally:
            await client.aclose()
