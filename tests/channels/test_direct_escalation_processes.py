"""Two gateway processes on one Redis, Slack over HTTP: an escalation's copy in a person's direct message
is answered through the other process, and settles the prompt and every copy."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import redis.asyncio

from channels.slack import SlackChannel
from gateway.base.models import AgentDefinition, HumanInput, Person, PromptRequest, PromptState, RunRequest
from gateway.decision.service import Gateway
from gateway.delivery.channel import Channels
from gateway.store import Store
from tests.channels.slack_support import ALICE, CHANNEL
from tests.fakes.slack import FakeSlack
from tests.support.serve import ServeProcess, serve_env, serving

pytestmark = [pytest.mark.redis, pytest.mark.slow]
THREAD_TS = "1712345678.000100"
DANA, DANA_DM = "U0DANA", "D0DANA"
TO_DANA = PromptRequest.model_validate(
    {
        "kind": "approval",
        "questions": [{"question": "Allow db__drop to run?"}],
        "escalation": [{"after_seconds": 1, "to": ["person:dana"]}],
    }
)


@pytest.fixture
async def fake() -> AsyncIterator[FakeSlack]:
    server = FakeSlack()
    await server.start()
    yield server
    await server.stop()


@pytest.fixture
async def port(fake: FakeSlack, real_redis: str, tmp_path: Path) -> AsyncIterator[int]:
    """A ``threadgate serve`` process with Slack's Events API against the fake."""
    env = serve_env(
        REDIS_URL=real_redis,
        SLACK_BOT_TOKEN=fake.bot_token,
        SLACK_SIGNING_SECRET=fake.signing_secret,
        SLACK_API_URL=fake.api_url,
    )
    server = ServeProcess(env, tmp_path / "b")
    with serving(server, ready_path=None):
        await asyncio.to_thread(server.wait_ready)
        yield server.port


async def test_an_answer_in_a_direct_message_taken_by_the_other_process_settles_every_copy(
    fake: FakeSlack, real_redis: str, port: int
) -> None:
    client = redis.asyncio.from_url(real_redis, decode_responses=True)
    slack = SlackChannel(fake.bot_token, signing_secret=fake.signing_secret, api_url=fake.api_url)
    agent = Gateway(Store(client), Channels([slack]))  # this process: the agent's side, and a sweeper
    await agent.start()
    try:
        await agent.store.people.put(Person(person="dana", identities=[f"slack:{DANA}"]))
        await agent.store.put_agent(
            AgentDefinition(name="ops", human_input=HumanInput(approvers=["person:dana"]))
        )
        thread_id = f"slack:{CHANNEL}:{THREAD_TS}"
        run = await agent.create_run(
            RunRequest(thread_id=thread_id, agent="ops", started_by=f"slack:{ALICE}")
        )
        prompt = await agent.raise_prompt(run.run_id, TO_DANA)

        def dm() -> list[dict[str, object]]:
            return [posted for posted in fake.posted() if posted["channel"] == DANA_DM]

        await fake.wait_for(lambda: len(dm()) >= 2, 15)
        header, card = dm()[:2]
        assert await fake.press(f"http://127.0.0.1:{port}/slack/events", card, "Approve", user=DANA) == 200

        settled = await agent.wait_prompt(prompt.prompt_id, 10)
        assert (settled.prompt_state, settled.answered_by) == (PromptState.ANSWERED, f"slack:{DANA}")

        def outcome_in(channel: str, ts: object) -> bool:
            return any(
                p["channel"] == channel and p.get("thread_ts") == ts and p["text"] == "✓ Answered: Approve"
                for p in fake.posted()
            )

        await fake.wait_for(lambda: outcome_in(CHANNEL, THREAD_TS) and outcome_in(DANA_DM, header["ts"]), 10)
        await fake.wait_for(lambda: "edited" in fake.message(card), 10)
        assert len(dm()) == 3, "one copy, one outcome: both processes sweep, the step ran once"
    finally:
        await agent.stop()
        await client.aclose()
