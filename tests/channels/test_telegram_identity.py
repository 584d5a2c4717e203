"""While getMe fails (Telegram's API away or rate-limiting), the bot's username is unknown and a reply
starting with ``@bot`` would be read wrongly: updates are not taken (webhook: 503, so Telegram sends them
again; polling: nothing fetched, so nothing confirmed) until getMe answers, then each is taken once."""

from __future__ import annotations

import pytest

from channels.telegram import channel as telegram_channel
from gateway.base.backoff import Retry
from tests.channels import telegram_support
from tests.channels.telegram_support import (
    ALICE,
    agent_messages,
    channel_of,
    telegram_gateway,
    webhook_gateway,
)
from tests.fakes.telegram import FakeTelegram
from tests.support.conditions import eventually

pytestmark = pytest.mark.redis
fake = telegram_support.fake
FAST = Retry(base_s=0.02, max_s=0.1)


@pytest.fixture(autouse=True)
def fast_retry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(telegram_channel, "IDENTITY_RETRY", FAST, raising=False)


async def test_a_webhook_update_is_refused_until_get_me_answers_then_taken_once(
    fake: FakeTelegram, real_redis: str
) -> None:
    fake.rate_limit("getMe", retry_after=0.01, times=10_000)
    async with webhook_gateway(fake, real_redis) as (runtime, _base_url):
        update = fake.update(fake.message(ALICE, ALICE, f"@{fake.username} deploy please"))
        assert await fake.deliver(update) == 503
        assert await agent_messages(runtime) == []
        fake.heal("getMe")

        async def known() -> bool:
            return channel_of(runtime).identity.username == fake.username

        await eventually(known, "the bot's username learnt from getMe")
        assert await fake.deliver(update) == 200
        assert await fake.deliver(update) == 200
        messages = await agent_messages(runtime)
    assert [m["text"] for m in messages] == ["deploy please"]


async def test_polling_fetches_nothing_until_get_me_answers(fake: FakeTelegram, real_redis: str) -> None:
    fake.rate_limit("getMe", retry_after=0.01, times=10_000)
    async with telegram_gateway(fake, real_redis, wait_polling=False) as runtime:
        update = await fake.push(fake.update(fake.message(ALICE, ALICE, f"@{fake.username} rotate the keys")))

        async def asked_get_me_again() -> bool:
            return len(fake.calls_of("getMe")) >= 3

        await eventually(asked_get_me_again, "getMe asked again in the background")
        assert fake.calls_of("getUpdates") == []
        fake.heal("getMe")
        await fake.confirmed(update["update_id"])
        messages = await agent_messages(runtime)
    assert [m["text"] for m in messages] == ["rotate the keys"]
