"""While Slack's Web API cannot say who the bot is (``auth.test`` fails), events are not acknowledged:
Slack delivers them again, and once ``auth.test`` answers they are taken, once. Never a silent 200."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from gateway.base.backoff import Retry
from tests.channels.slack_support import ALICE, CHANNEL, SlackGateway, slack_gateway
from tests.fakes.slack import FakeSlack, message_event
from tests.support.conditions import eventually

FAST = Retry(base_s=0.02, max_s=0.1)
OUTAGES: dict[str, Callable[[FakeSlack], None]] = {
    "http_500": lambda fake: fake.fail("auth.test", 500, times=10_000),
    "http_503": lambda fake: fake.fail("auth.test", 503, times=10_000),
    "network_error": lambda fake: fake.fail("auth.test", 0, times=10_000),
    "ratelimited": lambda fake: fake.rate_limit("auth.test", retry_after=0.05, times=10_000),
}


async def _known(gw: SlackGateway) -> None:
    async def known() -> bool:
        return gw.channel.identity.known is not None

    await eventually(known, "the bot's identity learnt from auth.test")


def _mention(gw: SlackGateway, text: str) -> dict[str, Any]:
    mention = f"<@{gw.fake.bot_user_id}> {text}"
    return gw.fake.callback(message_event(CHANNEL, ALICE, mention, ts=gw.fake.next_ts(), kind="app_mention"))


@pytest.mark.parametrize("outage", sorted(OUTAGES))
async def test_events_api_event_is_answered_500_until_auth_test_answers_then_taken_once(
    fake_slack: FakeSlack, real_redis: str, outage: str
) -> None:
    OUTAGES[outage](fake_slack)
    async with slack_gateway(fake_slack, real_redis, max_inline_wait=0.05, identity_retry=FAST) as gw:
        body = _mention(gw, "deploy the new build")
        assert await fake_slack.deliver(gw.events_url, body) == 500
        assert await fake_slack.deliver(gw.events_url, body, retry_num=1) == 500
        assert gw.channel.identity.known is None
        fake_slack.heal("auth.test")
        await _known(gw)
        assert await fake_slack.deliver(gw.events_url, body, retry_num=2) == 200
        assert await fake_slack.deliver(gw.events_url, body, retry_num=3) == 200
        feed = await gw.agent_feed()
    assert [entry["text"] for entry in feed] == ["deploy the new build"]
    assert len(fake_slack.calls_to("auth.test")) > 1  # retried in the background, not per event


@pytest.mark.parametrize("outage", sorted(OUTAGES))
async def test_socket_mode_envelope_is_not_acknowledged_until_auth_test_answers(
    fake_slack: FakeSlack, real_redis: str, outage: str, caplog: pytest.LogCaptureFixture
) -> None:
    OUTAGES[outage](fake_slack)
    async with slack_gateway(
        fake_slack, real_redis, http=False, socket_mode=True, max_inline_wait=0.05, identity_retry=FAST
    ) as gw:
        await fake_slack.wait_sockets(1)
        body = _mention(gw, "rotate the keys")
        pushed = asyncio.create_task(fake_slack.push(body, timeout=30))

        async def refused() -> bool:
            return any(r.getMessage() == "slack.event.failed" for r in caplog.records)

        await eventually(refused, "the envelope handled and refused")
        assert not pushed.done()  # no acknowledgement: Slack sends the envelope again
        pushed.cancel()
        fake_slack.heal("auth.test")
        await _known(gw)
        ack = await fake_slack.push(body, retry_attempt=1)
        assert "envelope_id" in ack
        feed = await gw.agent_feed()
    assert [entry["text"] for entry in feed] == ["rotate the keys"]


async def test_auth_test_is_called_once_at_start_and_never_per_event(
    fake_slack: FakeSlack, real_redis: str
) -> None:
    async with slack_gateway(fake_slack, real_redis) as gw:
        for text in ("one", "two", "three"):
            assert await fake_slack.deliver(gw.events_url, _mention(gw, text)) == 200
    assert len(fake_slack.calls_to("auth.test")) == 1


class _Clock:
    """The identity's sleep on a pretend clock: Slack is down for ``outage_s`` and back from then on."""

    def __init__(self, fake: FakeSlack, outage_s: float) -> None:
        self.fake = fake
        self.outage_s = outage_s
        self.now = 0.0
        self.waits: list[float] = []
        self.released = asyncio.Event()  # held until the test has seen an event refused

    async def sleep(self, seconds: float) -> None:
        await self.released.wait()
        self.waits.append(seconds)
        self.now += seconds
        if self.now >= self.outage_s:
            self.fake.heal("auth.test")
        await asyncio.sleep(0)


# The wait is worked out alike for every failure but a rate limit's Retry-After (a dropped connection
# is also retried inside slack-sdk, slowly, so it is left to the tests above).
LONG_OUTAGES: dict[str, Callable[[FakeSlack], None]] = {
    "http_503": OUTAGES["http_503"],
    "ratelimited_for_an_hour": lambda fake: fake.rate_limit("auth.test", retry_after=3600, times=10_000),
    "ratelimited_for_two_minutes": lambda fake: fake.rate_limit("auth.test", retry_after=120, times=10_000),
    "token_refused": lambda fake: fake.refuse("auth.test", "invalid_auth", times=10_000),
}


@pytest.mark.parametrize("outage_s", [600.0, 7200.0])
@pytest.mark.parametrize("outage", sorted(LONG_OUTAGES))
async def test_auth_test_is_retried_at_least_once_a_minute_however_long_slack_is_away(
    fake_slack: FakeSlack, real_redis: str, outage: str, outage_s: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Slack redelivers a refused event about 1 and 5 minutes later: an outage of any length, and any
    Retry-After Slack sends meanwhile, costs at most a minute once Slack answers again (the jitter at its
    worst)."""
    monkeypatch.setattr("gateway.base.backoff.random.uniform", lambda _low, high: high)
    LONG_OUTAGES[outage](fake_slack)
    clock = _Clock(fake_slack, outage_s)
    async with slack_gateway(fake_slack, real_redis, max_inline_wait=0.05, identity_sleep=clock.sleep) as gw:
        body = _mention(gw, "ship it")
        assert await fake_slack.deliver(gw.events_url, body) == 500
        clock.released.set()
        await _known(gw)
        assert await fake_slack.deliver(gw.events_url, body, retry_num=1) == 200
    assert max(clock.waits) <= 60.0
    assert clock.now - outage_s <= 60.0
