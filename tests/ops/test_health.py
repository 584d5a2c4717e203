"""Liveness and readiness: /healthz says the process is up; /readyz says it should be sent traffic."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator

import httpx
import pytest

from gateway.api import create_app
from gateway.base.settings import Settings
from gateway.delivery.lease import Lease
from gateway.process.runtime import Runtime
from tests.support.redis_server import free_port


def runtime_on(redis_url: str | None) -> Runtime:
    # The test client names its host "gateway": allowed here as a deployment would allow its own name.
    settings = Settings(_env_file=None, redis_url=redis_url, threadgate_allowed_hosts="gateway")  # type: ignore[call-arg]
    return Runtime.build(settings, channels=[])


@pytest.fixture
async def runtime() -> AsyncIterator[Runtime]:
    runtime = runtime_on(None)
    yield runtime
    await runtime.connection.client.aclose()


async def get(runtime: Runtime, path: str) -> httpx.Response:
    transport = httpx.ASGITransport(app=create_app(runtime))
    async with httpx.AsyncClient(transport=transport, base_url="http://gateway") as client:
        return await client.get(path)


async def test_healthz_answers_while_the_process_runs(runtime: Runtime) -> None:
    response = await get(runtime, "/healthz")
    assert (response.status_code, response.json()) == (200, {"status": "ok", "pid": os.getpid()})


async def test_ready_when_redis_answers_and_no_channel_needs_a_connection(runtime: Runtime) -> None:
    response = await get(runtime, "/readyz")
    assert response.status_code == 200
    assert response.json()["status"] == "ready"
    assert response.json()["checks"]["redis"]["ok"] is True


async def test_not_ready_when_redis_does_not_answer() -> None:
    runtime = runtime_on(f"redis://127.0.0.1:{free_port()}/0")  # nothing listens there
    try:
        response = await get(runtime, "/readyz")
    finally:
        await runtime.connection.client.aclose()
    assert response.status_code == 503
    error = response.json()["error"]
    assert error["code"] == "NOT_READY"
    assert "redis" in error["message"]
    assert error["details"]["redis"]["ok"] is False


async def test_a_channel_connection_nobody_holds_makes_the_process_not_ready(runtime: Runtime) -> None:
    runtime.lease("telegram:abc123")  # a channel asked for its connection lease, but nobody holds it yet
    response = await get(runtime, "/readyz")
    assert response.status_code == 503
    assert response.json()["error"]["details"]["lease:telegram:abc123"] == {
        "ok": False,
        "detail": "no process holds this channel's connection",
    }


async def test_a_channel_connection_held_by_another_process_is_ready(runtime: Runtime) -> None:
    runtime.lease("telegram:abc123")
    elsewhere = Lease(runtime.connection.client, "telegram:abc123", holder="other-host:42:cafe")
    assert await elsewhere.try_acquire()
    response = await get(runtime, "/readyz")
    assert response.status_code == 200
    assert response.json()["checks"]["lease:telegram:abc123"]["detail"] == "held by another process"


async def test_a_channel_connection_held_here_is_ready(runtime: Runtime) -> None:
    assert await runtime.lease("telegram:abc123").try_acquire()
    response = await get(runtime, "/readyz")
    assert response.status_code == 200
    assert response.json()["checks"]["lease:telegram:abc123"]["detail"] == "connected here"


async def test_not_ready_once_shutting_down_so_traffic_drains_away(runtime: Runtime) -> None:
    runtime.stopping = True
    response = await get(runtime, "/readyz")
    assert response.status_code == 503
    assert response.json()["error"]["details"]["process"] == {"ok": False, "detail": "shutting down"}
    assert (await get(runtime, "/healthz")).status_code == 200
