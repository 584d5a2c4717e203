"""``threadgate mcp`` driven by the official ``mcp`` client over stdio, answered from the web chat."""

from __future__ import annotations

import asyncio
import json
from asyncio.subprocess import PIPE
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from mcp import Client, StdioServerParameters
from mcp.types import CallToolResult, TextContent

from tests.integrations.conftest import PERSON, THREADGATE, Gateway, fixture, unique
from tests.support.redis_server import free_port


@asynccontextmanager
async def mcp_client(env: dict[str, str]) -> AsyncIterator[Client]:
    async with Client(StdioServerParameters(command=THREADGATE, args=["mcp"], env=env)) as client:
        yield client


def text_of(result: CallToolResult) -> str:
    (block,) = result.content
    assert isinstance(block, TextContent)
    return block.text


async def answered(gateway: Gateway, agent: str, call: Any, *replies: Any) -> CallToolResult:
    """Run ``call`` (a tool call) while the person answers its prompt from the chat."""
    task = asyncio.create_task(call)
    prompt = await gateway.pending_prompt(agent)
    for reply in replies:
        if isinstance(reply, str):
            await gateway.say(prompt["thread_id"], reply)
        else:
            await gateway.say(prompt["thread_id"], "see answers", answers=reply)
    result: CallToolResult = await asyncio.wait_for(task, 20)
    return result


async def test_the_server_offers_ask_user_request_approval_and_permission_prompt(gateway: Gateway) -> None:
    async with mcp_client(gateway.env(unique("mcp"))) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(tools) >= {"ask_user", "request_approval", "permission_prompt"}
    assert set(tools["permission_prompt"].input_schema["properties"]) == {"tool_name", "input", "tool_use_id"}


async def test_ask_user_returns_each_questions_answer(gateway: Gateway) -> None:
    agent = unique("mcp")
    questions = [
        {"question": "Deploy where?", "options": [{"label": "staging"}, {"label": "production"}]},
        {
            "question": "Which checks?",
            "multiSelect": True,
            "options": [{"label": "lint"}, {"label": "tests"}, {"label": "e2e"}],
        },
        {"question": "Anything else to know?"},
    ]
    answers = [
        {"question_id": "q1", "answer": ["staging"]},
        {"question_id": "q2", "answer": ["lint", "e2e"]},
        {"question_id": "q3", "answer": ["the cache is cold"]},
    ]
    async with mcp_client(gateway.env(agent)) as client:
        result = await answered(
            gateway, agent, client.call_tool("ask_user", {"questions": questions}), answers
        )
    assert not result.is_error
    assert result.structured_content == {
        "answers": [
            {"question": "Deploy where?", "answer": ["staging"]},
            {"question": "Which checks?", "answer": ["lint", "e2e"]},
            {"question": "Anything else to know?", "answer": ["the cache is cold"]},
        ],
        "answered_by": f"web:{PERSON}",
    }


async def test_request_approval_reports_approve_and_deny(gateway: Gateway) -> None:
    agent = unique("mcp")
    call = {"tool_name": "db__drop", "arguments": {"database": "staging"}}
    async with mcp_client(gateway.env(agent)) as client:
        yes = await answered(gateway, agent, client.call_tool("request_approval", call), "approve")
        no = await answered(gateway, agent, client.call_tool("request_approval", call), "nope")
    assert yes.structured_content is not None and yes.structured_content["approved"] is True
    assert yes.structured_content["approved_call"] == {
        "name": "db__drop",
        "arguments": {"database": "staging"},
    }
    assert no.structured_content is not None and no.structured_content["approved"] is False
    assert no.structured_content["message"] == f"Denied in chat by web:{PERSON}: nope"
    assert (no.structured_content["note"], no.structured_content["approved_call"]) == ("nope", None)


async def test_a_deny_with_a_reason_reaches_the_agent_in_the_tool_result(gateway: Gateway) -> None:
    agent = unique("mcp")
    call = {"tool_name": "db__drop", "arguments": {"database": "staging"}}
    async with mcp_client(gateway.env(agent)) as client:
        denied = await answered(
            gateway, agent, client.call_tool("request_approval", call), "take a snapshot first"
        )
    assert denied.structured_content is not None
    assert denied.structured_content["approved"] is False
    assert denied.structured_content["note"] == "take a snapshot first"
    assert denied.structured_content["message"] == f"Denied in chat by web:{PERSON}: take a snapshot first"


