"""Helpers for the Discord channel tests: a gateway process wired to the fake Discord, and small waits."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from pydantic import SecretStr

from channels.discord import DiscordChannel
from gateway.base.models import PromptKind, PromptRequest, Question, RunRequest
from gateway.base.settings import Settings
from gateway.decision.service import Gateway
from gateway.process.runtime import Runtime
from gateway.store import keys
from tests.fakes.discord import FakeDiscord
from tests.support.feeds import feed_entries
from tests.support.platforms import build_channel, own_settings

CHANNEL_ID = 111_111_111_111_111_111
GUILD_ID = 222_222_222_222_222_222
ALICE = 333_333_333_333_333_333
BOB = 444_444_444_444_444_444
THREAD = f"discord:{CHANNEL_ID}"

DEPLOY_TARGET = Question.model_validate(
    {
        "question": "What's the deployment target?",
        "options": [
            {"label": "staging", "description": "push to staging.example.com"},
            {"label": "production", "description": "push to www.example.com"},
        ],
    }
)
DEPLOY_TARGET_TEXT = (
    "What's the deployment target?\n"
    "  1. staging — push to staging.example.com\n"
    "  2. production — push to www.example.com"
)


def discord_settings(fake: FakeDiscord, redis_url: str | None, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "redis_url": redis_url,
        "discord_bot_token": SecretStr(fake.token),
        "discord_api_base_url": fake.api_base_url,
        "discord_gateway_url": fake.gateway_url,
        "threadgate_lease_ttl_ms": 2000,
        **overrides,
    }
    return Settings(_env_file=None, **values)


@contextlib.asynccontextmanager
async def discord_gateway(
    fake: FakeDiscord, redis_url: str | None, *, connected: bool = True, **channel_options: Any
) -> AsyncIterator[Runtime]:
    """A started gateway process whose only channel is Discord, built from settings like ``serve`` does."""
    settings = discord_settings(fake, redis_url)
    channel = build_channel("discord", settings)
    if channel_options:
        own = own_settings("discord", settings)
        channel = DiscordChannel(
            own.discord_bot_token.get_secret_value(),
            api_base_url=own.discord_api_base_url,
            gateway_url=own.discord_gateway_url,
            **channel_options,
        )
    runtime = Runtime.build(settings, channels=[channel])
    runtime.gateway.sweep_interval = 0.2
    await runtime.start()
    try:
        if connected:
            await fake.wait_for(lambda: len(fake.open_sessions()) >= 1)
        yield runtime
    finally:
        await runtime.stop()


# Fixtures the Discord test modules share: a module binds those it uses (``fake = discord_support.fake``).


@pytest.fixture
async def fake() -> AsyncIterator[FakeDiscord]:
    """The fake Discord (REST and gateway), started."""
    server = await FakeDiscord().start()
    yield server
    await server.stop()


@pytest.fixture
async def runtime(fake: FakeDiscord, redis_url: str | None) -> AsyncIterator[Runtime]:
    """A gateway process connected to the fake, on the embedded store or a real Redis."""
    async with discord_gateway(fake, redis_url) as runtime:
        yield runtime


@pytest.fixture
async def runtime_on_redis(fake: FakeDiscord, real_redis: str) -> AsyncIterator[Runtime]:
    """A gateway process connected to the fake, on the session's redis-server."""
    async with discord_gateway(fake, real_redis) as runtime:
        yield runtime


async def eventually(predicate: Callable[[], Any], timeout: float = 5.0, interval: float = 0.02) -> Any:
    """Poll an async or plain predicate until it returns something truthy; return that."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        result = predicate()
        if asyncio.iscoroutine(result):
            result = await result
        if result:
            return result
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(interval)


async def agent_feed(runtime: Runtime) -> list[dict[str, Any]]:
    """The messages queued for agents, oldest first."""
    return await feed_entries(runtime.store.redis, keys.MESSAGES)


async def feed_until(runtime: Runtime, done: Callable[[list[str]], bool]) -> list[str]:
    """The texts in the agent feed, once ``done(texts)`` holds."""

    async def texts() -> list[str] | None:
        found = [entry["text"] for entry in await agent_feed(runtime)]
        return found if done(found) else None

    result: list[str] = await eventually(texts)
    return result


async def start_run(gateway: Gateway, started_by: int = ALICE, thread_id: str = THREAD) -> str:
    run = await gateway.create_run(
        RunRequest(thread_id=thread_id, agent="ops", started_by=f"discord:{started_by}")
    )
    return run.run_id


def deploy_question(kind: PromptKind = PromptKind.ASK_USER_QUESTION) -> PromptRequest:
    return PromptRequest(kind=kind, questions=[DEPLOY_TARGET.model_copy(deep=True)])
