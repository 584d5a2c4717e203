"""Helpers for the Telegram channel tests: a gateway wired to the fake Bot API, and the agent's side."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
import uvicorn

from channels.telegram import TelegramChannel
from gateway.api import create_app
from gateway.base.models import Prompt, PromptRequest, RunRequest
from gateway.base.settings import Settings
from gateway.process.runtime import Runtime
from gateway.store import keys
from tests.fakes.telegram import FakeTelegram
from tests.support.feeds import feed_entries
from tests.support.platforms import build_channel
from tests.support.redis_server import free_port

TOKEN = "424242:fake-token-for-tests"
ALICE, BOB, CAROL = 111, 222, 333
GROUP = -100500

DEPLOY = {
    "kind": "ask_user_question",
    "questions": [
        {
            "question": "What's the deployment target?",
            "options": [
                {"label": "staging", "description": "push to staging.example.com"},
                {"label": "production", "description": "push to www.example.com"},
            ],
        }
    ],
}
DEPLOY_TEXT = (
    "What's the deployment target?\n"
    "  1. staging — push to staging.example.com\n"
    "  2. production — push to www.example.com"
)


@asynccontextmanager
async def fake_bot_api(**options: Any) -> AsyncIterator[FakeTelegram]:
    """The fake Bot API for ``TOKEN`` (``options`` as ``FakeTelegram`` takes them), started; stopped after."""
    server = FakeTelegram(TOKEN, **options)
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


# Fixtures the Telegram test modules share: a module binds those it uses (``fake = telegram_support.fake``).


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    """The fake Bot API, privacy mode off."""
    async with fake_bot_api() as server:
        yield server


@pytest.fixture
def redis_url(real_redis: str) -> str:
    """The session's redis-server, emptied: these tests claim Redis behaviour, so no embedded store."""
    return real_redis


@pytest.fixture
async def runtime(fake: FakeTelegram, redis_url: str) -> AsyncIterator[Runtime]:
    """A started gateway polling the fake Bot API."""
    async with telegram_gateway(fake, redis_url) as started:
        yield started


def settings_for(fake: FakeTelegram, redis_url: str | None, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "redis_url": redis_url,
        "telegram_bot_token": TOKEN,
        "telegram_base_url": fake.base_url,
        "telegram_webhook_url": None,
        "telegram_webhook_secret": None,
        "threadgate_lease_ttl_ms": 2000,
        **overrides,
    }
    return Settings(_env_file=None, **values)


@asynccontextmanager
async def telegram_gateway(
    fake: FakeTelegram, redis_url: str | None, *, wait_polling: bool = True, **overrides: Any
) -> AsyncIterator[Runtime]:
    """A started runtime whose only channel is Telegram (built from settings), pointed at ``fake``."""
    settings = settings_for(fake, redis_url, **overrides)
    runtime = Runtime.build(settings, channels=[build_channel("telegram", settings)])
    await runtime.start()
    try:
        if wait_polling:
            await fake.wait_for(lambda: bool(fake.calls_of("getUpdates")))
        yield runtime
    finally:
        await runtime.stop()


def channel_of(runtime: Runtime) -> TelegramChannel:
    channel = runtime.channels[0]
    assert isinstance(channel, TelegramChannel)
    return channel


@asynccontextmanager
async def serving(runtime: Runtime, port: int) -> AsyncIterator[str]:
    """The gateway's app (API and webhook route) on 127.0.0.1:``port``; its lifespan starts the runtime."""
    config = uvicorn.Config(create_app(runtime), host="127.0.0.1", port=port, log_level="warning")
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    try:
        async with asyncio.timeout(10):
            while not server.started:
                if task.done():
                    task.result()
                await asyncio.sleep(0.01)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await task


def webhook_settings(secret: str = "s3cret-Token_1") -> tuple[int, dict[str, Any]]:
    port = free_port()
    return port, {
        "telegram_webhook_url": f"http://127.0.0.1:{port}/telegram/webhook",
        "telegram_webhook_secret": secret,
    }


async def open_prompt(
    runtime: Runtime,
    thread_id: str,
    payload: dict[str, Any],
    started_by: int | None = ALICE,
    agent: str = "ops",
) -> Prompt:
    """What an agent does: start a run in the thread and raise a prompt in it."""
    run = await runtime.gateway.create_run(
        RunRequest(
            thread_id=thread_id,
            agent=agent,
            started_by=f"telegram:{started_by}" if started_by is not None else None,
        )
    )
    return await runtime.gateway.raise_prompt(run.run_id, PromptRequest.model_validate(payload))


async def agent_messages(runtime: Runtime) -> list[dict[str, Any]]:
    """The agent's message feed, once this process has delivered what it owes."""
    await runtime.gateway.outbox.idle()
    return await feed_entries(runtime.store.redis, keys.MESSAGES)


async def settled(runtime: Runtime, prompt_id: str, timeout: float = 5.0) -> Prompt:
    """The prompt once it settled (or as it stands after ``timeout``), its audit item sent."""
    prompt = await runtime.gateway.wait_prompt(prompt_id, timeout)
    await runtime.gateway.outbox.idle()
    return prompt


@asynccontextmanager
async def webhook_gateway(
    fake: FakeTelegram, redis_url: str | None, secret: str = "s3cret-Token_1"
) -> AsyncIterator[tuple[Runtime, str]]:
    """The gateway served over HTTP in webhook mode (its lifespan starts the channel) and its base URL."""
    port, overrides = webhook_settings(secret)
    settings = settings_for(fake, redis_url, **overrides)
    runtime = Runtime.build(settings, channels=[build_channel("telegram", settings)])
    async with serving(runtime, port) as base_url:
        yield runtime, base_url
