"""Discord never sends a gateway event again once it reached the gateway: a message the core could not take
during a store outage is held and handed over once Redis answers, never dropped."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
import redis.exceptions

from channels.discord import channel as discord_channel
from channels.discord.channel import DiscordChannel
from gateway.base.errors import GatewayError
from gateway.base.models import InboundMessage
from gateway.delivery.channel import HandOver

MESSAGE = InboundMessage(
    thread_id="discord:123456789012",
    sender="discord:80351110224678912",
    text="2",
    event_id="message:1",
    received_at=datetime(2026, 1, 1, tzinfo=UTC),
)


class FlakySink:
    """The core's inbound sink, failing with each of ``failures`` in turn before taking the message."""

    def __init__(self, failures: list[Exception]) -> None:
        self.failures = list(failures)
        self.attempts = 0
        self.taken: list[InboundMessage] = []

    async def receive(self, message: InboundMessage) -> None:
        self.attempts += 1
        if self.failures:
            raise self.failures.pop(0)
        self.taken.append(message)


@pytest.fixture(autouse=True)
def quick_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    quick = HandOver(tries=discord_channel.RECEIVE.tries, first_delay_s=0.001, max_delay_s=0.001)
    monkeypatch.setattr(discord_channel, "RECEIVE", quick)


@pytest.mark.parametrize(
    "outage",
    [
        redis.exceptions.ConnectionError("refused"),
        redis.exceptions.TimeoutError(),
        redis.exceptions.ReadOnlyError(),
    ],
    ids=["connection_refused", "timeout", "read_only_replica"],
)
async def test_a_message_is_held_through_a_store_outage_of_any_length_and_taken_once(
    outage: Exception,
) -> None:
    sink = FlakySink([outage] * 25)  # far more failures than the retries for other errors
    await DiscordChannel("x.y.z")._receive(sink, MESSAGE)  # type: ignore[arg-type]
    assert sink.taken == [MESSAGE]
    assert sink.attempts == 26


async def test_a_failure_that_is_no_outage_is_tried_a_few_times_then_logged_and_skipped() -> None:
    sink = FlakySink([ValueError("unreadable")] * 25)
    await DiscordChannel("x.y.z")._receive(sink, MESSAGE)  # type: ignore[arg-type]
    assert sink.taken == []
    assert sink.attempts == discord_channel.RECEIVE.tries


async def test_the_cores_refusal_is_not_retried() -> None:
    sink = FlakySink([GatewayError("FORBIDDEN", "no", 403)])
    await DiscordChannel("x.y.z")._receive(sink, MESSAGE)  # type: ignore[arg-type]
    assert sink.attempts == 1
