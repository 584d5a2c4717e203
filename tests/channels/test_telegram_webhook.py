"""Webhook mode: Telegram's pushes to ``POST /telegram/webhook`` on the served gateway, secret checked."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from gateway.base.models import PromptState
from gateway.process.runtime import Runtime
from tests.channels import telegram_support
from tests.channels.telegram_support import (
    ALICE,
    DEPLOY,
    DEPLOY_TEXT,
    TOKEN,
    agent_messages,
    open_prompt,
    settings_for,
    settled,
    webhook_gateway,
)
from tests.fakes.telegram import FakeTelegram
from tests.support.platforms import build_channel

pytestmark = pytest.mark.redis
SECRET = "s3cret-Token_1"
DM = f"telegram:{ALICE}"


fake = telegram_support.fake


@pytest.fixture
async def served(fake: FakeTelegram, real_redis: str) -> AsyncIterator[tuple[Runtime, str]]:
    """The gateway served over HTTP in webhook mode; its lifespan starts the channel."""
    async with webhook_gateway(fake, real_redis, SECRET) as started:
        yield started


def message_update(fake: FakeTelegram, text: str, user_id: int = ALICE) -> dict[str, Any]:
    return fake.update(fake.message(ALICE, user_id, text))


async def test_starting_sets_the_webhook_with_its_secret_and_does_not_poll(
    served: tuple[Runtime, str], fake: FakeTelegram
) -> None:
    _runtime, base_url = served

    assert fake.webhook == (f"{base_url}/telegram/webhook", SECRET)
    assert fake.calls_of("setWebhook")[0].params["allowed_updates"] == ["message", "callback_query"]
    assert fake.calls_of("getUpdates") == []


async def test_a_pushed_message_reaches_the_agent_and_a_pushed_reply_answers_the_prompt(
    served: tuple[Runtime, str], fake: FakeTelegram
) -> None:
    runtime, _base_url = served

    assert await fake.deliver(message_update(fake, "deploy please")) == 200
    [message] = await agent_messages(runtime)
    assert (message["thread_id"], message["text"]) == (DM, "deploy please")

    prompt = await open_prompt(runtime, DM, DEPLOY)
    assert fake.sent[0].text == DEPLOY_TEXT
    assert await fake.deliver(message_update(fake, "2")) == 200

    resolved = await settled(runtime, prompt.prompt_id)
    assert [a.answer for a in resolved.answers or []] == [["production"]]
    assert (fake.sent[-1].text, fake.sent[-1].reply_to) == (
        f"✓ Answered: production\nAnswered by user{ALICE}",
        fake.sent[0].message_id,
    )


@pytest.mark.parametrize(
    "headers",
    [
        pytest.param({"X-Telegram-Bot-Api-Secret-Token": "wrong-secret"}, id="wrong-secret"),
        pytest.param({"X-Telegram-Bot-Api-Secret-Token": SECRET[:-1]}, id="secret-prefix"),
        pytest.param({}, id="no-secret"),
    ],
)
async def test_a_push_without_the_right_secret_is_rejected_with_401_and_nothing_is_processed(
    served: tuple[Runtime, str], fake: FakeTelegram, headers: dict[str, str]
) -> None:
    runtime, base_url = served
    prompt = await open_prompt(runtime, DM, DEPLOY)

    async with httpx.AsyncClient() as client:
        reply = await client.post(
            f"{base_url}/telegram/webhook", json=message_update(fake, "1"), headers=headers
        )

    assert reply.status_code == 401
    assert reply.json()["error"]["code"] == "UNAUTHORIZED"
    assert (await runtime.gateway.get_prompt(prompt.prompt_id)).prompt_state is PromptState.PENDING
    assert await agent_messages(runtime) == []


async def test_a_body_that_is_not_an_update_is_refused(served: tuple[Runtime, str]) -> None:
    _runtime, base_url = served
    headers = {"X-Telegram-Bot-Api-Secret-Token": SECRET}

    async with httpx.AsyncClient() as client:
        not_json = await client.post(f"{base_url}/telegram/webhook", content=b"{", headers=headers)
        no_update_id = await client.post(
            f"{base_url}/telegram/webhook", json={"message": {}}, headers=headers
        )

    assert (not_json.status_code, no_update_id.status_code) == (400, 400)


async def test_an_update_pushed_twice_resolves_once(served: tuple[Runtime, str], fake: FakeTelegram) -> None:
    runtime, _base_url = served
    prompt = await open_prompt(runtime, DM, DEPLOY)
    update = message_update(fake, "1")

    statuses = [await fake.deliver(update), await fake.deliver(update)]

    resolved = await settled(runtime, prompt.prompt_id)
    assert statuses == [200, 200]  # the second is acknowledged, so Telegram stops re-sending it
    assert [a.answer for a in resolved.answers or []] == [["staging"]]
    assert sum(sent.text.startswith("✓ Answered: staging") for sent in fake.sent) == 1
    assert [(m["tag"], m["text"]) for m in await agent_messages(runtime)] == [("parked_answer", "staging")]


def test_a_webhook_url_without_a_secret_is_refused_at_start_up() -> None:
    fake = FakeTelegram(TOKEN)
    settings = settings_for(fake, None, telegram_webhook_url="https://gw.example.com/telegram/webhook")

    with pytest.raises(ValueError, match="TELEGRAM_WEBHOOK_SECRET"):
        build_channel("telegram", settings)


def test_a_webhook_secret_telegram_would_refuse_is_refused_at_start_up() -> None:
    fake = FakeTelegram(TOKEN)
    overrides = {
        "telegram_webhook_url": "https://gw.example.com/telegram/webhook",
        "telegram_webhook_secret": "no spaces",
    }

    with pytest.raises(ValueError, match="A-Z, a-z, 0-9"):
        build_channel("telegram", settings_for(fake, None, **overrides))
