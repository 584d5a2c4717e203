"""A boolean is a JSON boolean on every path an agent's input takes: the MCP tools, the REST API and the
hooks refuse ``"no"``, ``0`` and their kin alike, so no caller makes a destructive call look safe."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
from mcp import Client
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError

from gateway.integrations.mcp_server import Asker, build_server
from gateway.integrations.prompts import ask_user_questions
from tests.web.conftest import AGENT_TOKEN, start_run, web_gateway

NOT_BOOLEANS: list[Any] = ["no", "false", "true", "yes", "0", 0, 1, 0.0, [], {}]
BOOLEANS = [True, False]
REACHED = "reached the gateway"
OPTIONS = [{"label": "lint"}, {"label": "tests"}]


def _question(multi_select: Any) -> dict[str, Any]:
    return {"question": "Which checks?", "options": OPTIONS, "multiSelect": multi_select}


async def _mcp(tool: str, arguments: dict[str, Any]) -> bool:
    """Whether the MCP tool took the arguments (it went on to ask the gateway)."""

    def asker_for(ctx: Context) -> Asker:
        raise ToolError(REACHED)

    async with Client(build_server(asker_for)) as client:
        try:
            result = await client.call_tool(tool, arguments)
        except MCPError:
            return False
    return REACHED in str(result.content)


async def mcp_destructive(value: Any) -> bool:
    return await _mcp("request_approval", {"tool_name": "db__drop", "destructive": value})


async def mcp_editable(value: Any) -> bool:
    return await _mcp("request_approval", {"tool_name": "db__drop", "editable": value})


async def mcp_multi_select(value: Any) -> bool:
    return await _mcp("ask_user", {"questions": [_question(value)]})


@asynccontextmanager
async def _rest() -> AsyncIterator[tuple[httpx.AsyncClient, str]]:
    async with web_gateway() as web, web.client({"Authorization": f"Bearer {AGENT_TOKEN}"}) as agent:
        run = await start_run(agent, "booleans")
        yield agent, run["run_id"]


async def _rest_post(path: str, body: dict[str, Any]) -> bool:
    async with _rest() as (agent, run_id):
        response = await agent.post(f"/v1/runs/{run_id}/{path}", json=body)
    assert response.status_code < 500, response.text
    if response.status_code == 400:
        assert response.json()["error"]["code"] == "VALIDATION_FAILED"
    return response.status_code in (200, 201)


async def rest_destructive(value: Any) -> bool:
    return await _rest_post("approvals", {"tool_call": {"name": "db__drop"}, "destructive": value})


async def rest_editable(value: Any) -> bool:
    return await _rest_post("approvals", {"tool_call": {"name": "db__drop"}, "editable": value})


async def rest_multi_select(value: Any) -> bool:
    return await _rest_post("prompts", {"kind": "ask_user_question", "questions": [_question(value)]})


async def hook_multi_select(value: Any) -> bool:
    """AskUserQuestion's input as a hook (or the SDK callback) hands it on."""
    try:
        (question,) = ask_user_questions({"questions": [_question(value)]})
    except ValueError:
        return False
    assert question["multiSelect"] is value
    return True


PATHS: dict[str, Callable[[Any], Awaitable[bool]]] = {
    "mcp request_approval destructive": mcp_destructive,
    "mcp request_approval editable": mcp_editable,
    "mcp ask_user multiSelect": mcp_multi_select,
    "rest approvals destructive": rest_destructive,
    "rest approvals editable": rest_editable,
    "rest prompts multiSelect": rest_multi_select,
    "hook AskUserQuestion multiSelect": hook_multi_select,
}


@pytest.mark.parametrize("value", NOT_BOOLEANS, ids=repr)
@pytest.mark.parametrize("path", PATHS)
async def test_what_is_not_a_json_boolean_is_refused_on_every_path(path: str, value: Any) -> None:
    assert not await PATHS[path](value)


@pytest.mark.parametrize("value", BOOLEANS)
@pytest.mark.parametrize("path", PATHS)
async def test_json_booleans_are_taken_on_every_path(path: str, value: bool) -> None:
    assert await PATHS[path](value)