async def test_an_editable_approval_returns_the_call_as_the_person_edited_it(gateway: Gateway) -> None:
    agent = unique("mcp")
    schema = {"type": "object", "properties": {"replicas": {"type": "integer", "maximum": 5}}}
    call = {
        "tool_name": "scale",
        "arguments": {"service": "api", "replicas": 8},
        "editable": True,
        "input_schema": schema,
    }
    async with mcp_client(gateway.env(agent)) as client:
        task = asyncio.create_task(client.call_tool("request_approval", call))
        prompt = await gateway.pending_prompt(agent)
        assert (prompt["editable"], prompt["input_schema"]) == (True, schema)
        assert await gateway.say(prompt["thread_id"], "replicas: 9") == "kept"  # the schema refuses it
        await gateway.say(prompt["thread_id"], "replicas: 3")
        result = await asyncio.wait_for(task, 20)
    assert result.structured_content is not None and result.structured_content["approved"] is True
    assert result.structured_content["approved_call"] == {
        "name": "scale",
        "arguments": {"service": "api", "replicas": 3},
    }
    assert result.structured_content["message"] == (
        f'Approved in chat by web:{PERSON}, edited to {{"replicas": 3, "service": "api"}}.'
    )


async def test_request_approval_shows_the_real_call(gateway: Gateway) -> None:
    agent = unique("mcp")
    call = {"tool_name": "db__drop", "arguments": {"database": "staging"}}
    async with mcp_client(gateway.env(agent)) as client:
        task = asyncio.create_task(client.call_tool("request_approval", call))
        prompt = await gateway.pending_prompt(agent)
        await gateway.say(prompt["thread_id"], "ok")
        await task
    assert prompt["tool_call"] == {"name": "db__drop", "arguments": {"database": "staging"}}


async def test_permission_prompt_answers_in_the_json_the_flag_expects(gateway: Gateway) -> None:
    agent = unique("mcp")
    bash = {"tool_name": "Bash", "input": {"command": "make deploy"}, "tool_use_id": "toolu_01ABC"}
    async with mcp_client(gateway.env(agent)) as client:
        allowed = await answered(gateway, agent, client.call_tool("permission_prompt", bash), "yes")
        denied = await answered(gateway, agent, client.call_tool("permission_prompt", bash), "no")
    assert json.loads(text_of(allowed)) == {"behavior": "allow", "updatedInput": {"command": "make deploy"}}
    assert json.loads(text_of(denied)) == {"behavior": "deny", "message": f"Denied in chat by web:{PERSON}."}


async def test_permission_prompt_carries_the_reason_and_the_edited_input(gateway: Gateway) -> None:
    agent = unique("mcp")
    await gateway.set_approval_policy(agent, {"tools": {"Bash": {"ask": "always", "edit": True}}})
    bash = {"tool_name": "Bash", "input": {"command": "make deploy", "timeout": 60}}
    async with mcp_client(gateway.env(agent)) as client:
        edited = await answered(
            gateway, agent, client.call_tool("permission_prompt", bash), "command: make deploy-staging"
        )
        denied = await answered(
            gateway, agent, client.call_tool("permission_prompt", bash), "not on a Friday"
        )
    assert json.loads(text_of(edited)) == {
        "behavior": "allow",
        "updatedInput": {"command": "make deploy-staging", "timeout": 60},
    }
    assert json.loads(text_of(denied)) == {
        "behavior": "deny",
        "message": f"Denied in chat by web:{PERSON}: not on a Friday",
    }


async def test_permission_prompt_answers_ask_user_question_in_updated_input(gateway: Gateway) -> None:
    agent = unique("mcp")
    tool_input = fixture("claude_permission_request_ask_user_question.json")["tool_input"]
    call = {"tool_name": "AskUserQuestion", "input": tool_input}
    answers = [
        {"question_id": "q1", "answer": ["Live API"]},
        {"question_id": "q2", "answer": ["Table"]},
    ]
    async with mcp_client(gateway.env(agent)) as client:
        result = await answered(gateway, agent, client.call_tool("permission_prompt", call), answers)
    assert json.loads(text_of(result)) == {
        "behavior": "allow",
        "updatedInput": {
            "questions": tool_input["questions"],
            "answers": {
                "Where should the data come from?": "Live API",
                "Which sections should I include?": "Table",
            },
        },
    }


async def test_gateway_down_is_unavailable_never_a_denial(gateway: Gateway) -> None:
    env = gateway.env(unique("mcp"), THREADGATE_URL=f"http://127.0.0.1:{free_port()}")
    async with mcp_client(env) as client:
        permission = await client.call_tool(
            "permission_prompt", {"tool_name": "Bash", "input": {"command": "ls"}}
        )
        question = await client.call_tool("ask_user", {"questions": [{"question": "Go?"}]})
    decision = json.loads(text_of(permission))
    assert decision["behavior"] == "deny"
    assert decision["message"].startswith("Approval unavailable:")
    assert "Denied" not in decision["message"]
    assert question.is_error
    assert "Question unavailable:" in text_of(question)
    assert "declined" not in text_of(question) and "Denied" not in text_of(question)


