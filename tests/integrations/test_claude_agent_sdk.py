"""The ``can_use_tool`` factory inside the real Claude Agent SDK, whose CLI side is a wire-level fake.

``ClaudeSDKClient`` takes a custom ``Transport``: ours speaks the CLI's half of the SDK's stdio control
protocol (JSON lines), so the SDK's own ``Query`` calls the callback and turns its ``PermissionResultAllow``
or ``PermissionResultDeny`` into the control response the CLI would read. No Claude CLI is started.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from claude_agent_sdk import (
    ClaudeAgentOptions,
    ClaudeSDKClient,
    PermissionResultAllow,
    PermissionResultDeny,
    ToolPermissionContext,
    Transport,
)

from gateway.client import Threadgate
from gateway.client.target import Target
from gateway.integrations.claude_agent_sdk import gateway_can_use_tool
from tests.integrations.conftest import AGENT_TOKEN, PERSON, SESSION_CHANNEL, Gateway, fixture, unique
from tests.support.redis_server import free_port


class FakeCLI(Transport):
    """The CLI's side of the control protocol: answers ``initialize``, sends ``can_use_tool`` requests."""

    def __init__(self) -> None:
        self._to_sdk: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self._answers: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._ids = itertools.count(1)

    async def connect(self) -> None:
        return None

    def is_ready(self) -> bool:
        return True

    async def end_input(self) -> None:
        return None

    async def close(self) -> None:
        self._to_sdk.put_nowait(None)

    async def read_messages(self) -> AsyncIterator[dict[str, Any]]:
        while (message := await self._to_sdk.get()) is not None:
            yield message

    async def write(self, data: str) -> None:
        for line in filter(None, data.splitlines()):
            message = json.loads(line)
            if message["type"] == "control_request" and message["request"]["subtype"] == "initialize":
                reply = {
                    "subtype": "success",
                    "request_id": message["request_id"],
                    "response": {"commands": []},
                }
                await self._to_sdk.put({"type": "control_response", "response": reply})
            elif message["type"] == "control_response":
                self._answers[message["response"]["request_id"]].set_result(message["response"])

    async def can_use_tool(
        self, tool_name: str, tool_input: dict[str, Any], suggestions: list[dict[str, Any]] | None = None
    ) -> dict[str, Any]:
        """Ask the SDK, as the CLI does when a tool needs permission; the control response's body."""
        request_id = f"cli_{next(self._ids)}"
        self._answers[request_id] = asyncio.get_running_loop().create_future()
        request = {
            "subtype": "can_use_tool",
            "tool_name": tool_name,
            "input": tool_input,
            "permission_suggestions": suggestions or [],
            "tool_use_id": f"toolu_{request_id}",
        }
        await self._to_sdk.put({"type": "control_request", "request_id": request_id, "request": request})
        response = await asyncio.wait_for(self._answers[request_id], 20)
        assert response["subtype"] == "success", response
        body: dict[str, Any] = response["response"]
        return body


def target_for(agent: str) -> Target:
    return Target(agent=agent, session_channel=SESSION_CHANNEL, started_by=f"web:{PERSON}", wait_s=20)


def client_for(url: str) -> Threadgate:
    return Threadgate(url, AGENT_TOKEN)


async def test_the_sdk_sends_the_approval_to_the_cli_as_allow_with_the_input(gateway: Gateway) -> None:
    agent, cli = unique("sdk"), FakeCLI()
    callback = gateway_can_use_tool(target_for(agent), client=lambda: client_for(gateway.url))
    async with ClaudeSDKClient(ClaudeAgentOptions(can_use_tool=callback), transport=cli):
        ask = asyncio.create_task(cli.can_use_tool("Bash", {"command": "make deploy"}))
        prompt = await gateway.pending_prompt(agent)
        await gateway.say(prompt["thread_id"], "approve")
        assert await ask == {"behavior": "allow", "updatedInput": {"command": "make deploy"}}


async def test_the_sdk_sends_a_denial_with_who_denied(gateway: Gateway) -> None:
    agent, cli = unique("sdk"), FakeCLI()
    callback = gateway_can_use_tool(target_for(agent), client=lambda: client_for(gateway.url))
    async with ClaudeSDKClient(ClaudeAgentOptions(can_use_tool=callback), transport=cli):
        ask = asyncio.create_task(cli.can_use_tool("Write", {"file_path": "/etc/hosts", "content": "x"}))
        prompt = await gateway.pending_prompt(agent)
        await gateway.say(prompt["thread_id"], "no")
        assert await ask == {"behavior": "deny", "message": f"Denied in chat by web:{PERSON}."}


async def test_the_sdk_sends_a_denials_reason_as_its_message(gateway: Gateway) -> None:
    agent, cli = unique("sdk"), FakeCLI()
    callback = gateway_can_use_tool(target_for(agent), client=lambda: client_for(gateway.url))
    async with ClaudeSDKClient(ClaudeAgentOptions(can_use_tool=callback), transport=cli):
        ask = asyncio.create_task(cli.can_use_tool("Write", {"file_path": "/etc/hosts", "content": "x"}))
        prompt = await gateway.pending_prompt(agent)
        await gateway.say(prompt["thread_id"], "edit the project's hosts file, not the system's")
        assert await ask == {
            "behavior": "deny",
            "message": f"Denied in chat by web:{PERSON}: edit the project's hosts file, not the system's",
        }


