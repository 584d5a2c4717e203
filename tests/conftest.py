"""Shared fixtures: a private redis-server per session, and stores on it and on the embedded store."""

from __future__ import annotations

import logging
import shutil
import sys
import tempfile
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from gateway.base.logs import LOGGER, SERVER_LOGGERS
from gateway.decision.service import Gateway
from gateway.delivery.channel import Channels
from gateway.store import Store, connect
from tests.support.memory_channel import MemoryChannel
from tests.support.redis_cluster import RedisCluster, redis_cli_binary
from tests.support.redis_server import RedisServer, redis_server_binary, require_real_redis


@pytest.fixture(autouse=True)
def restore_logging() -> Iterator[None]:
    """configure() (the CLI, the log tests) rewires process-wide loggers and hooks: put them back."""
    names = ("", LOGGER.name, *SERVER_LOGGERS)
    saved = {
        n: (logging.getLogger(n).handlers[:], logging.getLogger(n).level, logging.getLogger(n).propagate)
        for n in names
    }
    hooks = (sys.excepthook, threading.excepthook)
    # A configure() left on would make a test's own configure() keep warnings away from the logs.
    logging.captureWarnings(False)
    yield
    for name, (handlers, level, propagate) in saved.items():
        logger = logging.getLogger(name)
        logger.handlers[:], logger.level, logger.propagate = handlers, level, propagate
    sys.excepthook, threading.excepthook = hooks
    logging.captureWarnings(False)


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    """A redis-server of this test session's own (temp dir, AOF on). Skipped only outside CI."""
    if redis_server_binary() is None:
        if require_real_redis():
            pytest.fail("CI=true and redis-server is missing: install the redis-server package")
        pytest.skip("redis-server is not installed; install it to run the real-Redis tests")
    directory = Path(tempfile.mkdtemp(prefix="threadgate-redis-"))
    server = RedisServer(directory)
    server.start()
    yield server
    server.stop()
    shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture(scope="session")
def redis_cluster() -> Iterator[RedisCluster]:
    """A 3-master Redis Cluster of this session's own, on loopback. Skipped only outside CI."""
    if redis_server_binary() is None or redis_cli_binary() is None:
        if require_real_redis():
            pytest.fail("CI=true and redis-server or redis-cli is missing: install the redis-server package")
        pytest.skip("redis-server and redis-cli are not installed; install them to run the cluster tests")
    directory = Path(tempfile.mkdtemp(prefix="threadgate-cluster-"))
    cluster = RedisCluster(directory)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()
        shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture(params=["embedded", "redis", "cluster"])
def redis_url(request: pytest.FixtureRequest) -> str | None:
    """Every store and service test runs three times: embedded store, a redis-server, a Redis Cluster."""
    if request.param == "embedded":
        return None
    if request.param == "cluster":
        cluster: RedisCluster = request.getfixturevalue("redis_cluster")
        cluster.flush()
        return cluster.url
    server: RedisServer = request.getfixturevalue("redis_server")
    server.flush()
    return server.url


@pytest.fixture
async def redis_client(redis_url: str | None) -> AsyncIterator[Any]:
    connection = connect(redis_url)
    yield connection.client
    await connection.client.aclose()


@pytest.fixture
async def store(redis_client: Any) -> Store:
    store = Store(redis_client)
    await store.load()
    return store


@pytest.fixture
def channel() -> MemoryChannel:
    return MemoryChannel("slack")


@pytest.fixture
async def gateway(store: Store, channel: MemoryChannel) -> AsyncIterator[Gateway]:
    service = Gateway(store, Channels([channel]), sweep_interval=0.2)
    await service.start()
    yield service
    await service.stop()
