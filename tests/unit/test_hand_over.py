"""The one rule for handing a platform event to the core when nothing would deliver it again."""

from __future__ import annotations

import pytest
import redis.exceptions

from gateway.base.errors import GatewayError
from gateway.delivery.channel import Handed, HandOver

RULE = HandOver(tries=3, first_delay_s=1.0, max_delay_s=4.0)


class Script:
    """A hand-off failing with each of ``failures`` in turn, then taken; pauses and reports recorded."""

    def __init__(self, failures: list[Exception], closing_after: int | None = None) -> None:
        self.failures = list(failures)
        self.calls = 0
        self.pauses: list[float] = []
        self.reports: list[tuple[str, int, bool, float | None]] = []
        self.closing_after = closing_after

    async def handle(self) -> None:
        self.calls += 1
        if self.failures:
            raise self.failures.pop(0)

    def failed(self, exc: Exception, attempt: int, outage: bool, retry_in: float | None) -> None:
        self.reports.append((type(exc).__name__, attempt, outage, retry_in))

    def closing(self) -> bool:
        return self.closing_after is not None and self.calls >= self.closing_after

    async def pause(self, seconds: float) -> None:
        self.pauses.append(seconds)


async def run(script: Script) -> Handed:
    return await RULE(script.handle, script.failed, closing=script.closing, pause=script.pause)


OUTAGE = redis.exceptions.ConnectionError("refused")


@pytest.mark.parametrize(
    ("failures", "handed", "calls", "pauses"),
    [
        ([], Handed.TAKEN, 1, []),
        ([ValueError()], Handed.TAKEN, 2, [1.0]),
        ([ValueError()] * 3, Handed.DROPPED, 3, [1.0, 2.0]),
        ([GatewayError("FORBIDDEN", "no", 403)], Handed.DROPPED, 1, []),
        ([OUTAGE] * 6, Handed.TAKEN, 7, [1.0, 2.0, 4.0, 4.0, 4.0, 4.0]),
        ([ValueError(), OUTAGE, OUTAGE, ValueError()], Handed.TAKEN, 5, [1.0, 1.0, 2.0, 2.0]),
    ],
    ids=["first-try", "one-failure", "kept-failing", "refused-by-the-core", "long-outage", "mixed"],
)
async def test_an_outage_is_waited_out_other_failures_are_tried_a_few_times_and_a_refusal_once(
    failures: list[Exception], handed: Handed, calls: int, pauses: list[float]
) -> None:
    script = Script(failures)
    assert await run(script) is handed
    assert (script.calls, script.pauses) == (calls, pauses)
    assert len(script.reports) == len(failures)


async def test_each_failed_try_is_reported_with_whether_it_was_an_outage_and_the_next_pause() -> None:
    script = Script([OUTAGE, ValueError(), ValueError(), ValueError()])
    assert await run(script) is Handed.DROPPED
    assert script.reports == [
        ("ConnectionError", 0, True, 1.0),
        ("ValueError", 1, False, 1.0),
        ("ValueError", 2, False, 2.0),
        ("ValueError", 3, False, None),
    ]


async def test_a_channel_that_is_stopping_leaves_the_event_to_be_delivered_again() -> None:
    script = Script([OUTAGE] * 10, closing_after=2)
    assert await run(script) is Handed.CLOSING
    assert script.calls == 2
