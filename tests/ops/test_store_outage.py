"""Redis outages: 503 STORE_UNAVAILABLE while Redis is away, one log line each way, and everything resumes.

Each test owns a redis-server (AOF, fsync always) that it kills with -9 and starts again on the same port,
either from its AOF or empty, while the gateway keeps running.
"""

from __future__ import annotations

import asyncio
import gc
import inspect
import json
import logging
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from redis.exceptions import (
    BusyLoadingError,
    ClusterDownError,
    ConnectionError,
    DataError,
    MasterDownError,
    NoScriptError,
    ReadOnlyError,
    ResponseError,
    TimeoutError,
    TryAgainError,
)

from gateway.decision.outbox import Outbox
from gateway.delivery.channel import Channels
from gateway.delivery.lease import Lease
from gateway.store import Store, connect, keys
from gateway.store.outage import StoreHealth, is_store_outage
from tests.api.conftest import AGENT_AUTH, OPERATOR_AUTH, STARTER, Served, served_gateway, start_run
from tests.api.test_webhooks import Receiver, gateway_with_webhooks, receiving
from tests.support.api_calls import raise_prompt
from tests.support.redis_server import RedisServer, free_port, killable_redis

pytestmark = pytest.mark.redis
ASK = [{"question": "Restart the workers?"}]


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[RedisServer]:
    """A redis-server this test may kill: its own port and directory, every write fsynced to the AOF."""
    server = killable_redis(tmp_path / "redis")
    yield server
    server.stop()


