"""Two ``threadgate serve`` processes on one Redis, Telegram by webhook: racing presses answer once."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import redis.asyncio

from channels.telegram import TelegramChannel
from gateway.base.models import AgentDefinition, HumanInput, PromptRequest, PromptState, RunRequest
from gateway.decision.service import Gateway
from gateway.delivery.channel import Channels
from gateway.rules.notices import settled
from gateway.store import Store
from tests.channels import telegram_support
from tests.channels.telegram_support import ALICE, CAROL, DEPLOY, GROUP, TOKEN
from tests.fakes.telegram import FakeTelegram
from tests.support.redis_server import free_port
from tests.support.serve import ServeProcess, serve_env, serving

pytestmark = [pytest.mark.redis, pytest.mark.slow]
SECRET = "race-Secret_1"

fake = telegram_support.fake


@pytest.fixture
async def webhooks(fake: FakeTelegram, real_redis: str, tmp_path: Path) -> AsyncIterator[list[str]]:
    """The webhook URLs of two running gateway processes, each taking Telegram's pushes at its own."""
    servers = []
    for name in ("a", "b"):
        port = free_port()
        env = serve_env(
            REDIS_URL=real_redis,
            TELEGRAM_BOT_TOKEN=TOKEN,
            TELEGRAM_BASE_URL=fake.base_url,
            TELEGRAM_WEBHOOK_URL=f"http://127.0.0.1:{port}/telegram/webhook",
            TELEGRAM_WEBHOOK_SECRET=SECRET,
        )
        servers.append(ServeProcess(env, tmp_path / name, port=port))
    with serving(*servers, ready_path=None):
        # Waited for off the event loop, which serves the fake Bot API the processes call at startup.
        await asyncio.gather(*(asyncio.to_thread(server.wait_ready) for server in servers))
        yield [f"{server.url}/telegram/webhook" for server in servers]


async def test_presses_racing_on_two_processes_resolve_the_prompt_once(
    fake: FakeTelegram, real_redis: str, webhooks: list[str]
) -> None:
    client = redis.asyncio.from_url(real_redis, decode_responses=True)
    # The agent's side, in this process: it raises the prompt; the two servers take the presses.
    agent = Gateway(Store(client), Channels([TelegramChannel(TOKEN, base_url=fake.base_url)]))
    await agent.start()
    try:
        await agent.store.put_agent(
            AgentDefinition(name="ops", human_input=HumanInput(approvers=[f"telegram:{CAROL}"]))
        )
        run = await agent.create_run(
            RunRequest(thread_id=f"telegram:{GROUP}", agent="ops", started_by=f"telegram:{ALICE}")
        )
        prompt = await agent.raise_prompt(run.run_id, PromptRequest.model_validate(DEPLOY))
        [_question, posted] = fake.sent
        alices = fake.press_update(ALICE, posted.message_id, fake.button(posted.message_id, "staging").data)
        carols = fake.press_update(
            CAROL, posted.message_id, fake.button(posted.message_id, "production").data
        )

        statuses = await asyncio.gather(
            fake.deliver(alices, url=webhooks[0]), fake.deliver(carols, url=webhooks[1])
        )

        assert list(statuses) == [200, 200]
        resolved = await agent.wait_prompt(prompt.prompt_id, 10)
        assert resolved.prompt_state is PromptState.ANSWERED
        winner = {f"telegram:{ALICE}": "staging", f"telegram:{CAROL}": "production"}[
            resolved.answered_by or ""
        ]
        assert [answer.answer for answer in resolved.answers or []] == [[winner]]
        notices = sorted([(await fake.answered(alices))["text"], (await fake.answered(carols))["text"]])
        assert notices == sorted([f"Your answer was recorded: {winner}", settled(resolved)])
        await fake.wait_for(lambda: fake.buttons(posted.message_id) == [], 10)  # after the audit item
        # Named as the process that posts it knows them: this one heard the press, the agent's did not.
        who = resolved.answered_by or ""
        [audit] = [sent.text for sent in fake.sent[2:]]
        assert audit in (f"✓ Answered: {winner}\nAnswered by {name}" for name in (who, f"user{who[9:]}"))
        assert len([edit for edit in fake.edits if edit.message_id == posted.message_id]) == 1
        assert fake.buttons(posted.message_id) == []
    finally:
        await agent.stop()
        await client.aclose()
