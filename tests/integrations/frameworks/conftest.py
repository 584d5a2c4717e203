"""One gateway for every framework test (a package-scoped ``threadgate serve``), and the environment the
decorator, ``ask_human`` and the adapters read to find it."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from tests.integrations.conftest import Gateway, running_gateway, unique
from tests.support.redis_server import RedisServer


@pytest.fixture(scope="package")
def gateway(redis_server: RedisServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    with running_gateway(redis_server, tmp_path_factory.mktemp("gateway")) as served:
        yield served


@pytest.fixture
def agent(gateway: Gateway, monkeypatch: pytest.MonkeyPatch) -> str:
    """A fresh agent name, with THREADGATE_* set as an integration runs: this gateway, a session channel,
    alice may answer."""
    name = unique("py")
    for key in os.environ:
        if key.startswith("THREADGATE_"):
            monkeypatch.delenv(key)
    for key, value in gateway.env(name).items():
        if key.startswith("THREADGATE_"):
            monkeypatch.setenv(key, value)
    return name
