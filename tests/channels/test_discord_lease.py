"""Several gateway processes, one Discord bot: exactly one holds the gateway connection, and a survivor
takes over when the holder dies, so no Discord event is handled twice and none is left unhandled."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from gateway.base.models import PromptState
from gateway.decision.service import Gateway
from gateway.delivery.channel import Channels
from gateway.delivery.lease import lease_name
from gateway.store import Store, connect
from tests.channels.discord_support import (
    ALICE,
    CHANNEL_ID,
    GUILD_ID,
    agent_feed,
    deploy_question,
    discord_gateway,
    eventually,
    feed_until,
    start_run,
)
from tests.fakes.discord import FakeDiscord
from tests.support.memory_channel import MemoryChannel
from tests.support.serve import ServeProcess, serve_env, serving

LEASE_TTL_MS = 2000


@pytest.fixture
async def fake() -> AsyncIterator[FakeDiscord]:
    server = await FakeDiscord().start()
    yield server
    await server.stop()


async def test_one_process_holds_the_gateway_and_the_other_takes_over_when_it_stops(
    fake: FakeDiscord, real_redis: str
) -> None:
    async with (
        discord_gateway(fake, real_redis) as first,
        discord_gateway(fake, real_redis, connected=False) as second,
    ):
        await asyncio.sleep(LEASE_TTL_MS / 1000 / 2)  # the second has retried the lease by now
        assert len(fake.sessions) == 1
        await fake.person_says(CHANNEL_ID, ALICE, "heard once", guild_id=GUILD_ID)
        await eventually(lambda: agent_feed(first))

        await first.stop()
        await fake.wait_for(lambda: len(fake.sessions) == 2 and len(fake.open_sessions()) == 1)
        await fake.person_says(CHANNEL_ID, ALICE, "heard by the survivor", guild_id=GUILD_ID)

        feed = await feed_until(second, lambda texts: len(texts) == 2)
        assert feed == ["heard once", "heard by the survivor"]


@pytest.fixture
def serve_processes(fake: FakeDiscord, real_redis: str, tmp_path: Path) -> Iterator[list[ServeProcess]]:
    """Two ``threadgate serve`` processes on one Redis, both configured with the fake's bot token."""
    env = serve_env(
        REDIS_URL=real_redis,
        DISCORD_BOT_TOKEN=fake.token,
        DISCORD_API_BASE_URL=fake.api_base_url,
        DISCORD_GATEWAY_URL=fake.gateway_url,
        THREADGATE_LEASE_TTL_MS=str(LEASE_TTL_MS),
        THREADGATE_LOG_LEVEL="WARNING",
    )
    servers = [ServeProcess(env, tmp_path, name=f"serve-{index}") for index in range(2)]
    # Not waited for here: the fake Discord they connect to runs on the test's event loop.
    with serving(*servers, ready_path=None):
        yield servers


@pytest.mark.slow
async def test_kill_9_of_the_holder_hands_the_gateway_to_the_other_process_which_answers_the_next_reply(
    fake: FakeDiscord, real_redis: str, serve_processes: list[ServeProcess]
) -> None:
    connection = connect(real_redis)
    store = Store(connection.client)
    await store.load()
    agent_side = Gateway(store, Channels([MemoryChannel("discord")]))
    try:
        await fake.wait_for(lambda: len(fake.sessions) == 1, timeout=30)
        await asyncio.sleep(LEASE_TTL_MS / 1000 / 2)
        assert len(fake.sessions) == 1, "the second process must not connect while the lease is held"
        holder = await connection.client.get(f"tg:lease:{lease_name('discord', fake.token)}")
        holder_pid = int(holder.split(":")[1])
        [victim] = [p for p in serve_processes if p.running.pid == holder_pid]

        victim.kill()
        await fake.wait_for(lambda: len(fake.sessions) == 2 and len(fake.open_sessions()) == 1, timeout=15)

        run_id = await start_run(agent_side)
        prompt = await agent_side.raise_prompt(run_id, deploy_question())
        await agent_side.outbox.idle()  # from here on only the gateway processes drain the thread
        await fake.person_says(CHANNEL_ID, ALICE, "2", guild_id=GUILD_ID)
        await fake.wait_for(
            lambda: any(m["content"].startswith("✓ Answered: production") for m in fake.posted(CHANNEL_ID)),
            timeout=10,
        )

        settled = await store.get_prompt(prompt.prompt_id)
        assert settled is not None and settled.prompt_state is PromptState.ANSWERED
        assert [a.answer for a in settled.answers or []] == [["production"]]
    finally:
        await agent_side.outbox.idle()
        await connection.client.aclose()