async def until(condition: Callable[[], bool | Awaitable[bool]], timeout: float = 10.0) -> None:
    """Wait until ``condition`` (plain or awaitable) holds."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not await _value(condition()):
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.02)


async def _value(result: bool | Awaitable[bool]) -> bool:
    return await result if inspect.isawaitable(result) else result


def logged(caplog: pytest.LogCaptureFixture, name: str) -> list[logging.LogRecord]:
    return [record for record in caplog.records if record.getMessage() == name]


async def ready(served: Served) -> bool:
    async with served.client() as client:
        return (await client.get("/readyz")).status_code == 200


@pytest.mark.parametrize(
    "exc",
    [
        ConnectionError("Error 111 connecting to 127.0.0.1:6390. Connection refused."),
        ConnectionError("Connection reset by peer"),
        TimeoutError("Timeout reading from socket"),
        BusyLoadingError("Redis is loading the dataset in memory"),
        ReadOnlyError("You can't write against a read only replica."),
        ClusterDownError("The cluster is down"),
        MasterDownError("Link with MASTER is down"),
        TryAgainError("Multiple keys request during rehashing of slot"),
        ResponseError("MISCONF Redis is configured to save RDB snapshots, but it's unable to persist"),
        ExceptionGroup("stream", [ConnectionError("Connection closed by server.")]),
    ],
)
def test_failures_of_an_unreachable_or_unready_redis_are_outages(exc: Exception) -> None:
    assert is_store_outage(exc)


def raised_in(module: str, exc: Exception) -> Exception:
    """``exc`` as raised by code of ``module``."""
    namespace: dict[str, Any] = {"__name__": module, "exc": exc}
    exec(compile("def fail():\n    raise exc\n", f"<{module}>", "exec"), namespace)
    try:
        namespace["fail"]()
    except Exception as raised:
        return raised
    raise AssertionError("unreachable")


def test_a_socket_error_the_redis_client_did_not_wrap_is_an_outage() -> None:
    closed = "unable to perform operation on <TCPTransport closed=True>; the handler is closed"
    assert is_store_outage(raised_in("redis.asyncio.connection", RuntimeError(closed)))
    assert is_store_outage(raised_in("redis.asyncio.connection", ConnectionResetError(104, "reset")))
    assert not is_store_outage(raised_in("gateway.decision.service", RuntimeError("a bug")))


@pytest.mark.parametrize(
    "exc",
    [
        ResponseError("WRONGTYPE Operation against a key holding the wrong kind of value"),
        NoScriptError("No matching script."),
        DataError("Invalid input of type: 'dict'."),
        ValueError("a bug"),
        ExceptionGroup("stream", [ConnectionError("gone"), ValueError("a bug")]),
    ],
)
def test_other_failures_are_not_outages(exc: Exception) -> None:
    assert not is_store_outage(exc)


async def test_every_api_call_answers_503_store_unavailable_while_redis_is_down_then_resumes(
    own_redis: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    async with (
        served_gateway(own_redis.url) as served,
        served.client(AGENT_AUTH) as agent,
        served.client(OPERATOR_AUTH) as operator,
    ):
        run = await start_run(agent)
        prompt = await raise_prompt(agent, run["run_id"])
        pid = prompt["prompt_id"]
        # Several connections in the pool, all of which go stale when Redis dies.
        await asyncio.gather(*(agent.get(f"/v1/prompts/{pid}") for _ in range(12)))
        own_redis.kill()

        calls: list[tuple[httpx.AsyncClient, str, str, dict[str, Any] | None]] = [
            (agent, "POST", "/v1/runs", {"thread_id": "web:other", "agent": "ops", "started_by": STARTER}),
            (agent, "POST", f"/v1/runs/{run['run_id']}/prompts", {"kind": "approval", "questions": ASK}),
            (agent, "GET", f"/v1/prompts/{pid}", None),
            (agent, "GET", f"/v1/prompts/{pid}?wait=2", None),
            (agent, "GET", "/v1/prompts?state=pending", None),
            (agent, "GET", f"/v1/threads/{run['thread_id']}/items", None),
            (agent, "POST", f"/v1/prompts/{pid}/cancel", {"reason": "not needed"}),
            (operator, "POST", f"/v1/agents/ops/inputs/{pid}", {"action": "accept", "from": STARTER}),
            (operator, "GET", "/v1/agents/ops/inputs?state=pending", None),
        ]
        responses = await asyncio.gather(
            *(client.request(method, path, json=body) for client, method, path, body in calls)
        )
        for (_client, method, path, _body), response in zip(calls, responses, strict=True):
            assert response.status_code == 503, (method, path, response.text)
            assert response.headers["Retry-After"] == "2"
            error = response.json()["error"]
            assert (error["code"], error["details"]) == ("STORE_UNAVAILABLE", {"retry_after": 2})
        # An event stream does not open on a store that is away (a 200 would end at once, unexplained).
        for path, headers in (("/v1/events", {}), ("/v1/events", {"Last-Event-ID": "1-0"})):
            async with agent.stream("GET", path, headers=headers) as stream:
                assert stream.status_code == 503, (path, headers)
                assert stream.headers["Retry-After"] == "2"
                assert json.loads(await stream.aread())["error"]["code"] == "STORE_UNAVAILABLE"
        async with served.client() as probe:
            not_ready = await probe.get("/readyz")
        assert not_ready.status_code == 503
        assert not_ready.json()["error"]["details"]["redis"]["ok"] is False

        own_redis.start()  # from its AOF, on the same port
        await until(lambda: ready(served))
        # The pool's dead connections are replaced, not handed to requests: every call works at once.
        answers = await asyncio.gather(*(agent.get(f"/v1/prompts/{pid}") for _ in range(12)))
        assert {response.status_code for response in answers} == {200}
        accept = {"action": "accept", "from": STARTER}
        answer = await operator.post(f"/v1/agents/ops/inputs/{pid}", json=accept)
        assert answer.status_code == 200, answer.text
        await until(lambda: served.runtime.health.available)

    assert len(logged(caplog, "store.unavailable")) == 1
    assert len(logged(caplog, "store.recovered")) == 1
    assert not logged(caplog, "api.unexpected_error")
    assert not [record for record in caplog.records if record.exc_info], "a traceback was logged"


async def test_webhooks_resume_after_redis_returns_empty(
    own_redis: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    receiver = Receiver()
    async with (
        receiving(receiver) as url,
        gateway_with_webhooks(own_redis.url, url) as served,
        served.client(AGENT_AUTH) as agent,
    ):
        first = await raise_prompt(agent, (await start_run(agent))["run_id"])
        await until(lambda: f"{first['prompt_id']}.requested" in receiver.ids())
        own_redis.kill()
        own_redis.restart_empty()  # the consumer group is gone with everything else
        await until(lambda: ready(served))
        second = await raise_prompt(agent, (await start_run(agent))["run_id"])
        await until(lambda: f"{second['prompt_id']}.requested" in receiver.ids())
    assert logged(caplog, "webhooks.group_recreated")


async def test_a_lease_still_held_in_its_holders_name_is_taken_back_at_once(redis_client: Any) -> None:
    """After Redis restarts from its AOF the lease key can outlive the hold its holder dropped."""
    lease = Lease(redis_client, "telegram:abc123", holder="host-a:1:cafe")
    await redis_client.set(keys.lease(lease.name), "host-a:1:cafe", px=15_000)
    assert await lease.try_acquire()
    other = Lease(redis_client, "telegram:abc123", holder="host-b:2:beef")
    assert not await other.try_acquire()


async def test_a_drain_that_dies_with_the_store_is_observed_and_logged_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    loop = asyncio.get_running_loop()
    unobserved: list[dict[str, Any]] = []
    loop.set_exception_handler(lambda _loop, context: unobserved.append(context))
    connection = connect(f"redis://127.0.0.1:{free_port()}/0")  # nothing listens there
    try:
        outbox = Outbox(Store(connection.client), Channels([]))
        threads = ["web:room1", "web:room2", "web:room3"]
        for thread in threads:
            outbox.kick(thread)
        await until(lambda: not any(outbox.busy(thread) for thread in threads))
        await asyncio.sleep(0)  # the done-callbacks run
        gc.collect()
    finally:
        loop.set_exception_handler(None)
        await outbox.health.close()
        await connection.client.aclose()
    assert unobserved == []
    assert len(logged(caplog, "store.unavailable")) == 1


async def test_a_failure_just_after_recovery_that_a_ping_disproves_starts_no_new_outage(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A call begun while Redis was away may fail after it came back: that is not a second outage."""
    caplog.set_level(logging.INFO)
    connection = connect(None)  # the embedded store: PING answers
    health = StoreHealth(connection.client, probe_every_s=0.01)
    try:
        health.failed(ConnectionError("Connection refused."), "api")
        await until(lambda: health.available)
        health.failed(ConnectionError("Connection refused."), "outbox")
        await until(lambda: not health.probing)
    finally:
        await health.close()
    assert health.available
    assert len(logged(caplog, "store.unavailable")) == 1
    assert len(logged(caplog, "store.recovered")) == 1


