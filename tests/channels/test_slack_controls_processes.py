"""Two ``threadgate serve`` processes on one Redis, Slack over HTTP: presses racing on both answer once."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import redis.asyncio

from channels.slack import SlackChannel
from gateway.base.models import AgentDefinition, HumanInput, PromptRequest, PromptState, RunRequest
from gateway.decision.service import Gateway
from gateway.delivery.channel import Channels
from gateway.store import Store
from tests.channels.slack_support import ALICE, BOB, CHANNEL, TARGET
from tests.fakes.slack import FakeSlack
from tests.support.serve import ServeProcess, serve_env, serving

pytestmark = [pytest.mark.redis, pytest.mark.slow]
THREAD_TS = "1712345678.000100"


@pytest.fixture
async def fake() -> AsyncIterator[FakeSlack]:
    server = FakeSlack()
    await server.start()
    yield server
    await server.stop()


@pytest.fixture
async def ports(fake: FakeSlack, real_redis: str, tmp_path: Path) -> AsyncIterator[list[int]]:
    """Two ``threadgate serve`` processes with Slack's Events API against the fake."""
    env = serve_env(
        REDIS_URL=real_redis,
        SLACK_BOT_TOKEN=fake.bot_token,
        SLACK_SIGNING_SECRET=fake.signing_secret,
        SLACK_API_URL=fake.api_url,
    )
    servers = [ServeProcess(env, tmp_path / name) for name in ("a", "b")]
    with serving(*servers, ready_path=None):
        # Waited for off the event loop, which serves the fake Slack the processes call at startup.
        await asyncio.gather(*(asyncio.to_thread(server.wait_ready) for server in servers))
        yield [server.port for server in servers]


async def test_presses_racing_on_two_processes_resolve_the_prompt_once(
    fake: FakeSlack, real_redis: str, ports: list[int]
) -> None:
    client = redis.asyncio.from_url(real_redis, decode_responses=True)
    # The agent's side, in this process: it raises the prompt; the two servers take the presses.
    slack = SlackChannel(fake.bot_token, signing_secret=fake.signing_secret, api_url=fake.api_url)
    agent = Gateway(Store(client), Channels([slack]))
    await agent.start()
    try:
        await agent.store.put_agent(
            AgentDefinition(name="ops", human_input=HumanInput(approvers=[f"slack:{BOB}"]))
        )
        thread_id = f"slack:{CHANNEL}:{THREAD_TS}"
        run = await agent.create_run(
            RunRequest(thread_id=thread_id, agent="ops", started_by=f"slack:{ALICE}")
        )
        prompt = await agent.raise_prompt(run.run_id, PromptRequest.model_validate(TARGET))
        [message] = fake.posted(THREAD_TS)

        statuses = await asyncio.gather(
            fake.press(f"http://127.0.0.1:{ports[0]}/slack/events", message, "staging", user=ALICE),
            fake.press(f"http://127.0.0.1:{ports[1]}/slack/events", message, "production", user=BOB),
        )
        assert list(statuses) == [200, 200]

        settled = await agent.wait_prompt(prompt.prompt_id, 10)
        assert settled.prompt_state is PromptState.ANSWERED
        winner = {f"slack:{ALICE}": "staging", f"slack:{BOB}": "production"}[settled.answered_by or ""]
        assert [answer.answer for answer in settled.answers or []] == [[winner]]

        await fake.wait_for(lambda: len(fake.responses) == 2 and bool(fake.calls_to("chat.update")), 10)
        await fake.wait_for(lambda: fake.posted(THREAD_TS)[-1]["text"].startswith("✓"), 10)
        notices = sorted(response["text"] for response in fake.responses)
        assert notices == sorted(
            [
                f"Your answer was recorded: {winner}",
                f"This prompt was already answered ({winner}), so nothing was changed.",
            ]
        )
        assert len(fake.calls_to("chat.update")) == 1
        assert [m["text"] for m in fake.posted(THREAD_TS)[1:]] == [f"✓ Answered: {winner}"]
    finally:
        await agent.stop()
        await client.aclose()
