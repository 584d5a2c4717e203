"""Every kind of prompt card on screen at once, for the browser tests: raised through the API, settled
through the chat and the API, with long unbroken words where a phone would overflow."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import httpx

from tests.web.conftest import AGENT_AUTH, OPERATOR_AUTH, WebGateway, raise_prompt, start_run

LONG = "staging-eu-west-1-primary-analytics-replica-without-any-break-in-it"

EVERY_FIELD: dict[str, Any] = {
    "kind": "form",
    "message": "Set up the new project.",
    "requested_schema": {
        "type": "object",
        "properties": {
            "project": {"type": "string", "title": "Project name", "minLength": 3, "maxLength": 40},
            "contact": {"type": "string", "title": "Contact email", "format": "email"},
            "site": {"type": "string", "title": "Home page", "format": "uri"},
            "launch": {"type": "string", "title": "Launch date", "format": "date"},
            "window": {"type": "string", "title": "Maintenance window", "format": "date-time"},
            "region": {
                "type": "string",
                "title": "Region",
                "oneOf": [
                    {"const": "eu-west", "title": "Europe (Ireland)"},
                    {"const": "us-east", "title": "US East"},
                ],
            },
            "replicas": {"type": "integer", "title": "Replicas", "minimum": 1, "maximum": 5, "default": 2},
            "budget": {"type": "number", "title": "Budget", "minimum": 0},
            "public": {"type": "boolean", "title": "Public status page"},
            "alerts": {
                "type": "array",
                "title": "Alert channels",
                "items": {"type": "string", "enum": ["email", "pager"], "enumNames": ["Email", "Pager"]},
                "minItems": 1,
                "maxItems": 2,
            },
        },
        "required": ["project", "contact", "region", "replicas"],
    },
    "questions": None,
}

# One of each kind, by the name the tests use for its card.
KINDS: dict[str, dict[str, Any]] = {
    "approval": {
        "kind": "approval",
        "questions": [{"question": "Drop the staging database?"}],
        "tool_call": {"name": "db__drop", "arguments": {"database": LONG, "cascade": True}},
    },
    "single": {
        "kind": "ask_user_question",
        "questions": [
            {
                "question": "Deploy where?",
                "header": "Target",
                "options": [
                    {"label": "staging", "description": "push to staging.example.com"},
                    {"label": LONG, "description": "push to the replica"},
                ],
            }
        ],
    },
    "multi": {
        "kind": "ask_user_question",
        "questions": [
            {
                "question": "Which sections?",
                "multiSelect": True,
                "options": [{"label": "KPI cards"}, {"label": "Table"}, {"label": "Chart"}],
            }
        ],
    },
    "several": {
        "kind": "ask_user_question",
        "questions": [
            {
                "question": "Which source?",
                "header": "Source",
                "options": [{"label": "CSV"}, {"label": "Postgres"}],
            },
            {"question": "Which style?", "header": "Style"},
        ],
    },
    "text": {"kind": "text", "questions": [{"question": "What should the release be called?"}]},
    "url": {
        "kind": "url",
        "message": "Connect your account at the link, then press Done.",
        "url": f"https://example.com/connect/{LONG}/{LONG}",
        "questions": None,
    },
    "form": EVERY_FIELD,
}

Hook = Callable[[str], Awaitable[None]]


async def chat_message(client: httpx.AsyncClient, room: str, text: str, **extra: Any) -> dict[str, Any]:
    response = await client.post(f"/chat/{room}/messages", json={"name": "alice", "text": text, **extra})
    assert response.status_code == 202, response.text
    reply: dict[str, Any] = response.json()
    return reply


async def chat_cards(gateway: WebGateway, room: str = "cards", raised: Hook | None = None) -> None:
    """In ``web:<room>``, a card of each kind: approval, single, several and text answered, multi
    superseded and URL declined (both cancelled), and the form still open. ``raised(name)`` runs once
    each card is raised, before it settles."""
    replies = {"approval": "approve", "single": "2", "several": "1", "text": "Blue Falcon"}
    async with gateway.client(AGENT_AUTH) as agent, gateway.client() as person:
        run = await start_run(agent, room)
        for name in ("approval", "single", "multi", "several", "text", "url", "form"):
            await raise_prompt(agent, run["run_id"], **KINDS[name])
            if raised is not None:
                await raised(name)
            if name in replies:
                assert (await chat_message(person, room, replies[name]))["outcome"] == "answered"
            elif name == "url":
                assert (await chat_message(person, room, "decline", decline=True))["outcome"] == "declined"


async def inbox_cards(gateway: WebGateway) -> dict[str, str]:
    """A pending card of each kind in its own room ``inbox-<name>``: {name: prompt_id}."""
    ids = {}
    async with gateway.client(AGENT_AUTH) as agent:
        for name, body in KINDS.items():
            run = await start_run(agent, f"inbox-{name}")
            ids[name] = (await raise_prompt(agent, run["run_id"], **body))["prompt_id"]
    return ids


async def settle_two(gateway: WebGateway, ids: dict[str, str]) -> None:
    """The inbox's approval answered (as web:alice) and its text question cancelled (superseded)."""
    async with gateway.client(OPERATOR_AUTH) as operator, gateway.client(AGENT_AUTH) as agent:
        response = await operator.post(
            f"/v1/agents/ops/inputs/{ids['approval']}",
            json={"action": "accept", "content": True, "from": "web:alice"},
        )
        assert response.status_code == 200, response.text
        prompt = (await agent.get(f"/v1/prompts/{ids['text']}")).json()
        await raise_prompt(agent, prompt["run_id"], kind="text", questions=[{"question": "Another name?"}])


async def fill_form(form: Any, contact: str) -> None:
    await form.get_by_label("Project name").fill("Orion")
    await form.get_by_label("Contact email").fill(contact)
    await form.get_by_label("Region").select_option(label="US East")
    await form.get_by_label("Replicas").fill("3")
    await form.get_by_label("Public status page").check()
    await form.get_by_role("checkbox", name="Pager").check()
