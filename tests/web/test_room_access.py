"""Who may read a web room: its runs' starters, their agents' approvers and operators; a session's room
its approvers only; a room nobody runs yet, anyone who may post there. Others find no such room (404)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx

from tests.web.conftest import AGENT_AUTH, OPERATOR_AUTH, WebGateway, raise_prompt, start_run, web_gateway

TOKENS = "alice:tok-alice,bob:tok-bob,olga:tok-olga,room-pass"


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def read(
    web: WebGateway, room: str, headers: dict[str, str], name: str | None = None
) -> httpx.Response:
    """Open the room's event stream and take its first item (or the refusal)."""
    params = {"name": name} if name is not None else {}
    async with (
        web.client(headers) as client,
        asyncio.timeout(5),
        client.stream("GET", f"/chat/{room}/events", params=params) as response,
    ):
        if response.status_code != 200:
            await response.aread()
            return response
        async for line in response.aiter_lines():
            if line.startswith("data: "):
                return httpx.Response(200, json=json.loads(line[6:]))
    raise AssertionError("the stream ended before its first item")


def refused(response: httpx.Response) -> bool:
    return response.status_code == 404 and response.json()["error"]["code"] == "ROOM_NOT_FOUND"


async def approvers(web: WebGateway, *identities: str) -> None:
    async with web.client(OPERATOR_AUTH) as operator:
        response = await operator.put("/v1/agents/ops", json={"human_input": {"approvers": list(identities)}})
        assert response.status_code == 200, response.text


async def alices_room(web: WebGateway, room: str) -> dict[str, Any]:
    """A room where alice started the run and a prompt shows its tool call."""
    async with web.client(AGENT_AUTH) as agent:
        run = await start_run(agent, room, started_by="web:alice")
        call = {"name": "db__drop", "arguments": {"table": "users"}}
        return await raise_prompt(agent, run["run_id"], tool_call=call)


async def test_a_stranger_with_a_valid_token_cannot_read_a_room_another_person_started() -> None:
    async with web_gateway(tokens=TOKENS) as web:
        await alices_room(web, "alices")
        stranger = await read(web, "alices", bearer("tok-bob"))
        claimed = await read(web, "alices", bearer("tok-bob"), name="alice")  # the token names bob
        starter = await read(web, "alices", bearer("tok-alice"))
    assert refused(stranger) and refused(claimed)
    assert starter.status_code == 200 and starter.json()["type"] == "pending_prompt"


async def test_the_agents_approvers_and_operator_tokens_read_the_room() -> None:
    async with web_gateway(tokens=TOKENS) as web:
        await alices_room(web, "approved")
        before = await read(web, "approved", bearer("tok-olga"))
        await approvers(web, "web:olga")
        approver = await read(web, "approved", bearer("tok-olga"))
        operator = await read(web, "approved", OPERATOR_AUTH)
        agent_token = await read(web, "approved", AGENT_AUTH)
    assert refused(before)
    assert approver.status_code == 200 and operator.status_code == 200
    assert agent_token.status_code == 401  # an agent's API token is no web sign-in


async def test_a_bare_room_token_reads_only_rooms_nobody_runs_or_its_name_takes_part_in() -> None:
    async with web_gateway(tokens=TOKENS) as web:
        await alices_room(web, "private")
        async with web.client(bearer("room-pass")) as client:
            posted = await client.post("/chat/lobby/messages", json={"name": "mallory", "text": "hello"})
        assert posted.status_code == 202
        named = await read(web, "private", bearer("room-pass"), name="mallory")
        nameless = await read(web, "private", bearer("room-pass"))
        borrowed = await read(web, "private", bearer("room-pass"), name="alice")  # bound to tok-alice
        lobby = await read(web, "lobby", bearer("room-pass"), name="mallory")
        lobby_nameless = await read(web, "lobby", bearer("room-pass"))
    assert refused(named) and refused(nameless)
    assert borrowed.status_code == 401
    assert lobby.json()["text"] == lobby_nameless.json()["text"] == "hello"


async def test_a_session_room_is_read_by_the_agents_approvers_only() -> None:
    async with web_gateway(tokens=TOKENS) as web, web.client(AGENT_AUTH) as agent:
        header = {"channel": "web:hooks", "header": "Claude Code in api"}
        made = await agent.put("/v1/sessions/claude-code:s1/thread", json=header)
        room = made.json()["thread_id"].removeprefix("web:")
        no_run_yet = await read(web, room, bearer("tok-alice"))
        run = (
            await agent.post(
                "/v1/runs", json={"thread_id": f"web:{room}", "agent": "ops", "started_by": "web:alice"}
            )
        ).json()
        await raise_prompt(agent, run["run_id"], tool_call={"name": "Bash", "arguments": {"command": "ls"}})
        await approvers(web, "web:olga")
        starter = await read(web, room, bearer("tok-alice"))
        bare = await read(web, room, bearer("room-pass"), name="mallory")
        approver = await read(web, room, bearer("tok-olga"))
    assert made.status_code == 201
    assert refused(no_run_yet) and refused(starter) and refused(bare)
    assert approver.status_code == 200 and approver.json()["metadata"]["type"] == "session_header"


async def test_in_an_open_chat_the_name_read_as_must_take_part_in_the_room() -> None:
    async with web_gateway() as web:
        await alices_room(web, "opened")
        stranger = await read(web, "opened", {}, name="bob")
        nameless = await read(web, "opened", {})
        starter = await read(web, "opened", {}, name="alice")
    assert refused(stranger) and refused(nameless)
    assert starter.status_code == 200
