"""Long polling's hand-off to the core (python-telegram-bot against the fake Bot API): while the store is
away an update is retried, unconfirmed, until it goes through; other failures are dropped after a few."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import pytest
from redis.exceptions import ConnectionError as RedisConnectionError
from telegram import Bot, Update

from channels.telegram.polling import MAX_HANDLE_ATTEMPTS, Poller
from tests.channels.telegram_support import ALICE, TOKEN, fake_bot_api
from tests.fakes.telegram import FakeTelegram

pytestmark = pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning")


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    async with fake_bot_api() as server:
        yield server


class FlakyCore:
    """The core's hand-off, failing with ``error`` the first ``failures`` times; records what it saw."""

    def __init__(self, fake: FakeTelegram, failures: int, error: Callable[[], Exception]) -> None:
        self.fake = fake
        self.failures = failures
        self.error = error
        self.calls = 0
        self.confirmed_while_failing: list[int] = []
        self.handled: list[int] = []

    async def __call__(self, update: Update) -> None:
        self.calls += 1
        if self.calls <= self.failures:
            self.confirmed_while_failing.append(self.fake.confirmed_below)
            raise self.error()
        self.handled.append(update.update_id)


@asynccontextmanager
async def polling(fake: FakeTelegram, handle: Callable[[Update], Awaitable[None]]) -> AsyncIterator[Poller]:
    bot = Bot(TOKEN, base_url=fake.base_url)
    poller = Poller(bot, TOKEN, handle, poll_timeout=1, max_backoff=0.01, handle_backoff=0.001)
    task = asyncio.create_task(poller.run(fence=1))
    try:
        yield poller
    finally:
        poller.close()
        await task
        await bot.shutdown()


async def test_an_update_is_retried_unconfirmed_for_as_long_as_the_store_is_away(fake: FakeTelegram) -> None:
    outage = MAX_HANDLE_ATTEMPTS * 3  # far more failures than any other error is retried
    core = FlakyCore(fake, outage, lambda: RedisConnectionError("Error 111 connecting to 127.0.0.1:6390."))
    update = await fake.say(ALICE, ALICE, "2")

    async with polling(fake, core):
        await fake.confirmed(update["update_id"])

    assert core.handled == [update["update_id"]]
    assert core.calls == outage + 1
    assert all(below <= update["update_id"] for below in core.confirmed_while_failing)


async def test_an_update_that_fails_for_another_reason_is_dropped_after_a_few_attempts(
    fake: FakeTelegram,
) -> None:
    core = FlakyCore(fake, MAX_HANDLE_ATTEMPTS, lambda: ValueError("a bug"))
    dropped = await fake.say(ALICE, ALICE, "2")
    after = await fake.say(ALICE, ALICE, "3")

    async with polling(fake, core):
        await fake.confirmed(after["update_id"])

    assert core.handled == [after["update_id"]]
    assert core.calls == MAX_HANDLE_ATTEMPTS + 1
    assert fake.confirmed_below > dropped["update_id"]