class FlakyPing:
    """A Redis client whose PING answers or fails as the test says."""

    def __init__(self) -> None:
        self.up = False

    async def ping(self) -> bool:
        if not self.up:
            raise ConnectionError("Connection refused.")
        return True


async def test_an_outage_that_begins_while_the_probe_still_runs_is_logged_too(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Readiness can see Redis back before the probe does; if Redis goes away again before the probe's
    next PING, that is a second outage, logged, and its recovery is logged as well."""
    caplog.set_level(logging.INFO)
    redis = FlakyPing()
    health = StoreHealth(redis, probe_every_s=0.05)
    try:
        health.failed(ConnectionError("Connection refused."), "api")
        redis.up = True
        health.answered()  # readiness saw it first; the probe is still sleeping
        redis.up = False
        health.failed(ConnectionError("Connection refused."), "api")  # a probe runs: not logged here
        await until(lambda: not health.available)
        redis.up = True
        await until(lambda: health.available and not health.probing)
    finally:
        await health.close()
    assert len(logged(caplog, "store.unavailable")) == 2
    assert len(logged(caplog, "store.recovered")) == 2


async def test_a_call_begun_after_a_recovery_that_fails_starts_a_new_outage_however_soon(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Redis killed again moments after it came back: a call that began after the recovery and failed is a
    new outage, logged at once, even if Redis is back before any PING could tell (a quick restart)."""
    caplog.set_level(logging.INFO)
    redis = FlakyPing()
    health = StoreHealth(redis, probe_every_s=0.01, late_failure_s=60)
    try:
        health.failed(ConnectionError("Connection refused."), "api")
        redis.up = True
        await until(lambda: health.available and not health.probing)
        began_before = health.clock() - 1  # a call begun while Redis was away: late, disproved by a PING
        health.failed(ConnectionError("Connection reset by peer"), "api", began_before)
        await until(lambda: not health.probing)
        assert len(logged(caplog, "store.unavailable")) == 1
        health.failed(ConnectionError("Connection refused."), "api", health.clock())
        assert not health.available  # logged at once, not left to a PING that the quick restart answers
        await until(lambda: health.available and not health.probing)
    finally:
        await health.close()
    assert len(logged(caplog, "store.unavailable")) == 2
    assert len(logged(caplog, "store.recovered")) == 2


async def test_pooled_connections_a_restart_closed_are_replaced_before_a_command_uses_them(
    own_redis: RedisServer,
) -> None:
    """Every idle connection in the pool saw Redis close it; each is reconnected when taken, so no
    command after the restart fails (a failure there would start a new outage: 503s after recovery)."""
    connection = connect(own_redis.url)
    pool = connection.client.connection_pool
    try:
        await asyncio.gather(*(pool.execute([("SET", f"k{n}", n)]) for n in range(12)))
        assert len(pool._available_connections) >= 6
        own_redis.kill()
        own_redis.start()
        await asyncio.sleep(0.3)  # the loop sees each socket's end
        for _ in range(3):
            replies = await asyncio.gather(*(pool.execute([("GET", f"k{n}")]) for n in range(12)))
            assert replies == [[str(n)] for n in range(12)]
    finally:
        await connection.client.aclose()
