"""Web fixtures: the demo gateway on a free port, and Debian's Chromium driven by Playwright."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from channels.web import WebChannel, WebLimits
from channels.web.settings import WebSettings
from gateway.api import create_app
from gateway.api.client_address import proxy_options
from gateway.api.deps import ApiOptions
from gateway.base.settings import Settings
from gateway.demo import Demo, running_demo
from gateway.process.preflight import bind
from gateway.process.runtime import Runtime
from tests.fakes.oidc import FakeOidcProvider
from tests.support.api_calls import raise_prompt as raise_prompt

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
# Set to a folder (docs/screenshots) to refresh the README's screenshots while the browser tests run.
SCREENSHOTS = os.environ.get("THREADGATE_SCREENSHOTS")


@pytest.fixture
async def demo() -> AsyncIterator[Demo]:
    """``threadgate demo`` in this process, with short heartbeats and polls so shutdown is quick."""
    async with running_demo("127.0.0.1", 0, "lobby", heartbeat_s=0.5, poll_s=2.0, grace_s=0.1) as running:
        yield running


@pytest.fixture
def chromium() -> Path:
    """Debian's Chromium, or a skip; under CI=true its absence fails the test instead."""
    if not CHROMIUM.exists():
        if os.environ.get("CI") == "true":
            pytest.fail("CI=true and /usr/bin/chromium is missing: install the chromium Debian package")
        pytest.skip("/usr/bin/chromium is missing: apt-get install chromium")
    return CHROMIUM


@pytest.fixture
async def browser(chromium: Path) -> AsyncIterator[Any]:
    """Headless Chromium driven by Playwright; each launch gets a fresh temporary profile."""
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(
            executable_path=str(chromium), headless=True, args=CHROMIUM_ARGS
        )
        try:
            yield launched
        finally:
            await launched.close()


def screenshot_path(name: str, tmp_path: Path) -> Path:
    folder = Path(SCREENSHOTS) if SCREENSHOTS else tmp_path
    folder.mkdir(parents=True, exist_ok=True)
    return folder / name


AGENT_TOKEN = "web-agent-token-3e1f"
OPERATOR_TOKEN = "web-operator-token-9a7c"
AGENT_AUTH = {"Authorization": f"Bearer {AGENT_TOKEN}"}
OPERATOR_AUTH = {"Authorization": f"Bearer {OPERATOR_TOKEN}"}


@dataclass
class WebGateway:
    base_url: str
    runtime: Runtime
    channel: WebChannel

    def client(self, headers: dict[str, str] | None = None) -> httpx.AsyncClient:
        return httpx.AsyncClient(base_url=self.base_url, headers=headers or {}, timeout=10)


@asynccontextmanager
async def web_gateway(
    redis_url: str | None = None,
    tokens: str | None = None,
    limits: WebLimits | None = None,
    options: ApiOptions | None = None,
    api_tokens: str = "",
    sweep_interval: float | None = None,
    **extra: Any,
) -> AsyncIterator[WebGateway]:
    """The gateway with only the web channel (sign-in ``tokens``, or open), served on a free port, with
    the server options ``threadgate serve`` gives it; ``extra`` settings on top (the web chat's own among
    them bound its streams, unless ``limits`` is given), ``api_tokens`` besides the agent token of every
    agent and the operator token; ``sweep_interval``: how often its sweepers run."""
    settings = Settings(  # type: ignore[call-arg]
        _env_file=None,
        redis_url=redis_url,
        threadgate_api_tokens=",".join(
            filter(None, [f"robot:agent:{AGENT_TOKEN}:*,desk:operator:{OPERATOR_TOKEN}", api_tokens])
        ),
        threadgate_web_chat="open",
        **extra,
    )
    if limits is None:  # the default limits, with the stream caps the settings give
        own = {name: value for name, value in extra.items() if name in WebSettings.model_fields}
        caps = WebLimits.from_settings(WebSettings(_env_file=None, **own))  # type: ignore[call-arg]
        limits = replace(WebLimits(), streams_per_client=caps.streams_per_client, streams=caps.streams)
    channel = WebChannel(tokens, heartbeat_s=0.2, limits=limits)
    runtime = Runtime.build(settings, channels=[channel])
    if sweep_interval is not None:
        runtime.gateway.sweep_interval = sweep_interval
    app = create_app(runtime, options or ApiOptions(max_wait_s=5, sse_heartbeat_s=0.2))
    sock = bind("127.0.0.1", 0)
    server = uvicorn.Server(
        uvicorn.Config(
            app, lifespan="on", log_level="warning", timeout_graceful_shutdown=1, **proxy_options(settings)
        )
    )
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        while not server.started:
            if task.done():
                task.result()
            await asyncio.sleep(0.01)
        yield WebGateway(f"http://127.0.0.1:{sock.getsockname()[1]}", runtime, channel)
    finally:
        server.should_exit = True
        await task
        sock.close()


async def start_run(agent: httpx.AsyncClient, room: str, started_by: str = "web:alice") -> dict[str, Any]:
    response = await agent.post(
        "/v1/runs", json={"thread_id": f"web:{room}", "agent": "ops", "started_by": started_by}
    )
    assert response.status_code == 201, response.text
    run: dict[str, Any] = response.json()
    return run


CAROL = {"sub": "carol", "email": "carol@example.com", "email_verified": True, "name": "Carol C."}


@pytest.fixture
def idp() -> Iterator[FakeOidcProvider]:
    """An identity provider that signs Carol in (she is in the ``sre`` group by its groups claim)."""
    provider = FakeOidcProvider(user={**CAROL, "groups": ["sre"]}).start()
    yield provider
    provider.stop()
