"""API test fixtures: the app served by uvicorn on a free port, on the session's real redis-server."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
import uvicorn
from fastapi import FastAPI
from starlette.routing import BaseRoute
from starlette.types import ASGIApp

from gateway.api import create_app
from gateway.api.client_address import proxy_options
from gateway.api.deps import ApiOptions
from gateway.base.settings import Settings
from gateway.delivery.channel import ChannelContext
from gateway.process.runtime import Runtime
from tests.support.api_calls import raise_prompt as raise_prompt
from tests.support.memory_channel import MemoryChannel
from tests.support.redis_server import RedisServer, free_port

AGENT_TOKEN = "agent-token-4f1c9a"
OPERATOR_TOKEN = "operator-token-8d2e7b"
TOKENS = f"robot:agent:{AGENT_TOKEN}:*,desk:operator:{OPERATOR_TOKEN}"
AGENT_AUTH = {"Authorization": f"Bearer {AGENT_TOKEN}"}
OPERATOR_AUTH = {"Authorization": f"Bearer {OPERATOR_TOKEN}"}
THREAD = "slack:C0456:1712345678.000100"
STARTER = "slack:U0123ABC"
FAST = ApiOptions(max_wait_s=5, sse_heartbeat_s=0.3)


@dataclass
class ServedChannel(MemoryChannel):
    """The in-memory channel, runnable inside a Runtime (nothing to start, no ingress routes)."""

    started: bool = field(default=False)

    async def start(self, context: ChannelContext) -> None:
        self.started = True

    async def stop(self) -> None:
        self.started = False

    def routes(self) -> list[BaseRoute]:
        return []


def api_settings(redis_url: str | None, **extra: Any) -> Settings:
    values: dict[str, Any] = {"redis_url": redis_url, "threadgate_api_tokens": TOKENS, **extra}
    return Settings(_env_file=None, **values)  # type: ignore[call-arg]


@contextlib.asynccontextmanager
async def serve(
    app: ASGIApp, settings: Settings | None = None, port: int | None = None
) -> AsyncIterator[str]:
    """Serve ``app`` with uvicorn on 127.0.0.1 (``port``, else a free one) for the block; yields its base URL.
    A gateway's ``settings`` give the server its forwarded-header options, as ``threadgate serve`` does."""
    port = port or free_port()
    proxies = proxy_options(settings) if settings is not None else {}
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on", **proxies)
    server = uvicorn.Server(config)
    server.install_signal_handlers = lambda: None  # type: ignore[method-assign]
    task = asyncio.create_task(server.serve())
    while not server.started:
        if task.done():
            task.result()
        await asyncio.sleep(0.005)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        server.force_exit = True
        await task


@dataclass
class Served:
    base_url: str
    runtime: Runtime
    channel: ServedChannel
    app: FastAPI

    def client(self, headers: dict[str, str] | None = None) -> httpx.AsyncClient:
        return httpx.AsyncClient(base_url=self.base_url, headers=headers or {}, timeout=10)


@pytest.fixture
def real_redis(redis_server: RedisServer) -> str:
    redis_server.flush()
    return redis_server.url


@contextlib.asynccontextmanager
async def served_gateway(
    redis_url: str, options: ApiOptions = FAST, port: int | None = None, **extra: Any
) -> AsyncIterator[Served]:
    channel = ServedChannel("slack")
    settings = api_settings(redis_url, **extra)
    runtime = Runtime.build(settings, channels=[channel, ServedChannel("web")])
    app = create_app(runtime, options)
    async with serve(app, settings, port) as base_url:
        yield Served(base_url, runtime, channel, app)


@pytest.fixture
async def served(real_redis: str) -> AsyncIterator[Served]:
    async with served_gateway(real_redis) as gateway:
        yield gateway


@pytest.fixture
async def agent(served: Served) -> AsyncIterator[httpx.AsyncClient]:
    async with served.client(AGENT_AUTH) as client:
        yield client


@pytest.fixture
async def operator(served: Served) -> AsyncIterator[httpx.AsyncClient]:
    async with served.client(OPERATOR_AUTH) as client:
        yield client


async def start_run(
    agent: httpx.AsyncClient, *, thread_id: str = THREAD, started_by: str | None = STARTER, name: str = "ops"
) -> dict[str, Any]:
    response = await agent.post(
        "/v1/runs", json={"thread_id": thread_id, "agent": name, "started_by": started_by}
    )
    assert response.status_code == 201, response.text
    run: dict[str, Any] = response.json()
    return run


DEPLOY_QUESTIONS = [
    {
        "question": "What's the deployment target?",
        "options": [
            {"label": "staging", "description": "push to staging.example.com"},
            {"label": "production", "description": "push to www.example.com"},
        ],
    },
    {
        "question": "Which sections?",
        "multiSelect": True,
        "options": [{"label": "KPI cards"}, {"label": "Table"}],
    },
    {"question": "Any preference for visual style?"},
]


def respond_path(run: dict[str, Any], prompt_id: str) -> str:
    return f"/v1/agent-runs/{run['run_id']}/threads/{run['thread_id']}/user-inputs/{prompt_id}/respond"
