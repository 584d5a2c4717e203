"""A gateway with the Teams channel, served on a loopback port against the fake Bot Framework."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx

from channels.teams.channel import TeamsChannel
from channels.teams.settings import TeamsSettings
from channels.teams.spec import build
from gateway.api import create_app
from gateway.base.models import AgentDefinition, HumanInput, Prompt, PromptRequest, RunRequest
from gateway.base.settings import Settings
from gateway.process.runtime import Runtime
from gateway.store import keys
from tests.channels.conftest import serve_app
from tests.fakes.teams import APP_ID, APP_PASSWORD, FakeTeams, Posted, identity
from tests.support.feeds import feed_entries

CHANNEL = "19:4d3a1b9c0e2f4a6b8c1d3e5f7a9b0c2d@thread.tacv2"
ROOT = "1712345678901"
CHANNEL_THREAD = f"{CHANNEL};messageid={ROOT}"
PERSONAL = "a:1Xq9Zr7mK2pL8vN4tB6yC0dE3fG5hJ1kM9nP7qR2sT4uV6wX8yZ0aB2cD4eF6gH8iJ0kL2mN4oP6qR8sT0uV2wX"
GROUP = "19:8f7e6d5c4b3a29180f1e2d3c4b5a6978@thread.v2"
IN_CHANNEL = {"id": CHANNEL_THREAD, "conversationType": "channel", "isGroup": True, "name": "ops"}
IN_PERSONAL = {"id": PERSONAL, "conversationType": "personal"}
IN_GROUP = {"id": GROUP, "conversationType": "groupChat", "isGroup": True}
ALICE, BOB, EVE = "alice", "bob", "eve"


def teams_settings(fake: FakeTeams, tenant_id: str | None = None) -> TeamsSettings:
    return TeamsSettings(
        _env_file=None,
        teams_app_id=APP_ID,
        teams_tenant_id=tenant_id,
        teams_app_password=APP_PASSWORD,
        teams_openid_metadata_url=fake.metadata_url,
        teams_token_url=fake.token_url,
        teams_service_url=fake.service_url,
    )


@dataclass
class TeamsGateway:
    """One gateway process: its runtime, its Teams channel and where it listens."""

    fake: FakeTeams
    runtime: Runtime
    channel: TeamsChannel
    base_url: str

    @property
    def messages_url(self) -> str:
        return f"{self.base_url}/teams/messages"

    async def deliver(self, activity: dict[str, Any] | bytes, **kwargs: Any) -> httpx.Response:
        """The Bot Connector delivers ``activity`` (signed unless ``kwargs`` say otherwise)."""
        return await self.fake.deliver(self.messages_url, activity, **kwargs)

    async def say(self, conversation: dict[str, Any], text: str, who: str = ALICE) -> httpx.Response:
        mention = conversation.get("conversationType") == "channel"
        return await self.deliver(self.fake.message(conversation, who, text, mention=mention))

    async def press(
        self, posted: Posted, title: str, who: str = ALICE, inputs: dict[str, str] | None = None
    ) -> dict[str, Any]:
        """Press ``title`` on a card; the invoke response's body."""
        response = await self.deliver(self.fake.press(posted, title, who, inputs))
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        return body

    async def ask(self, thread_id: str, request: PromptRequest, started_by: str = identity(ALICE)) -> Prompt:
        """An agent run in the thread raises ``request``."""
        run = await self.runtime.gateway.create_run(
            RunRequest(thread_id=thread_id, agent="ops", started_by=started_by)
        )
        return await self.runtime.gateway.raise_prompt(run.run_id, request)

    def card_of(self, prompt: Prompt) -> Posted:
        """The posted card carrying ``prompt``'s controls."""
        for posted in self.fake.posts:
            for action in posted.actions():
                if str((action.get("data") or {}).get("tg", "")).startswith(prompt.prompt_id):
                    return posted
        raise AssertionError(f"no card for {prompt.prompt_id}")

    async def approvers(self, *people: str) -> None:
        await self.runtime.store.put_agent(
            AgentDefinition(name="ops", human_input=HumanInput(approvers=list(people)))
        )

    async def settled(self) -> None:
        """Wait until every audit item and agent message owed has been posted."""
        await self.runtime.gateway.outbox.idle()

    async def agent_feed(self) -> list[dict[str, Any]]:
        await self.settled()
        return await feed_entries(self.runtime.store.redis, keys.MESSAGES)

    async def prompt(self, prompt_id: str) -> Prompt:
        return await self.runtime.gateway.get_prompt(prompt_id)


@asynccontextmanager
async def fake_bot_framework() -> AsyncIterator[FakeTeams]:
    """The fake Bot Framework on a loopback port, for the duration of the block."""
    fake = FakeTeams()
    await fake.start()
    try:
        yield fake
    finally:
        await fake.stop()


@asynccontextmanager
async def teams_gateway(
    fake: FakeTeams, redis_url: str | None, sweep_interval: float | None = None, tenant_id: str | None = None
) -> AsyncIterator[TeamsGateway]:
    """Build the Teams channel from its settings, as ``threadgate serve`` does, and serve the gateway."""
    channel = build(teams_settings(fake, tenant_id))
    runtime = Runtime.build(Settings(_env_file=None, redis_url=redis_url), channels=[channel])
    if sweep_interval is not None:
        runtime.gateway.sweep_interval = sweep_interval
    async with serve_app(create_app(runtime)) as base_url:
        yield TeamsGateway(fake, runtime, channel, base_url)
