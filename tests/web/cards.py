"""Every kind of prompt card on screen at once, for the browser tests: raised through the API, settled
through the chat and the API, with long unbroken words where a phone would overflow."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import httpx
from playwright.async_api import expect

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

# An editable call with an argument of each type, and its schema (which adds an optional ``cwd``).
EDIT_CALL: dict[str, Any] = {
    "name": "Bash",
    "arguments": {"command": "rm -rf build", "timeout": 30, "dry_run": True, "env": {"STAGE": "ci"}},
}
EDIT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "command": {"type": "string", "maxLength": 40},
        "timeout": {"type": "integer"},
        "dry_run": {"type": "boolean"},
        "env": {"type": "object", "additionalProperties": {"type": "string"}},
        "cwd": {"type": "string", "description": "Where to run it"},
    },
    "required": ["command"],
}
# The editable call with long unbroken values, where a phone would overflow.
LONG_EDIT_CALL: dict[str, Any] = {
    "name": "Bash",
    "arguments": {**EDIT_CALL["arguments"], "command": f"ls {LONG}"[:40], "env": {"STAGE": LONG}},
}

Hook = Callable[[str], Awaitable[None]]


async def approvers(gateway: WebGateway, *people: str) -> None:
    """Make ``people`` the approvers of agent ``ops`` (besides each run's starter)."""
    async with gateway.client(OPERATOR_AUTH) as operator:
        response = await operator.put("/v1/agents/ops", json={"human_input": {"approvers": list(people)}})
        assert response.status_code == 200, response.text


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


async def chat_decisions(gateway: WebGateway, room: str = "cards") -> None:
    """In ``web:<room>`` (whose runs web:alice starts), an approval's every decision, each settled through
    the chat: denied with a long reason, approved with edits, approved by two people; then an editable
    approval left open."""
    await approvers(gateway, "web:bob")
    deny = [{"question_id": "q1", "answer": ["Deny"]}]
    approve = [{"question_id": "q1", "answer": ["Approve"]}]
    async with gateway.client(AGENT_AUTH) as agent, gateway.client() as person:
        run = await start_run(agent, room)
        raised = await raise_prompt(agent, run["run_id"], tool_call=EDIT_CALL)
        said = await chat_message(
            person, room, "Deny", answers=deny, note=f"use {LONG} instead", **of(raised)
        )
        assert said["outcome"] == "answered"
        raised = await raise_prompt(agent, run["run_id"], tool_call=EDIT_CALL, editable=True)
        edited = {**EDIT_CALL["arguments"], "env": {"STAGE": LONG}}
        said = await chat_message(person, room, "Approve", answers=approve, arguments=edited, **of(raised))
        assert said["outcome"] == "answered"
        raised = await raise_prompt(agent, run["run_id"], tool_call=EDIT_CALL, approvals=2)
        assert (await chat_message(person, room, "approve"))["outcome"] == "voted"
        response = await person.post(f"/chat/{room}/messages", json={"name": "bob", "text": "approve"})
        assert response.json()["outcome"] == "answered"
        await raise_prompt(
            agent, run["run_id"], tool_call=LONG_EDIT_CALL, editable=True, input_schema=EDIT_SCHEMA
        )


def of(prompt: dict[str, Any]) -> dict[str, str]:
    return {"prompt_id": prompt["prompt_id"]}


async def inbox_decisions(gateway: WebGateway) -> dict[str, str]:
    """Pending approvals in rooms of their own: ``quorum`` (needs web:alice and web:bob) and ``editable``
    (with long values): {name: prompt_id}."""
    await approvers(gateway, "web:bob")
    async with gateway.client(AGENT_AUTH) as agent:
        run = await start_run(agent, "inbox-quorum")
        quorum = await raise_prompt(agent, run["run_id"], tool_call=EDIT_CALL, approvals=2)
        run = await start_run(agent, "inbox-editable")
        editable = await raise_prompt(
            agent, run["run_id"], tool_call=LONG_EDIT_CALL, editable=True, input_schema=EDIT_SCHEMA
        )
    return {"quorum": quorum["prompt_id"], "editable": editable["prompt_id"]}


async def voted(card: Any) -> None:
    """``card``'s approval (one that needs two approvers) approved from the inbox: one of two."""
    await card.get_by_role("button", name="Approve", exact=True).click()
    await expect(card.locator(".votes")).to_have_text("Approved 1 of 2: web:alice")


async def refused_edit(card: Any) -> None:
    """``card``'s (an open editable approval's) edit form, sent with a command the tool's schema refuses:
    the problem shown by the field."""
    await card.get_by_role("button", name="Edit and approve…").click()
    form = card.locator("form.edit")
    await form.get_by_label("command", exact=True).fill("x" * 41)
    await form.get_by_role("button", name="Approve edited call").click()
    await expect(form.locator(".field[data-argument=command] .problem")).to_be_visible()


async def reason_opened(card: Any) -> None:
    """``card``'s Deny-with-reason form, opened, with a long reason typed."""
    await card.get_by_role("button", name="Deny with reason…").click()
    await card.locator("form.reason textarea").fill(f"use {LONG} instead")
