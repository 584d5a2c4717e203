"""CLI fixtures: a demo gateway to talk to, and a way to run ``threadgate`` with a given token."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from gateway.cli import main
from gateway.demo import Demo, running_demo


@dataclass
class Ran:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)


Cli = Callable[..., Awaitable[Ran]]
SETTING_PREFIXES = ("THREADGATE_", "SLACK_", "TELEGRAM_", "DISCORD_", "REDIS_URL")


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> pytest.MonkeyPatch:
    """No settings but the test's own: none from the environment, no .env file."""
    for key in list(os.environ):
        if key.startswith(SETTING_PREFIXES):
            monkeypatch.delenv(key)
    monkeypatch.chdir(tmp_path)
    return monkeypatch


@pytest.fixture
async def demo() -> AsyncIterator[Demo]:
    async with running_demo("127.0.0.1", 0, "cli", heartbeat_s=0.5, poll_s=2.0, grace_s=0.1) as running:
        yield running


@pytest.fixture
def cli(demo: Demo, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Cli:
    """``await cli("prompts", "list", token="operator")``: the command's exit code and output."""

    async def run(*argv: str, token: str = "operator") -> Ran:
        monkeypatch.setenv("THREADGATE_URL", demo.base_url)
        monkeypatch.setenv(
            "THREADGATE_TOKEN", demo.operator_token if token == "operator" else demo.agent_token
        )
        capsys.readouterr()
        code = await asyncio.to_thread(main, list(argv))
        captured = capsys.readouterr()
        return Ran(code, captured.out, captured.err)

    return run


@pytest.fixture
async def agent(demo: Demo) -> AsyncIterator[httpx.AsyncClient]:
    headers = {"Authorization": f"Bearer {demo.agent_token}"}
    async with httpx.AsyncClient(base_url=demo.base_url, headers=headers, timeout=10) as client:
        yield client


async def raise_in(
    agent: httpx.AsyncClient, room: str, body: dict[str, Any], agent_name: str = "ops"
) -> dict[str, Any]:
    """Start a run in ``web:<room>`` (started by web:alice) and raise ``body`` in it."""
    run = await agent.post(
        "/v1/runs", json={"thread_id": f"web:{room}", "agent": agent_name, "started_by": "web:alice"}
    )
    assert run.status_code == 201, run.text
    prompt = await agent.post(f"/v1/runs/{run.json()['run_id']}/prompts", json=body)
    assert prompt.status_code == 201, prompt.text
    result: dict[str, Any] = prompt.json()
    return result
