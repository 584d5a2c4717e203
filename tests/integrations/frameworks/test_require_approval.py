"""``require_approval`` and ``ask_human`` against a running gateway; alice answers in the web chat."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import datetime
import inspect

import pytest

from gateway.client import (
    ApprovalDenied,
    ApprovalMismatch,
    HumanUnavailable,
    ask_human,
    ask_human_async,
    require_approval,
)
from gateway.client.approval import _BoundCall
from gateway.client.call_types import CallTypes
from tests.integrations.conftest import PERSON, Gateway
from tests.support.redis_server import free_port

done: list[tuple[str, bool]] = []


@require_approval
def deploy(target: str, *, force: bool = False) -> str:
    done.append((target, force))
    return f"deployed to {target}"


@require_approval(question="Drop this table?")
async def drop_table(name: str) -> str:
    done.append((name, True))
    return f"dropped {name}"


@pytest.fixture(autouse=True)
def nothing_done() -> None:
    done.clear()


async def test_the_body_runs_after_approve_with_the_bound_arguments(gateway: Gateway, agent: str) -> None:
    call = asyncio.create_task(asyncio.to_thread(deploy, "staging"))
    prompt = await gateway.pending_prompt(agent)
    assert prompt["kind"] == "approval"
    assert prompt["tool_call"] == {"name": "deploy", "arguments": {"target": "staging", "force": False}}
    assert done == []
    await gateway.say(prompt["thread_id"], "approve")
    assert await call == "deployed to staging"
    assert done == [("staging", False)]


async def test_a_denial_raises_approval_denied_saying_who(gateway: Gateway, agent: str) -> None:
    call = asyncio.create_task(drop_table("users"))
    prompt = await gateway.pending_prompt(agent)
    assert prompt["questions"][0]["question"] == "Drop this table?"
    assert prompt["tool_call"] == {"name": "drop_table", "arguments": {"name": "users"}}
    await gateway.say(prompt["thread_id"], "deny")
    with pytest.raises(ApprovalDenied) as denied:
        await call
    assert (denied.value.tool, denied.value.who) == ("drop_table", f"web:{PERSON}")
    assert done == []


async def test_a_denial_with_a_reason_carries_the_persons_note(gateway: Gateway, agent: str) -> None:
    call = asyncio.create_task(drop_table("users"))
    prompt = await gateway.pending_prompt(agent)
    await gateway.say(prompt["thread_id"], "users is live, drop users_old")
    with pytest.raises(ApprovalDenied) as denied:
        await call
    assert denied.value.note == "users is live, drop users_old"
    assert denied.value.why == f"denied in chat by web:{PERSON}: users is live, drop users_old"
    assert done == []


class Fleet:
    def __init__(self) -> None:
        self.scaled: list[tuple[str, int, object]] = []

    @require_approval(editable=True)
    def scale(self, service: str, replicas: int, *, context: object = None) -> str:
        self.scaled.append((service, replicas, context))
        return f"{service} at {replicas}"


async def test_an_approval_with_edits_runs_the_function_with_the_edited_arguments(
    gateway: Gateway, agent: str
) -> None:
    fleet, context = Fleet(), object()  # a value JSON shows only as its repr: kept as it is, not edited
    call = asyncio.create_task(asyncio.to_thread(fleet.scale, "api", 8, context=context))
    prompt = await gateway.pending_prompt(agent)
    assert prompt["editable"] is True
    assert prompt["input_schema"]["required"] == ["service", "replicas"]
    unknown = 'edit {"service": "api", "replicas": 3, "colour": "blue"}'
    assert await gateway.say(prompt["thread_id"], unknown) == "kept"  # scale() takes no colour
    assert await gateway.say(prompt["thread_id"], "replicas: 3") == "answered"
    assert await call == "api at 3"
    assert fleet.scaled == [("api", 3, context)]


async def test_the_agents_policy_rule_makes_a_decorated_call_editable(gateway: Gateway, agent: str) -> None:
    await gateway.set_approval_policy(agent, {"tools": {"deploy": {"ask": "always", "edit": True}}})
    call = asyncio.create_task(asyncio.to_thread(deploy, "production"))
    prompt = await gateway.pending_prompt(agent)
    await gateway.say(prompt["thread_id"], 'edit {"target": "staging", "force": true}')
    assert await call == "deployed to staging"
    assert done == [("staging", True)]


async def test_an_edit_the_function_cannot_take_never_runs_it(gateway: Gateway, agent: str) -> None:
    await gateway.set_approval_policy(agent, {"tools": {"deploy": {"ask": "always", "edit": True}}})
    call = asyncio.create_task(asyncio.to_thread(deploy, "production"))
    prompt = await gateway.pending_prompt(agent)
    # The signature's schema travels with the call even when only the policy allows edits: refused in chat.
    assert prompt["input_schema"]["additionalProperties"] is False
    assert await gateway.say(prompt["thread_id"], 'edit {"target": "staging", "region": "eu"}') == "kept"
    assert await gateway.say(prompt["thread_id"], "deny") == "answered"
    with pytest.raises(ApprovalDenied):
        await call
    assert done == []


async def test_a_cancelled_prompt_is_unavailable_not_a_denial(gateway: Gateway, agent: str) -> None:
    call = asyncio.create_task(drop_table("users"))
    prompt = await gateway.pending_prompt(agent)
    async with gateway.agent_client() as client:
        await client.post(f"/v1/prompts/{prompt['prompt_id']}/cancel", json={"reason": "changed my mind"})
    with pytest.raises(HumanUnavailable) as unavailable:
        await call
    assert not isinstance(unavailable.value, ApprovalDenied)
    assert "changed my mind" in unavailable.value.reason
    assert done == []


async def test_an_unreachable_gateway_is_unavailable_not_a_denial(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("THREADGATE_URL", f"http://127.0.0.1:{free_port()}")
    monkeypatch.setenv("THREADGATE_THREAD", "web:nowhere")
    with pytest.raises(HumanUnavailable):
        await asyncio.to_thread(deploy, "production")
    with pytest.raises(HumanUnavailable):
        await drop_table("users")
    assert done == []


async def test_arguments_changed_while_waiting_are_not_approved(gateway: Gateway, agent: str) -> None:
    @dataclasses.dataclass
    class Order:
        items: list[str]

    @require_approval
    def ship(order: Order) -> None:
        done.append(("ship", True))

    order = Order(["book"])
    call = asyncio.create_task(asyncio.to_thread(ship, order))
    prompt = await gateway.pending_prompt(agent)
    order.items.append("piano")
    await gateway.say(prompt["thread_id"], "approve")
    with pytest.raises(HumanUnavailable, match="arguments changed"):
        await call
    assert done == []


async def test_explicit_settings_win_over_the_environment(gateway: Gateway, agent: str) -> None:
    @require_approval(thread="web:explicit-room", agent=f"{agent}-explicit")
    def restart(service: str) -> str:
        return f"restarted {service}"

    call = asyncio.create_task(asyncio.to_thread(restart, "api"))
    prompt = await gateway.pending_prompt(f"{agent}-explicit")
    assert prompt["thread_id"] == "web:explicit-room"
    await gateway.say(prompt["thread_id"], "yes")
    assert await call == "restarted api"


async def test_ask_human_returns_the_chosen_label(gateway: Gateway, agent: str) -> None:
    call = asyncio.create_task(asyncio.to_thread(ask_human, "Deploy where?", ["staging", "production"]))
    prompt = await gateway.pending_prompt(agent)
    await gateway.say(prompt["thread_id"], "2")
    assert await call == "production"


async def test_ask_human_returns_free_text_as_written(gateway: Gateway, agent: str) -> None:
    call = asyncio.create_task(ask_human_async("Any notes for the release?"))
    prompt = await gateway.pending_prompt(agent)
    await gateway.say(prompt["thread_id"], "ship it after lunch")
    assert await call == "ship it after lunch"


async def test_every_call_in_a_process_asks_in_one_run_that_stays_open(gateway: Gateway, agent: str) -> None:
    """As docs/integrations.md says: the decorator, ask_human and every Human of the agent share the
    process's one run (and thread), which a decision does not end."""
    asked = []
    for start, answer in [
        (lambda: asyncio.to_thread(deploy, "staging"), "approve"),
        (lambda: drop_table("users_old"), "deny"),
        (lambda: ask_human_async("Which table next?", ["a", "b"]), "a"),
        (lambda: asyncio.to_thread(deploy, "production", force=True), "approve"),
    ]:
        call = asyncio.create_task(start())
        prompt = await gateway.pending_prompt(agent)
        asked.append((prompt["thread_id"], prompt["run_id"]))
        await gateway.say(prompt["thread_id"], answer)
        with contextlib.suppress(ApprovalDenied):
            await asyncio.wait_for(call, 10)
    assert len(set(asked)) == 1  # each asked after the one before was decided: the run stayed open


