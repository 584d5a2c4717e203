"""Reminders and escalation on the web chat, over HTTP on a real Redis: the reminder names who may answer,
the copy in another room is answered there, and both rooms show the outcome."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from gateway.store import keys
from tests.support.conditions import eventually
from tests.support.feeds import feed_entries
from tests.support.redis_server import RedisServer
from tests.web.conftest import AGENT_AUTH, OPERATOR_AUTH, WebGateway, raise_prompt, start_run, web_gateway

DEPLOY = {
    "kind": "approval",
    "questions": [{"question": "Deploy to production?"}],
    "tool_call": {"name": "deploy", "arguments": {"env": "production"}},
}


@pytest.fixture
async def web(redis_server: RedisServer) -> AsyncIterator[WebGateway]:
    redis_server.flush()
    async with web_gateway(redis_server.url, sweep_interval=0.2) as gateway:
        async with gateway.client(OPERATOR_AUTH) as operator:
            defined = await operator.put("/v1/agents/ops", json={"human_input": {"approvers": ["web:bob"]}})
            assert defined.status_code == 200, defined.text
        yield gateway


async def room_items(web: WebGateway, room: str, count: int, kind: str | None = None) -> list[dict[str, Any]]:
    """The room's log (what its chat page shows) once it holds ``count`` items (of ``kind``)."""
    items: list[dict[str, Any]] = []

    async def logged() -> bool:
        items[:] = [entry for _, entry in await web.runtime.store.thread_items(f"web:{room}", None, 100)]
        items[:] = [item for item in items if kind is None or item.get("type") == kind]
        return len(items) >= count

    await eventually(logged, f"{count} items in web:{room}")
    return items


async def test_a_reminder_then_a_copy_in_another_room_answered_there_settles_the_prompt(
    web: WebGateway,
) -> None:
    escalation = [{"after_seconds": 1, "remind": True}, {"after_seconds": 2, "to": ["web:oncall"]}]
    async with web.client(AGENT_AUTH) as agent, web.client() as people:
        run = await start_run(agent, "ops")
        prompt = await raise_prompt(agent, run["run_id"], **DEPLOY, escalation=escalation)

        [reminder] = [
            item
            for item in await room_items(web, "ops", 1, kind="message")
            if item["metadata"].get("type") == "reminder"
        ]
        assert reminder["content"][0]["text"].endswith("Waiting on alice, bob.")
        header, copy = await room_items(web, "oncall", 2)
        assert header["content"][0]["text"].startswith("⏫ Escalated: a prompt in ")
        assert (
            copy["type"] == "pending_prompt"
            and copy["metadata"]["prompt"]["prompt_id"] == prompt["prompt_id"]
        )

        stranger = await people.post("/chat/oncall/messages", json={"name": "mallory", "text": "approve"})
        assert stranger.json()["outcome"] == "not_allowed"
        pressed = await people.post(
            "/chat/oncall/messages",
            json={
                "name": "bob",
                "prompt_id": prompt["prompt_id"],
                "answers": [{"question_id": "q1", "answer": ["Approve"]}],
            },
        )
        assert pressed.status_code == 202 and pressed.json()["outcome"] == "answered"

        settled = (await agent.get(f"/v1/prompts/{prompt['prompt_id']}")).json()
        assert (settled["prompt_state"], settled["answered_by"]) == ("answered", "web:bob")
        assert [(step["step"], step.get("threads")) for step in settled["escalations"]] == [
            (0, None),
            (1, ["web:oncall"]),
        ]
        for room in ("ops", "oncall"):
            [audit] = await room_items(web, room, 1, kind="pending_prompt_resolved")
            assert audit["content"][0]["text"] == "✓ Answered: Approve"

        late = await people.post("/chat/oncall/messages", json={"name": "bob", "text": "approve"})
        assert late.json()["outcome"] == "queued", "the room is its own again once the prompt settled"

    events = await feed_entries(web.runtime.store.redis, keys.EVENTS)
    kinds = [entry["type"] for entry in events if entry["type"].startswith("input.")]
    assert kinds == ["input.requested", "input.reminded", "input.escalated", "input.resolved"]
