"""A real ``threadgate serve`` (web chat on, the session's redis-server) and helpers to play both sides.

The agent side is the integration under test (a hook process, the MCP server, the SDK callback); the
person's side answers from the web chat (``POST /chat/{room}/messages``) as someone typing would.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.redis_server import RedisServer
from tests.support.serve import ServeProcess, serve_env, serving

AGENT_TOKEN = "integrations-agent-token-5d1e"
OPERATOR_TOKEN = "integrations-operator-token-9a7c"
PERSON = "alice"
SESSION_CHANNEL = "web:sessions"
FIXTURES = Path(__file__).parent / "fixtures"
THREADGATE = str(Path(sys.executable).with_name("threadgate"))


def fixture(name: str, **overrides: Any) -> dict[str, Any]:
    """A hook payload written from the tool's documented schema, with some fields replaced."""
    payload: dict[str, Any] = json.loads((FIXTURES / name).read_text())
    payload.update(overrides)
    return payload


@dataclass
class Gateway:
    """A running gateway process: where it listens and how to act as the agent or the person."""

    url: str
    process: subprocess.Popen[bytes]

    def env(self, agent: str, **extra: str) -> dict[str, str]:
        """The environment an integration runs with: this gateway, a session channel, who may answer."""
        env = {key: value for key, value in os.environ.items() if not key.startswith("THREADGATE_")}
        env.update(
            THREADGATE_URL=self.url,
            THREADGATE_TOKEN=AGENT_TOKEN,
            THREADGATE_SESSION_CHANNEL=SESSION_CHANNEL,
            THREADGATE_AGENT=agent,
            THREADGATE_STARTED_BY=f"web:{PERSON}",
        )
        env.update(extra)
        return env

    def agent_client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(
            base_url=self.url, headers={"Authorization": f"Bearer {AGENT_TOKEN}"}, timeout=10
        )

    async def pending_prompt(self, agent: str, timeout: float = 10.0) -> dict[str, Any]:
        """The first pending prompt of ``agent`` once the integration has raised it."""
        deadline = time.monotonic() + timeout
        async with self.agent_client() as client:
            while time.monotonic() < deadline:
                response = await client.get("/v1/prompts", params={"state": "pending", "agent": agent})
                items = response.json()["items"]
                if items:
                    prompt: dict[str, Any] = items[0]
                    return prompt
                await asyncio.sleep(0.05)
        raise AssertionError(f"no prompt of {agent} appeared within {timeout} s")

    async def pending(self, agent: str) -> list[dict[str, Any]]:
        """The prompts of ``agent`` pending now (none: nobody was asked)."""
        async with self.agent_client() as client:
            response = await client.get("/v1/prompts", params={"state": "pending", "agent": agent})
            items: list[dict[str, Any]] = response.json()["items"]
            return items

    async def set_approval_policy(self, agent: str, approval: dict[str, Any]) -> None:
        """The operator sets ``agent``'s approval policy (``PUT /v1/agents/{agent}``)."""
        headers = {"Authorization": f"Bearer {OPERATOR_TOKEN}"}
        async with httpx.AsyncClient(base_url=self.url, headers=headers, timeout=10) as client:
            response = await client.put(f"/v1/agents/{agent}", json={"approval": approval})
        assert response.status_code == 200, response.text

    async def prompt(self, prompt_id: str) -> dict[str, Any]:
        async with self.agent_client() as client:
            data: dict[str, Any] = (await client.get(f"/v1/prompts/{prompt_id}")).json()
            return data

    async def thread_items(self, thread_id: str) -> list[dict[str, Any]]:
        async with self.agent_client() as client:
            items: list[dict[str, Any]] = (await client.get(f"/v1/threads/{thread_id}/items")).json()["items"]
            return items

    async def say(
        self, thread_id: str, text: str = "", *, answers: list[dict[str, Any]] | None = None
    ) -> str:
        """The person types ``text`` (or sends structured ``answers``) in the web chat of ``thread_id``."""
        room = thread_id.removeprefix("web:")
        body: dict[str, Any] = {"name": PERSON, "text": text}
        if answers is not None:
            body["answers"] = answers
        async with httpx.AsyncClient(base_url=self.url, timeout=10) as client:
            response = await client.post(f"/chat/{room}/messages", json=body)
        assert response.status_code == 202, response.text
        outcome: str = response.json()["outcome"]
        return outcome


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


@contextlib.contextmanager
def running_gateway(redis_server: RedisServer, workdir: Path) -> Iterator[Gateway]:
    """``threadgate serve`` with the web chat on, on the test session's redis-server."""
    env = serve_env(
        REDIS_URL=redis_server.url,
        THREADGATE_WEB_CHAT="open",
        THREADGATE_API_TOKENS=f"robot:agent:{AGENT_TOKEN}:*,desk:operator:{OPERATOR_TOKEN}",
        THREADGATE_LOG_LEVEL="WARNING",
        # Every test of the session answers as the same person from one address: past the default caps.
        THREADGATE_WEB_POSTS_PER_NAME="100000",
        THREADGATE_WEB_POSTS_PER_CLIENT="100000",
        THREADGATE_WEB_NEW_ROOMS_PER_CLIENT="100000",
    )
    server = ServeProcess(env, workdir, program=(THREADGATE,))
    with serving(server):
        yield Gateway(server.url, server.running)


@pytest.fixture(scope="module")
def gateway(redis_server: RedisServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    with running_gateway(redis_server, tmp_path_factory.mktemp("gateway")) as served:
        yield served
