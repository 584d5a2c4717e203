"""``POST /slack/events`` checks Slack's signature on the raw bytes before anything parses the body, then
refuses a signed body Bolt could not read with a 400: no input reaches the SDK in a shape that fails there."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator

import httpx
import pytest

from channels.slack.verify import fresh_timestamp, is_signed, signature_of
from tests.channels.slack_support import ALICE, SlackGateway, slack_gateway
from tests.fakes.slack import FakeSlack, message_event
from tests.support.log_capture import assert_short_lines, captured_logs

NOW = 1_800_000_000
HOSTILE_BODIES = [
    pytest.param(b"[" * 900 + b"]" * 900, "application/json", id="deep-array"),
    pytest.param(b'{"a":' * 200 + b"1" + b"}" * 200, "application/json", id="deep-object"),
    pytest.param(b"not json at all", "application/json", id="not-json"),
    pytest.param(b'{"type": "event_callback", "x": "\xff"}', "application/json", id="not-utf8"),
    pytest.param(b"[1, 2]", "application/json", id="array"),
    pytest.param(b"payload=" + b"%5B" * 900, "application/x-www-form-urlencoded", id="deep-form-payload"),
    pytest.param(b"payload=%7Bnope", "application/x-www-form-urlencoded", id="bad-form-payload"),
]


@pytest.fixture
async def gw(fake_slack: FakeSlack, real_redis: str) -> AsyncIterator[SlackGateway]:
    async with slack_gateway(fake_slack, real_redis) as gateway:
        yield gateway


async def _post(gw: SlackGateway, body: bytes, headers: dict[str, str]) -> httpx.Response:
    async with httpx.AsyncClient() as client:
        return await client.post(gw.events_url, content=body, headers=headers)


@pytest.mark.parametrize(
    ("stamp", "fresh"),
    [
        (str(NOW), True),
        (str(NOW - 300), True),
        (str(NOW + 301), False),
        (str(NOW - 301), False),
        ("9" * 400, False),
        ("", False),
        ("-1", False),
        ("1.5", False),
        ("١٨٠٠٠٠٠٠٠٠", False),  # digits, but not ASCII ones
        ("0" * 13, False),
    ],
)
def test_a_timestamp_is_short_plain_digits_within_five_minutes(stamp: str, fresh: bool) -> None:
    assert fresh_timestamp(stamp, NOW) is fresh


def test_the_signature_covers_timestamp_and_raw_body() -> None:
    body = b'{"type": "event_callback"}'
    good = {
        "x-slack-request-timestamp": str(NOW),
        "x-slack-signature": signature_of("s3cret", str(NOW), body),
    }
    assert is_signed("s3cret", good, body, NOW)
    assert not is_signed("s3cret", good, body + b" ", NOW)
    assert not is_signed("other", good, body, NOW)
    assert not is_signed("s3cret", {**good, "x-slack-signature": "v0=é"}, body, NOW)


async def test_an_absurd_timestamp_is_401_not_a_failure_in_the_sdk(
    fake_slack: FakeSlack, gw: SlackGateway
) -> None:
    event = message_event("D0ALICE", ALICE, "hi", ts=fake_slack.next_ts(), channel_type="im")
    raw = json.dumps(fake_slack.callback(event)).encode()
    stamp = "9" * 400
    headers = {
        "Content-Type": "application/json",
        "X-Slack-Request-Timestamp": stamp,
        "X-Slack-Signature": signature_of(fake_slack.signing_secret, stamp, raw),
    }
    with captured_logs() as records:
        response = await _post(gw, raw, headers)
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "UNAUTHORIZED"
    assert_short_lines(records)
    assert await gw.agent_feed() == []


@pytest.mark.parametrize(("body", "content_type"), HOSTILE_BODIES)
async def test_a_badly_signed_body_is_401_whatever_it_holds(
    gw: SlackGateway, body: bytes, content_type: str
) -> None:
    headers = {
        "Content-Type": content_type,
        "X-Slack-Request-Timestamp": str(int(time.time())),
        "X-Slack-Signature": "v0=" + "0" * 64,
    }
    with captured_logs() as records:
        response = await _post(gw, body, headers)
    assert response.status_code == 401
    assert_short_lines(records)


@pytest.mark.parametrize(("body", "content_type"), HOSTILE_BODIES)
async def test_a_signed_body_bolt_could_not_read_is_400(
    fake_slack: FakeSlack, gw: SlackGateway, body: bytes, content_type: str
) -> None:
    stamp = int(time.time())
    headers = {
        "Content-Type": content_type,
        "X-Slack-Request-Timestamp": str(stamp),
        "X-Slack-Signature": fake_slack.sign(body, stamp),
    }
    with captured_logs() as records:
        response = await _post(gw, body, headers)
    assert response.status_code == 400, response.text
    assert_short_lines(records)
    assert await gw.agent_feed() == []
