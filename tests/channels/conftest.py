"""Fixtures shared by the channel tests: the gateway's ASGI app on a loopback port, platform fakes."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager

import pytest
import uvicorn
from starlette.types import ASGIApp

from tests.fakes.slack import FakeSlack
from tests.support.redis_server import RedisServer

ServeApp = Callable[[ASGIApp], AbstractAsyncContextManager[str]]


@asynccontextmanager
async def serve_app(app: ASGIApp) -> AsyncIterator[str]:
    """Serve ``app`` with uvicorn on 127.0.0.1 (lifespan on); yields its base URL, shuts it down after."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, lifespan="on", log_level="warning")
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        while not server.started:
            if task.done():
                task.result()
                raise RuntimeError("the server stopped before it started (lifespan failed?)")
            await asyncio.sleep(0.01)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await task
        sock.close()


@pytest.fixture
def serve() -> ServeApp:
    """``async with serve(app) as base_url:`` serves an ASGI app for the duration of the block."""
    return serve_app


@pytest.fixture
async def fake_slack() -> AsyncIterator[FakeSlack]:
    """A local Slack workspace (Web API, Events API deliveries, Socket Mode) on a loopback port."""
    fake = FakeSlack()
    await fake.start()
    yield fake
    await fake.stop()


@pytest.fixture
def real_redis(redis_server: RedisServer) -> str:
    """The URL of the session's redis-server, emptied for this test."""
    redis_server.flush()
    return redis_server.url