@pytest.mark.parametrize("typed", ["replicas: many", "replicas: 2.5", 'replicas: "3"', "replicas: true"])
async def test_an_edit_is_checked_as_the_call_would_be_by_its_annotations(
    gateway: Gateway, agent: str, typed: str
) -> None:
    fleet = Fleet()
    call = asyncio.create_task(asyncio.to_thread(fleet.scale, "api", 5))
    prompt = await gateway.pending_prompt(agent)
    assert prompt["input_schema"]["properties"]["replicas"] == {"type": "integer"}
    assert await gateway.say(prompt["thread_id"], typed) == "kept"  # scale() takes a whole number
    assert fleet.scaled == []
    assert await gateway.say(prompt["thread_id"], "replicas: 3") == "answered"
    assert await call == "api at 3"
    assert fleet.scaled == [("api", 3, None)]


def test_an_edited_value_is_read_as_the_annotation_reads_it() -> None:
    def plan(day: datetime.date, replicas: int = 1) -> None: ...

    types = CallTypes(plan)
    assert types.read("day", "2026-03-01") == datetime.date(2026, 3, 1)
    with pytest.raises(ValueError):
        types.read("replicas", "many")
    schema = types.schema({"day": "2026-03-01", "replicas": 1})
    assert schema["properties"]["day"] == {"format": "date", "type": "string"}
    assert schema["required"] == ["day"]


def test_an_edit_the_function_cannot_take_raises_approval_mismatch_before_it_runs() -> None:
    def plan(day: datetime.date, replicas: int = 1) -> None: ...

    call = _BoundCall.of(inspect.signature(plan), (datetime.date(2026, 3, 1),), {})
    types = CallTypes(plan)
    assert call.approved("plan", {"day": "2026-03-02", "replicas": 2}, types).args == (
        datetime.date(2026, 3, 2),
        2,
    )
    with pytest.raises(ApprovalMismatch, match="replicas"):
        call.approved("plan", {"day": "2026-03-01", "replicas": "many"}, types)
    with pytest.raises(ApprovalMismatch, match="no argument 'region'"):
        call.approved("plan", {"day": "2026-03-01", "region": "eu"}, types)
