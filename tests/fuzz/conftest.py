"""One gateway with every ingress on (API, Slack events, Telegram webhook, web chat, inbox), served by
uvicorn on its own event loop in a thread, so synchronous property tests can send it anything."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
import uvicorn

from gateway.api import create_app
from gateway.api.deps import ApiOptions
from gateway.base.settings import Settings
from gateway.process.runtime import Runtime
from tests.fakes.slack import FakeSlack
from tests.fakes.telegram import FakeTelegram
from tests.support.platforms import build_channel
from tests.support.redis_server import RedisServer, free_port

AGENT_TOKEN = "fuzz-agent-token-5b2d"
OPERATOR_TOKEN = "fuzz-operator-token-c41e"
TELEGRAM_TOKEN = "123456:fuzz-telegram-token-abcdefghijklmnopqrstu"
TELEGRAM_SECRET = "fuzz-Telegram_secret-1"
WEB_TOKENS = "alice:web-alice-token,web-room-password"
OPTIONS = ApiOptions(max_wait_s=0.05, sse_heartbeat_s=0.1, respond_limit=100_000)


@dataclass
class IngressGateway:
    """The served gateway, its platform fakes, and a run with a pending prompt to aim at."""

    redis_url: str
    base_url: str = ""
    slack: FakeSlack = field(default_factory=FakeSlack)
    seeded: dict[str, str] = field(default_factory=dict)
    _loop: asyncio.AbstractEventLoop | None = None
    _server: uvicorn.Server | None = None
    _thread: threading.Thread | None = None

    def start(self) -> None:
        ready = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            try:
                asyncio.run(self._serve(ready))
            except BaseException as exc:  # surfaced to the fixture below
                failure.append(exc)
                ready.set()

        self._thread = threading.Thread(target=run, name="fuzz-gateway", daemon=True)
        self._thread.start()
        if not ready.wait(30) or failure:
            raise RuntimeError(f"the fuzz gateway did not start: {failure!r}")

    async def _serve(self, ready: threading.Event) -> None:
        telegram = FakeTelegram(TELEGRAM_TOKEN)
        await self.slack.start()
        await telegram.start()
        port = free_port()
        settings = Settings(  # type: ignore[call-arg]
            _env_file=None,
            redis_url=self.redis_url,
            threadgate_api_tokens=f"robot:agent:{AGENT_TOKEN}:*,desk:operator:{OPERATOR_TOKEN}",
            slack_bot_token=self.slack.bot_token,
            slack_signing_secret=self.slack.signing_secret,
            slack_api_url=self.slack.api_url,
            telegram_bot_token=TELEGRAM_TOKEN,
            telegram_base_url=telegram.base_url,
            telegram_webhook_url=f"http://127.0.0.1:{port}/telegram/webhook",
            telegram_webhook_secret=TELEGRAM_SECRET,
            threadgate_web_chat="on",
            threadgate_web_token=WEB_TOKENS,
        )
        channels = [build_channel(name, settings) for name in ("slack", "telegram", "web")]
        runtime = Runtime.build(settings, channels=list(channels))
        config = uvicorn.Config(
            create_app(runtime, OPTIONS), host="127.0.0.1", port=port, log_level="warning"
        )
        self._server = uvicorn.Server(config)
        self._server.install_signal_handlers = lambda: None  # type: ignore[method-assign]
        self._loop = asyncio.get_running_loop()
        serving = asyncio.create_task(self._server.serve())
        while not self._server.started:
            if serving.done():
                serving.result()
            await asyncio.sleep(0.01)
        self.base_url = f"http://127.0.0.1:{port}"
        ready.set()
        try:
            await serving
        finally:
            await telegram.stop()
            await self.slack.stop()

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(15)

    def seed(self) -> None:
        """A run in a web room with a pending question, so generated requests sometimes hit real objects."""
        with httpx.Client(base_url=self.base_url, headers=auth(AGENT_TOKEN), timeout=10) as client:
            run: dict[str, Any] = client.post(
                "/v1/runs", json={"thread_id": "web:fuzz", "agent": "ops", "started_by": "web:alice"}
            ).json()
            prompt: dict[str, Any] = client.post(
                f"/v1/runs/{run['run_id']}/prompts",
                json={"kind": "ask_user_question", "questions": [{"question": "Where?", "options": [
                    {"label": "staging"}, {"label": "production"}]}]},
            ).json()  # fmt: skip
        self.seeded = {"run_id": run["run_id"], "prompt_id": prompt["prompt_id"], "thread_id": "web:fuzz"}


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture(scope="module")
def ingress(redis_server: RedisServer) -> Iterator[IngressGateway]:
    redis_server.flush()
    gateway = IngressGateway(redis_server.url)
    gateway.start()
    try:
        gateway.seed()
        yield gateway
    finally:
        gateway.stop()
