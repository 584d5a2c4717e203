"""A single-tenant bot (``TEAMS_TENANT_ID`` set) answers only its tenant: an activity naming another tenant,
in ``channelData.tenant.id`` or ``conversation.tenantId``, or naming none, is acknowledged (200, as any
authentic activity refused for good: the Bot Connector would only deliver it again) and nothing of it is
kept: no message queued or logged, no answer taken, no name or service URL learned. Through the real
Teams SDK path, against the fake Bot Framework."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from channels.teams.settings import TeamsSettings
from channels.teams.tenants import FOREIGN_TENANT, TENANT_EXAMPLE, check_settings
from gateway.base.models import PromptKind, PromptRequest, PromptState, Question
from tests.channels.teams_support import (
    ALICE,
    CHANNEL_THREAD,
    IN_CHANNEL,
    IN_PERSONAL,
    PERSONAL,
    TeamsGateway,
    fake_bot_framework,
    teams_gateway,
)
from tests.fakes.teams import TENANT, identity

OTHER = "11111111-2222-3333-4444-555555555555"
DROP = PromptRequest(kind=PromptKind.APPROVAL, questions=[Question(question="Allow db__drop to run?")])
Variant = Callable[[dict[str, Any]], dict[str, Any]]


def _tenants(channel_data: str | None, conversation: str | None) -> Variant:
    """The activity with its two tenant fields set (None: left out)."""

    def apply(activity: dict[str, Any]) -> dict[str, Any]:
        changed = {**activity, "conversation": dict(activity["conversation"])}
        changed["conversation"].pop("tenantId", None)
        if conversation is not None:
            changed["conversation"]["tenantId"] = conversation
        changed["channelData"] = {"tenant": {"id": channel_data}} if channel_data is not None else {}
        return changed

    return apply


FOREIGN = [
    pytest.param(_tenants(OTHER, OTHER), id="another-tenant"),
    pytest.param(_tenants(OTHER, TENANT), id="another-in-channel-data"),
    pytest.param(_tenants(TENANT, OTHER), id="another-in-the-conversation"),
    pytest.param(_tenants(OTHER, None), id="another-and-no-conversation-tenant"),
    pytest.param(_tenants(None, None), id="no-tenant-at-all"),
    pytest.param(_tenants(f" {OTHER.upper()} ", None), id="another-upper-case"),
]
OWN = [
    pytest.param(_tenants(TENANT, TENANT), id="both"),
    pytest.param(_tenants(TENANT.upper(), None), id="channel-data-only-upper-case"),
    pytest.param(_tenants(None, TENANT), id="conversation-only"),
]


@pytest.fixture
async def gw(real_redis: str) -> AsyncIterator[TeamsGateway]:
    async with fake_bot_framework() as fake, teams_gateway(fake, real_redis, tenant_id=TENANT) as gateway:
        yield gateway


async def _logged(gw: TeamsGateway, thread_id: str) -> list[dict[str, Any]]:
    return [entry for _, entry in await gw.runtime.store.thread_items(thread_id, None, 100)]


@pytest.mark.parametrize("variant", FOREIGN)
@pytest.mark.parametrize(
    ("conversation", "thread_id"),
    [(IN_CHANNEL, f"teams:{CHANNEL_THREAD}"), (IN_PERSONAL, f"teams:{PERSONAL}")],
    ids=["channel", "personal"],
)
async def test_a_message_from_another_tenant_is_acknowledged_and_kept_nowhere(
    gw: TeamsGateway, variant: Variant, conversation: dict[str, Any], thread_id: str
) -> None:
    message = variant(gw.fake.message(conversation, "mallory", "hello from elsewhere"))

    response = await gw.deliver(message)

    assert response.status_code == 200
    assert await gw.agent_feed() == []
    assert await _logged(gw, thread_id) == []
    assert gw.channel.names.shown(identity("mallory")) == identity("mallory"), "no name learned"
    assert gw.fake.posts == [], "nothing is said back"


@pytest.mark.parametrize("variant", FOREIGN)
async def test_a_press_from_another_tenant_answers_nothing(gw: TeamsGateway, variant: Variant) -> None:
    prompt = await gw.ask(f"teams:{CHANNEL_THREAD}", DROP)
    await gw.settled()
    press = variant(gw.fake.press(gw.card_of(prompt), "Approve", ALICE))

    response = await gw.deliver(press)

    assert response.status_code == 200
    assert response.json()["value"] == FOREIGN_TENANT
    assert (await gw.prompt(prompt.prompt_id)).prompt_state is PromptState.PENDING
    assert await gw.agent_feed() == []


@pytest.mark.parametrize("variant", OWN)
async def test_the_bots_own_tenant_is_taken_however_it_is_named(gw: TeamsGateway, variant: Variant) -> None:
    prompt = await gw.ask(f"teams:{CHANNEL_THREAD}", DROP)
    await gw.settled()

    said = await gw.deliver(variant(gw.fake.message(IN_PERSONAL, ALICE, "hello")))
    pressed = await gw.deliver(variant(gw.fake.press(gw.card_of(prompt), "Approve", ALICE)))

    assert (said.status_code, pressed.status_code) == (200, 200)
    assert [entry["text"] for entry in await gw.agent_feed() if entry["tag"] is None] == ["hello"]
    assert (await gw.prompt(prompt.prompt_id)).prompt_state is PromptState.ANSWERED


async def test_a_multi_tenant_bot_takes_every_tenant(real_redis: str) -> None:
    async with fake_bot_framework() as fake, teams_gateway(fake, real_redis) as gw:
        message = _tenants(OTHER, OTHER)(fake.message(IN_PERSONAL, ALICE, "hello"))
        assert (await gw.deliver(message)).status_code == 200
        assert [entry["text"] for entry in await gw.agent_feed()] == ["hello"]


@pytest.mark.parametrize(
    ("tenant", "warned"),
    [
        (None, False),
        (TENANT_EXAMPLE, False),
        (TENANT_EXAMPLE.upper(), False),
        ("contoso.onmicrosoft.com", True),
        ("common", True),
        ("72f988bf86f141af91ab2d7cd011db47", True),
    ],
)
def test_a_tenant_named_other_than_by_its_id_is_warned_about(tenant: str | None, warned: bool) -> None:
    checks = check_settings(TeamsSettings(_env_file=None, teams_tenant_id=tenant))
    assert [check.status for check in checks] == (["warn"] if warned else [])
    assert all("TEAMS_TENANT_ID" in check.detail and TENANT_EXAMPLE in check.detail for check in checks)