async def test_the_sdk_runs_the_call_as_the_person_edited_it(gateway: Gateway) -> None:
    agent, cli = unique("sdk"), FakeCLI()
    await gateway.set_approval_policy(agent, {"tools": {"Bash": {"ask": "always", "edit": True}}})
    suggestion = fixture("claude/permission_request.input.json")["permission_suggestions"][0]
    callback = gateway_can_use_tool(target_for(agent), client=lambda: client_for(gateway.url))
    async with ClaudeSDKClient(ClaudeAgentOptions(can_use_tool=callback), transport=cli):
        call = {"command": "rm -rf node_modules", "description": "Clean up"}
        ask = asyncio.create_task(cli.can_use_tool("Bash", call, [suggestion]))
        prompt = await gateway.pending_prompt(agent)
        assert (prompt["kind"], prompt["editable"]) == ("approval", True)  # the edit wins over the choices
        await gateway.say(prompt["thread_id"], "command: rm -rf node_modules/.cache")
        assert await ask == {
            "behavior": "allow",
            "updatedInput": {"command": "rm -rf node_modules/.cache", "description": "Clean up"},
        }


async def test_ask_user_question_answers_go_back_in_updated_input(gateway: Gateway) -> None:
    agent, cli = unique("sdk"), FakeCLI()
    tool_input = fixture("claude_permission_request_ask_user_question.json")["tool_input"]
    callback = gateway_can_use_tool(target_for(agent), client=lambda: client_for(gateway.url))
    async with ClaudeSDKClient(ClaudeAgentOptions(can_use_tool=callback), transport=cli):
        ask = asyncio.create_task(cli.can_use_tool("AskUserQuestion", tool_input))
        prompt = await gateway.pending_prompt(agent)
        answers = [
            {"question_id": "q1", "answer": ["CSV import"]},
            {"question_id": "q2", "answer": ["KPI cards", "Table"]},
        ]
        await gateway.say(prompt["thread_id"], "CSV · KPI cards, Table", answers=answers)
        response = await ask
    assert response["behavior"] == "allow"
    assert response["updatedInput"]["questions"] == tool_input["questions"]
    assert response["updatedInput"]["answers"] == {
        "Where should the data come from?": "CSV import",
        "Which sections should I include?": "KPI cards, Table",
    }


async def test_callback_returns_the_sdks_own_result_types(gateway: Gateway) -> None:
    agent = unique("sdk")
    callback = gateway_can_use_tool(target_for(agent), client=lambda: client_for(gateway.url))
    call = asyncio.ensure_future(
        callback("Bash", {"command": "ls"}, ToolPermissionContext(tool_use_id="toolu_1"))
    )
    prompt = await gateway.pending_prompt(agent)
    await gateway.say(prompt["thread_id"], "ok")
    assert await call == PermissionResultAllow(updated_input={"command": "ls"})


@pytest.mark.parametrize("tool", ["Bash", "AskUserQuestion"])
async def test_unreachable_gateway_is_unavailable_not_a_denial(tool: str) -> None:
    tool_input = fixture("claude_permission_request_ask_user_question.json")["tool_input"]
    url = f"http://127.0.0.1:{free_port()}"
    callback = gateway_can_use_tool(target_for(unique("sdk")), client=lambda: client_for(url))
    result = await callback(tool, tool_input, ToolPermissionContext(tool_use_id="toolu_1"))
    assert isinstance(result, PermissionResultDeny)
    noun = "Question" if tool == "AskUserQuestion" else "Approval"
    assert result.message.startswith(f"{noun} unavailable:")
    assert not result.interrupt


async def test_always_allow_picked_in_chat_reaches_the_cli_as_the_suggested_rule(gateway: Gateway) -> None:
    agent, cli = unique("sdk"), FakeCLI()
    suggestion = fixture("claude/permission_request.input.json")["permission_suggestions"][0]
    callback = gateway_can_use_tool(target_for(agent), client=lambda: client_for(gateway.url))
    async with ClaudeSDKClient(ClaudeAgentOptions(can_use_tool=callback), transport=cli):
        ask = asyncio.create_task(cli.can_use_tool("Bash", {"command": "rm -rf node_modules"}, [suggestion]))
        prompt = await gateway.pending_prompt(agent)
        assert prompt["questions"][0]["options"][1]["label"].startswith("Always allow `rm -rf node_modules`")
        await gateway.say(prompt["thread_id"], "2")
        response = await ask
    assert response["behavior"] == "allow"
    assert response["updatedPermissions"] == [suggestion]


async def test_a_call_the_agents_policy_allows_runs_without_asking(gateway: Gateway) -> None:
    agent, cli = unique("sdk"), FakeCLI()
    await gateway.set_approval_policy(agent, {"default": "destructive"})
    suggestion = fixture("claude/permission_request.input.json")["permission_suggestions"][0]
    read = {"file_path": "/srv/app/README.md"}
    callback = gateway_can_use_tool(target_for(agent), client=lambda: client_for(gateway.url))
    async with ClaudeSDKClient(ClaudeAgentOptions(can_use_tool=callback), transport=cli):
        assert await cli.can_use_tool("Read", read) == {"behavior": "allow", "updatedInput": read}
        # With "always allow" choices the question is raised by the integration: the same policy decides.
        assert await cli.can_use_tool("Read", read, [suggestion]) == {
            "behavior": "allow",
            "updatedInput": read,
        }
        assert await gateway.pending(agent) == []
        asked = asyncio.create_task(cli.can_use_tool("Bash", {"command": "make deploy"}))
        prompt = await gateway.pending_prompt(agent)
        assert prompt["tool_call"]["name"] == "Bash"
        await gateway.say(prompt["thread_id"], "no")
        assert (await asked)["behavior"] == "deny"
