"""A gateway with the Slack channel, served on a loopback port against the fake Slack."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from channels.slack import SlackChannel
from gateway.api import create_app
from gateway.base.backoff import Retry
from gateway.base.models import (
    AgentDefinition,
    HumanInput,
    Option,
    Prompt,
    PromptKind,
    PromptRequest,
    Question,
    RunRequest,
)
from gateway.base.settings import Settings
from gateway.process.runtime import Runtime
from gateway.store import keys
from tests.channels.conftest import serve_app
from tests.fakes.slack import FakeSlack, message_event
from tests.support.feeds import feed_entries
from tests.support.platforms import build_channel

CHANNEL = "C0TEAM"
ALICE, BOB, EVE = "U0ALICE", "U0BOB", "U0EVE"
TARGET = PromptRequest(
    kind=PromptKind.ASK_USER_QUESTION,
    questions=[
        Question(
            question="What's the deployment target?",
            options=[
                Option(label="staging", description="push to staging.example.com"),
                Option(label="production", description="push to www.example.com"),
            ],
        )
    ],
)
SECTIONS = PromptRequest(
    kind=PromptKind.ASK_USER_QUESTION,
    questions=[
        Question(
            question="Which sections?",
            multi_select=True,
            options=[Option(label="KPI cards"), Option(label="Chart"), Option(label="Table")],
        )
    ],
)


@dataclass
class SlackGateway:
    """One gateway process: its runtime, its Slack channel and where it listens."""

    fake: FakeSlack
    runtime: Runtime
    channel: SlackChannel
    base_url: str

    @property
    def events_url(self) -> str:
        return f"{self.base_url}/slack/events"

    async def deliver(self, event: dict[str, Any], *, event_id: str | None = None, **kwargs: Any) -> int:
        """Slack delivers ``event`` over the Events API; returns the gateway's HTTP status."""
        return await self.fake.deliver(self.events_url, self.fake.callback(event, event_id), **kwargs)

    async def agent_feed(self) -> list[dict[str, Any]]:
        """The messages queued for agents (``GET /v1/messages``), oldest first, once delivered there."""
        await self.settled()
        return await feed_entries(self.runtime.store.redis, keys.MESSAGES)

    async def ask(self, thread_id: str, request: PromptRequest, started_by: str = f"slack:{ALICE}") -> Prompt:
        """An agent run in the thread raises ``request``."""
        run = await self.runtime.gateway.create_run(
            RunRequest(thread_id=thread_id, agent="ops", started_by=started_by)
        )
        return await self.runtime.gateway.raise_prompt(run.run_id, request)

    async def open_thread(self, text: str = "deploy the new build", user: str = ALICE) -> str:
        """A person mentions the app at the top level of a channel: the thread starts on that message."""
        ts = self.fake.next_ts()
        mention = message_event(
            CHANNEL, user, f"<@{self.fake.bot_user_id}> {text}", ts=ts, kind="app_mention"
        )
        assert await self.deliver(mention) == 200
        return ts

    def reply(self, thread_ts: str, text: str, user: str = ALICE) -> dict[str, Any]:
        """A person's reply in the thread, as a ``message`` event."""
        return message_event(CHANNEL, user, text, ts=self.fake.next_ts(), thread_ts=thread_ts)

    async def approvers(self, *identities: str) -> None:
        await self.runtime.store.put_agent(
            AgentDefinition(name="ops", human_input=HumanInput(approvers=list(identities)))
        )

    async def settled(self) -> None:
        """Wait until every audit item and agent message owed has been posted."""
        await self.runtime.gateway.outbox.idle()


@asynccontextmanager
async def slack_gateway(
    fake: FakeSlack,
    redis_url: str | None,
    *,
    http: bool = True,
    socket_mode: bool = False,
    lease_ttl_ms: int = 2_000,
    max_inline_wait: float | None = None,
    identity_retry: Retry | None = None,
    identity_sleep: Callable[[float], Awaitable[None]] | None = None,
    sweep_interval: float | None = None,
) -> AsyncIterator[SlackGateway]:
    """Build the Slack channel from settings, as ``threadgate serve`` does, and serve the gateway."""
    settings = Settings(
        _env_file=None,
        redis_url=redis_url,
        slack_bot_token=fake.bot_token,
        slack_signing_secret=fake.signing_secret if http else None,
        slack_app_token=fake.app_token if socket_mode else None,
        slack_api_url=fake.api_url,
        threadgate_lease_ttl_ms=lease_ttl_ms,
    )
    channel = build_channel("slack", settings)
    if max_inline_wait is not None:
        channel.max_inline_wait = channel.identity.max_wait = max_inline_wait
    if identity_retry is not None:
        channel.identity.retry = identity_retry
    if identity_sleep is not None:
        channel.identity.sleep = identity_sleep
    runtime = Runtime.build(settings, channels=[channel])
    if sweep_interval is not None:
        runtime.gateway.sweep_interval = sweep_interval
    async with serve_app(create_app(runtime)) as base_url:
        yield SlackGateway(fake, runtime, channel, base_url)
