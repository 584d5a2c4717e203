"""``POST /teams/messages`` checks the Bot Connector's JWT before it reads the activity.

The token must be RS256, issued by ``https://api.botframework.com`` for this app, unexpired, signed by a
key from the JWKS the OpenID metadata names, whose ``endorsements`` include the activity's channel, and
carry the activity's ``serviceUrl``. Anything else is 401 and nothing reaches the core. Shapes from
"Authentication with the Bot Connector API" and "Send and receive activities" (Bot Framework REST docs).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

import pytest

from tests.channels.teams_support import (
    IN_CHANNEL,
    IN_PERSONAL,
    TeamsGateway,
    fake_bot_framework,
    teams_gateway,
)
from tests.fakes.teams import FakeTeams, identity, rsa_key


@pytest.fixture
async def gw(real_redis: str) -> AsyncIterator[TeamsGateway]:
    async with fake_bot_framework() as fake, teams_gateway(fake, real_redis) as gateway:
        yield gateway


def _hello(fake: FakeTeams) -> dict[str, object]:
    return fake.message(IN_PERSONAL, "alice", "hello")


async def _nothing_reached_the_core(gw: TeamsGateway) -> None:
    assert await gw.agent_feed() == []


REFUSED = [
    pytest.param({"key": rsa_key("forger")}, id="bad-signature"),
    pytest.param({"aud": "11111111-2222-3333-4444-555555555555"}, id="wrong-audience"),
    pytest.param({"iss": "https://sts.windows.net/attacker/"}, id="wrong-issuer"),
    pytest.param({"exp": int(time.time()) - 3600, "nbf": int(time.time()) - 7200}, id="expired"),
    pytest.param({"exp": None}, id="no-expiry"),
    pytest.param({"kid": "not-a-published-key"}, id="unknown-key"),
    pytest.param({"serviceurl": "https://attacker.example.com/teams/"}, id="serviceurl-mismatch"),
    pytest.param({"serviceurl": None}, id="no-serviceurl"),
]


@pytest.mark.parametrize("claims", REFUSED)
async def test_a_token_that_fails_any_check_is_401_and_reaches_nothing(
    gw: TeamsGateway, claims: dict[str, object]
) -> None:
    response = await gw.deliver(_hello(gw.fake), **claims)
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "UNAUTHORIZED"
    await _nothing_reached_the_core(gw)


@pytest.mark.parametrize(
    "authorization",
    ["", "Basic dXNlcjpwYXNz", "Bearer", "Bearer not.a.jwt", "Bearer " + "a" * 10_000],
    ids=["none", "basic", "empty-bearer", "garbage", "huge"],
)
async def test_a_missing_or_malformed_bearer_is_401(gw: TeamsGateway, authorization: str) -> None:
    response = await gw.deliver(_hello(gw.fake), authorization=authorization)
    assert response.status_code == 401
    await _nothing_reached_the_core(gw)


async def test_the_token_is_checked_before_the_body_is_parsed(gw: TeamsGateway) -> None:
    """A body that is not even JSON is 401 without a valid token, 400 only with one."""
    unsigned = await gw.deliver(b"{not json", authorization="Bearer nope")
    forged = await gw.deliver(b"{not json", key=rsa_key("forger"))
    signed = await gw.deliver(b"{not json")
    assert (unsigned.status_code, forged.status_code, signed.status_code) == (401, 401, 400)
    assert signed.json()["error"]["code"] == "VALIDATION_FAILED"


async def test_a_key_not_endorsed_for_the_channel_is_refused(gw: TeamsGateway) -> None:
    gw.fake.endorsements = ["webchat"]
    response = await gw.deliver(_hello(gw.fake))
    assert response.status_code == 401
    await _nothing_reached_the_core(gw)


async def test_an_activity_naming_another_channel_is_refused(gw: TeamsGateway) -> None:
    activity = _hello(gw.fake) | {"channelId": "webchat"}
    assert (await gw.deliver(activity)).status_code == 401


async def test_a_valid_token_lets_the_message_through(gw: TeamsGateway) -> None:
    response = await gw.deliver(gw.fake.message(IN_CHANNEL, "alice", "deploy it", mention=True))
    assert response.status_code == 200
    [entry] = await gw.agent_feed()
    assert (entry["text"], entry["sender"]) == ("deploy it", identity("alice"))


async def test_keys_are_cached_and_an_unknown_key_refetches_them_at_most_once_in_a_while(
    gw: TeamsGateway,
) -> None:
    now = [1000.0]
    gw.channel.auth.clock = lambda: now[0]
    for _ in range(3):
        assert (await gw.deliver(_hello(gw.fake))).status_code == 200
    assert gw.fake.key_fetches == 1
    assert (await gw.deliver(_hello(gw.fake), kid="made-up")).status_code == 401
    assert gw.fake.key_fetches == 1  # fetched a moment ago: an unknown key id does not refetch yet
    now[0] += gw.channel.auth.refetch_every
    for index in range(5):
        assert (await gw.deliver(_hello(gw.fake), kid=f"made-up-{index}")).status_code == 401
    assert gw.fake.key_fetches == 2  # one refetch for the first unknown key, none for the rest


async def test_a_rotated_key_is_picked_up_once_the_refetch_interval_passed(gw: TeamsGateway) -> None:
    assert (await gw.deliver(_hello(gw.fake))).status_code == 200
    gw.channel.auth.refetch_every = 0
    gw.fake.key, gw.fake.kid = rsa_key("rotated"), "fake-key-2"
    assert (await gw.deliver(_hello(gw.fake))).status_code == 200