async def test_approvals_follow_the_agents_policy(gateway: Gateway) -> None:
    agent = unique("mcp")
    await gateway.set_approval_policy(agent, {"default": "destructive"})
    lookup = {"tool_name": "db__lookup", "arguments": {"id": 7}, "destructive": False}
    drop = {**lookup, "tool_name": "db__drop", "destructive": True}
    async with mcp_client(gateway.env(agent)) as client:
        allowed = await asyncio.wait_for(client.call_tool("request_approval", lookup), 20)
        read = {"tool_name": "Read", "input": {"file_path": "/a"}}
        permission = await asyncio.wait_for(client.call_tool("permission_prompt", read), 20)
        asked = await answered(gateway, agent, client.call_tool("request_approval", drop), "approve")
    assert allowed.structured_content == {
        "approved": True,
        "answered_by": None,
        "message": "Allowed by the agent's approval policy; nobody was asked.",
        "note": None,
        "approved_call": {"name": "db__lookup", "arguments": {"id": 7}},
    }
    assert json.loads(text_of(permission)) == {"behavior": "allow", "updatedInput": {"file_path": "/a"}}
    assert asked.structured_content is not None and asked.structured_content["approved"] is True
    assert asked.structured_content["answered_by"] == f"web:{PERSON}"


async def raw_exchange(env: dict[str, str], requests: list[dict[str, Any]]) -> tuple[dict[Any, Any], str]:
    """Send JSON-RPC lines to ``threadgate mcp`` after the handshake; the replies by id, and its stderr."""
    process = await asyncio.create_subprocess_exec(
        THREADGATE, "mcp", env=env, stdin=PIPE, stdout=PIPE, stderr=PIPE
    )
    assert process.stdin is not None and process.stdout is not None and process.stderr is not None
    handshake = [INITIALIZE, {"jsonrpc": "2.0", "method": "notifications/initialized"}]
    for message in handshake + requests:
        process.stdin.write(json.dumps(message).encode() + b"\n")
    await process.stdin.drain()
    replies: dict[Any, Any] = {}
    while len(replies) < 1 + len(requests):
        line = await asyncio.wait_for(process.stdout.readline(), 20)
        assert line, "the server closed stdout before answering every request"
        reply = json.loads(line)
        replies[reply.get("id")] = reply
    process.stdin.close()
    stderr = (await asyncio.wait_for(process.stderr.read(), 20)).decode()
    await process.wait()
    return replies, stderr


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}


async def test_protocol_errors_are_invalid_params_answered_with_their_id_and_no_traceback(
    gateway: Gateway,
) -> None:
    requests: list[dict[str, Any]] = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "no_such_tool", "arguments": {}},
        },
        {"jsonrpc": "2.0", "id": 2, "method": "prompts/get", "params": {"name": "no_such_prompt"}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": [1, 2]},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": "ask_user"},
        {"jsonrpc": "2.0", "id": 5, "method": "ping", "params": None},
    ]
    replies, stderr = await raw_exchange(gateway.env(unique("mcp")), requests)
    assert {key: replies[key]["error"] for key in (1, 2, 3, 4, 5)} == {
        1: {"code": -32602, "message": "Unknown tool: no_such_tool"},
        2: {"code": -32602, "message": "Unknown prompt: no_such_prompt"},
        3: {"code": -32602, "message": "The params of tools/call must be an object."},
        4: {"code": -32602, "message": "The params of tools/call must be an object."},
        5: {"code": -32602, "message": "The params of ping must be an object."},
    }
    assert "Traceback" not in stderr


async def test_a_waiting_call_reports_progress_until_the_person_answers(gateway: Gateway) -> None:
    agent = unique("mcp")
    progressed = asyncio.Event()

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        progressed.set()

    async with mcp_client(gateway.env(agent, THREADGATE_PROGRESS_SECONDS="0.05")) as client:
        call = client.call_tool(
            "ask_user", {"questions": [{"question": "Go?"}]}, progress_callback=on_progress
        )
        task = asyncio.create_task(call)
        prompt = await gateway.pending_prompt(agent)
        await asyncio.wait_for(progressed.wait(), 20)  # nobody has answered yet
        await gateway.say(prompt["thread_id"], "go ahead")
        result = await asyncio.wait_for(task, 20)
    assert result.structured_content is not None
    assert result.structured_content["answers"] == [{"question": "Go?", "answer": ["go ahead"]}]
