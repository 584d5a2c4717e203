"""Web Push (contract §11) against a push service fake that checks the VAPID JWT and the payload's
encryption: who is told of a prompt and of an escalation, what a notification says (never the tool's
input), and expired subscriptions dropped. The path from a raise over HTTP: tests/api/test_push.py."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from gateway.base import vapid
from gateway.base.models import AgentDefinition, HumanInput, Person
from gateway.base.models.groups import GroupBody
from gateway.delivery.push import PushSender, endpoint_problem
from gateway.store import Store
from tests.fakes.push import FakePushService

PRIVATE, PUBLIC = vapid.new_pair()
SUBJECT = "mailto:ops@example.com"
LOCAL = frozenset({"127.0.0.1"})  # the push-service fake is on loopback: THREADGATE_PUSH_HOSTS names it
SECRET_ARGS = {"command": "deploy --token sk-live-0123456789abcdef"}


@pytest.fixture
def push_service() -> Iterator[FakePushService]:
    service = FakePushService().start()
    yield service
    service.stop()


def _event(kind: str, **data: Any) -> bytes:
    prompt = {
        "prompt_id": "prm_01JX0000000000000000000000",
        "agent": "ops",
        "started_by": "slack:U0ALICE",
        "kind": "approval",
        "tool_call": {"name": "Bash", "arguments": SECRET_ARGS},
        "questions": [{"question": "Run Bash?"}],
        **data,
    }
    return json.dumps({"id": "evt_1", "type": kind, "data": prompt}).encode()


async def directory(store: Store) -> None:
    await store.put_agent(
        AgentDefinition(name="ops", human_input=HumanInput(approvers=["person:dana", "group:sre"]))
    )
    await store.people.put(Person(person="alice", identities=["slack:U0ALICE"]))
    await store.people.put(Person(person="dana", identities=["slack:U0DANA"]))
    await store.people.put(Person(person="erin", identities=["slack:U0ERIN"]))
    await store.people.put(Person(person="finn"))
    await store.people.put_group("sre", GroupBody(members=["erin"]))


async def test_a_raised_prompt_tells_each_browser_of_everyone_who_may_answer_it(
    store: Store, push_service: FakePushService
) -> None:
    await directory(store)
    browsers = {person: push_service.browser() for person in ("alice", "dana", "erin", "finn")}
    for person, browser in browsers.items():
        await store.push.add(person, browser.subscription())
    sender = PushSender(store, PRIVATE, SUBJECT, hosts=LOCAL)

    assert await sender.deliver(_event("input.requested"), "d1") is None

    told = {delivery.path for delivery in push_service.delivered}
    expected = {browsers[p].endpoint.removeprefix(push_service.origin) for p in ("alice", "dana", "erin")}
    assert told == expected, "the starter, the person approver and the group's member; not Finn"
    assert push_service.refused == []
    delivery = push_service.delivered[0]
    assert delivery.claims["k"] == PUBLIC and delivery.claims["sub"] == SUBJECT
    reader = next(b for b in browsers.values() if b.endpoint.endswith(delivery.path))
    shown = reader.read(delivery.body)
    assert shown == {
        "title": "ops asks",
        "body": "Approve Bash?",
        "tag": "prm_01JX0000000000000000000000",
        "url": "/inbox#prompt=prm_01JX0000000000000000000000",
        "prompt_id": "prm_01JX0000000000000000000000",
    }
    assert b"sk-live" not in delivery.body and "sk-live" not in json.dumps(shown)


async def test_an_escalation_tells_the_people_its_step_names(
    store: Store, push_service: FakePushService
) -> None:
    await directory(store)
    finn = push_service.browser()
    dana = push_service.browser()
    await store.push.add("finn", finn.subscription())
    await store.push.add("dana", dana.subscription())
    sender = PushSender(store, PRIVATE, SUBJECT, hosts=LOCAL)
    steps = [{"after_seconds": 60, "remind": True, "to": []}, {"after_seconds": 600, "to": ["person:finn"]}]

    assert await sender.deliver(_event("input.escalated", escalation=steps, step=1), "d2") is None

    assert [d.path for d in push_service.delivered] == [finn.endpoint.removeprefix(push_service.origin)]
    assert finn.read(push_service.delivered[0].body)["title"] == "ops escalated"


@pytest.mark.parametrize("status", [404, 410])
async def test_a_subscription_the_push_service_calls_gone_is_dropped(
    store: Store, push_service: FakePushService, status: int
) -> None:
    await directory(store)
    kept, expired = push_service.browser(), push_service.browser()
    await store.push.add("dana", kept.subscription())
    await store.push.add("dana", expired.subscription())
    push_service.gone[expired.endpoint.removeprefix(push_service.origin)] = status

    assert (
        await PushSender(store, PRIVATE, SUBJECT, hosts=LOCAL).deliver(_event("input.requested"), "d3")
        is None
    )

    assert [sub["endpoint"] for sub in await store.push.of("dana")] == [kept.endpoint]


async def test_a_message_signed_by_another_key_is_refused_and_the_subscription_kept(
    store: Store, push_service: FakePushService
) -> None:
    """A subscription made for one VAPID key takes nothing signed by another (the keys were changed): the
    refusal (403) is logged, not retried, and the subscription kept (a refusal is not an expiry)."""
    await directory(store)
    browser = push_service.browser(server_key=PUBLIC)
    await store.push.add("dana", browser.subscription())
    other, _ = vapid.new_pair()
    assert (
        await PushSender(store, other, SUBJECT, hosts=LOCAL).deliver(_event("input.requested"), "d4") is None
    )
    assert push_service.delivered == [] and push_service.refused == [
        "signed by a key this subscription was not made for"
    ]
    assert len(await store.push.of("dana")) == 1
    assert (
        await PushSender(store, PRIVATE, SUBJECT, hosts=LOCAL).deliver(_event("input.requested"), "d5")
        is None
    )
    assert len(push_service.delivered) == 1


async def test_a_subscription_to_a_host_that_is_no_push_service_is_dropped_unsent(
    store: Store, push_service: FakePushService
) -> None:
    """Only the browsers' push services (and hosts THREADGATE_PUSH_HOSTS names) are sent to: a subscription
    naming any other host (kept from before the setting changed) is dropped, and nothing is posted."""
    await directory(store)
    await store.push.add("dana", push_service.browser().subscription())
    assert await PushSender(store, PRIVATE, SUBJECT).deliver(_event("input.requested"), "d6") is None
    assert push_service.delivered == [] and push_service.refused == []
    assert await store.push.of("dana") == []


def test_endpoints_are_the_browsers_push_services_or_the_named_hosts() -> None:
    assert endpoint_problem("https://fcm.googleapis.com/fcm/send/abc") is None
    assert endpoint_problem("https://updates.push.services.mozilla.com/wpush/v2/abc") is None
    assert endpoint_problem("https://web.push.apple.com/QO") is None
    assert endpoint_problem("https://wns2-by3p.notify.windows.com/w/?token=x") is None
    assert "not a browser push service" in (endpoint_problem("https://169.254.169.254/latest") or "")
    assert "not a browser push service" in (
        endpoint_problem("https://fcm.googleapis.com.evil.example/x") or ""
    )
    assert "https" in (endpoint_problem("http://fcm.googleapis.com/x") or "")
    assert endpoint_problem("http://127.0.0.1:8080/push/1", LOCAL) is None
