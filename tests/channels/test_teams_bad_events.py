"""What ``POST /teams/messages`` does with signed activities it cannot or need not read: a body that is not
an activity is a 4xx with the error envelope, never a 5xx; a shape the SDK refuses, or an activity type
the gateway has no use for, is acknowledged and dropped (delivered again, it would fail again)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from tests.channels.teams_support import (
    IN_CHANNEL,
    IN_PERSONAL,
    TeamsGateway,
    fake_bot_framework,
    teams_gateway,
)
from tests.fakes.teams import FakeTeams

HOSTILE = [
    pytest.param(b"[" * 900 + b"]" * 900, id="deep-array"),
    pytest.param(b'{"a":' * 200 + b"1" + b"}" * 200, id="deep-object"),
    pytest.param(b"not json at all", id="not-json"),
    pytest.param(b'{"type": "message", "x": "\xff"}', id="not-utf8"),
    pytest.param(b"[1, 2]", id="array"),
]


@pytest.fixture
async def gw(real_redis: str) -> AsyncIterator[TeamsGateway]:
    async with fake_bot_framework() as fake, teams_gateway(fake, real_redis) as gateway:
        yield gateway


@pytest.mark.parametrize("body", HOSTILE)
async def test_a_signed_body_that_is_not_an_activity_is_a_4xx(gw: TeamsGateway, body: bytes) -> None:
    response = await gw.deliver(body)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "VALIDATION_FAILED"


async def test_an_oversized_body_is_413_before_anything_else(gw: TeamsGateway) -> None:
    response = await gw.deliver(b"{" + b" " * 300_000 + b"}", authorization="")
    assert response.status_code == 413


async def test_a_body_that_is_not_json_by_its_type_is_415(gw: TeamsGateway) -> None:
    async with httpx.AsyncClient() as client:
        response = await client.post(
            gw.messages_url,
            content=b"a=b",
            headers={
                "Authorization": f"Bearer {gw.fake.token()}",
                "Content-Type": "application/x-www-form-urlencoded",
            },
        )
    assert response.status_code == 415


def _wrong_shapes(fake: FakeTeams) -> list[dict[str, object]]:
    hello = fake.message(IN_PERSONAL, "alice", "hello")
    return [
        {**hello, "from": "alice"},
        {**hello, "conversation": None},
        {**hello, "text": ["not", "text"]},
        {**hello, "conversation": {"id": "19:bad id with spaces@thread.v2", "conversationType": "groupChat"}},
        {**hello, "from": {"id": "29:1x", "name": "No AAD id"}},
        {**hello, "from": {"id": "29:1x", "aadObjectId": "not-a-guid"}},
    ]


async def test_a_message_of_a_shape_we_cannot_read_is_acknowledged_and_dropped(gw: TeamsGateway) -> None:
    for activity in _wrong_shapes(gw.fake):
        assert (await gw.deliver(activity)).status_code == 200
    assert await gw.agent_feed() == []


@pytest.mark.parametrize(
    "kind", ["conversationUpdate", "messageReaction", "typing", "installationUpdate", "nonsense"]
)
async def test_other_activity_types_are_acknowledged(gw: TeamsGateway, kind: str) -> None:
    assert (await gw.deliver(gw.fake.activity(kind, IN_CHANNEL, "alice"))).status_code == 200
    assert await gw.agent_feed() == []


MISMATCH = "That control does not match its prompt, so nothing was changed."
# The core's answer step says so for every platform's press on a prompt it does not know.
UNKNOWN = "This control belongs to a prompt Threadgate no longer knows, so nothing was changed."


@pytest.mark.parametrize(
    ("value", "notice"),
    [
        ({"action": {"type": "Action.Execute", "verb": "tg.pick", "data": "prm_x"}}, MISMATCH),
        (
            {"action": {"type": "Action.Execute", "verb": "tg.pick", "data": {"tg": "prm_01HXYZ.0.0"}}},
            UNKNOWN,
        ),
        ({"action": {"type": "Action.Execute", "verb": "other.verb", "data": {}}}, MISMATCH),
        ({"action": {"type": "Action.Execute", "verb": "tg.pick", "data": {"tg": ["x"]}}}, MISMATCH),
    ],
    ids=["data-not-object", "unknown-prompt", "foreign-verb", "ref-not-text"],
)
async def test_an_invoke_we_cannot_use_gets_a_private_notice(
    gw: TeamsGateway, value: dict[str, object], notice: str
) -> None:
    invoke = gw.fake.activity("invoke", IN_CHANNEL, "alice", name="adaptiveCard/action", value=value)
    response = await gw.deliver(invoke)
    assert response.status_code == 200
    assert response.json() == {
        "statusCode": 200,
        "type": "application/vnd.microsoft.activity.message",
        "value": notice,
    }


async def test_without_the_signing_keys_activities_are_refused_for_redelivery(gw: TeamsGateway) -> None:
    await gw.fake.stop()
    response = await gw.deliver(gw.fake.message(IN_PERSONAL, "alice", "hello"))
    assert response.status_code == 503
    assert response.headers["Retry-After"]
