"""A real OpenAI Agents SDK run on a scripted Model: a question tool (``ask_human_async``) and a tool that
needs approval, both answered in the web chat."""

from __future__ import annotations

import asyncio
import importlib.util
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from agents import Agent, RunConfig, function_tool
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

from gateway.client import ask_human_async
from gateway.integrations.frameworks.openai_agents import run_with_approvals
from tests.integrations.conftest import PERSON, Gateway

NO_TRACING = RunConfig(tracing_disabled=True)
TARGETS = ["staging", "production"]


def _tool_call(name: str, arguments: dict[str, Any]) -> ResponseFunctionToolCall:
    return ResponseFunctionToolCall(
        type="function_call", name=name, arguments=json.dumps(arguments), call_id=f"call_{name}"
    )


def _text(text: str) -> ResponseOutputMessage:
    content = [ResponseOutputText(type="output_text", text=text, annotations=[])]
    return ResponseOutputMessage(
        id="msg_1", type="message", role="assistant", status="completed", content=content
    )


def _is_tool_output(item: Any) -> bool:
    return isinstance(item, dict) and item.get("type") == "function_call_output"


class ScriptedModel(Model):
    """Asks where to deploy (with its question tool), deploys there, then reports every tool output it
    was given."""

    def __init__(self, question_tool: str = "ask_human_async") -> None:
        self.question_tool = question_tool

    async def get_response(
        self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any
    ) -> ModelResponse:
        outputs = [item["output"] for item in input if _is_tool_output(item)]
        if not outputs:
            step = _tool_call(self.question_tool, {"question": "Deploy where?", "options": TARGETS})
        elif len(outputs) == 1:
            step = _tool_call("deploy", {"target": outputs[0]})
        else:
            step = _text(" | ".join(str(output) for output in outputs))
        return ModelResponse(output=[step], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError("the scripted model does not stream")


@function_tool(needs_approval=True)
def deploy(target: str) -> str:
    """Deploy the release to a target."""
    return f"deployed to {target}"


def release_agent() -> Agent[Any]:
    return Agent(name="releaser", model=ScriptedModel(), tools=[function_tool(ask_human_async), deploy])


async def test_an_interruption_is_asked_in_chat_then_the_run_resumes(gateway: Gateway, agent: str) -> None:
    run = asyncio.create_task(run_with_approvals(release_agent(), "Release it", run_config=NO_TRACING))
    question = await gateway.pending_prompt(agent)
    assert question["questions"][0]["question"] == "Deploy where?"
    await gateway.say(question["thread_id"], "production")
    approval = await gateway.pending_prompt(agent)
    assert approval["tool_call"] == {"name": "deploy", "arguments": {"target": "production"}}
    await gateway.say(approval["thread_id"], "approve")
    result = await run
    assert result.final_output == "production | deployed to production"


async def test_a_denial_rejects_the_call_with_who_denied(gateway: Gateway, agent: str) -> None:
    run = asyncio.create_task(run_with_approvals(release_agent(), "Release it", run_config=NO_TRACING))
    await gateway.say((await gateway.pending_prompt(agent))["thread_id"], "staging")
    await gateway.say((await gateway.pending_prompt(agent))["thread_id"], "deny")
    result = await run
    assert result.final_output == f"staging | Not approved: denied in chat by web:{PERSON}."


async def test_a_denials_reason_reaches_the_model_in_the_rejection(gateway: Gateway, agent: str) -> None:
    run = asyncio.create_task(run_with_approvals(release_agent(), "Release it", run_config=NO_TRACING))
    await gateway.say((await gateway.pending_prompt(agent))["thread_id"], "production")
    await gateway.say((await gateway.pending_prompt(agent))["thread_id"], "wait for the freeze to lift")
    result = await run
    assert result.final_output == (
        f"production | Not approved: denied in chat by web:{PERSON}: wait for the freeze to lift"
    )


EXACTLY = "exactly these arguments: "


class EditFollowingModel(Model):
    """Deploys to production; told a person approved it only as edited, makes exactly that call."""

    async def get_response(
        self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any
    ) -> ModelResponse:
        outputs = [str(item["output"]) for item in input if _is_tool_output(item)]
        if not outputs:
            step: Any = _tool_call("deploy", {"target": "production"})
        elif EXACTLY in outputs[-1] and len(outputs) == 1:
            edited = json.loads(outputs[-1].split(EXACTLY, 1)[1])
            step = ResponseFunctionToolCall(
                type="function_call", name="deploy", arguments=json.dumps(edited), call_id="call_again"
            )
        else:
            step = _text(" | ".join(outputs))
        return ModelResponse(output=[step], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError("the scripted model does not stream")


async def test_a_call_approved_with_edits_runs_once_the_model_makes_the_edited_call(
    gateway: Gateway, agent: str
) -> None:
    await gateway.set_approval_policy(agent, {"tools": {"deploy": {"ask": "always", "edit": True}}})
    releaser = Agent(name="releaser", model=EditFollowingModel(), tools=[deploy])
    run = asyncio.create_task(run_with_approvals(releaser, "Release it", run_config=NO_TRACING))
    prompt = await gateway.pending_prompt(agent)
    assert prompt["editable"] is True
    await gateway.say(prompt["thread_id"], "target: staging")
    result = await asyncio.wait_for(run, 20)  # a second prompt would wait for an answer that never comes
    rejected, ran = str(result.final_output).split(" | ")
    assert rejected == (
        f"Not run as asked: approved in chat by web:{PERSON} only as edited. "
        'Call deploy again with exactly these arguments: {"target": "staging"}'
    )
    assert ran == "deployed to staging"  # approved as edited: nobody was asked a second time
    assert await gateway.pending(agent) == []


def _example() -> Any:
    path = Path(__file__).parents[3] / "examples" / "openai_agents_approvals.py"
    spec = importlib.util.spec_from_file_location("openai_agents_approvals", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("answers", [("production", "approve"), ("staging", "not on a Friday")])
async def test_the_example_asks_its_question_and_its_approval_in_one_room(
    gateway: Gateway, agent: str, monkeypatch: pytest.MonkeyPatch, answers: tuple[str, str]
) -> None:
    """As the example is run: no THREADGATE_AGENT, so every prompt is the default agent's."""
    monkeypatch.delenv("THREADGATE_AGENT")
    model = ScriptedModel(question_tool="ask_human")
    run = asyncio.create_task(_example().release("Release it", model=model, run_config=NO_TRACING))
    question = await gateway.pending_prompt("openai-agents")
    await gateway.say(question["thread_id"], answers[0])
    approval = await gateway.pending_prompt("openai-agents")
    assert approval["tool_call"] == {"name": "deploy", "arguments": {"target": answers[0]}}
    assert (approval["thread_id"], approval["run_id"]) == (question["thread_id"], question["run_id"])
    await gateway.say(approval["thread_id"], answers[1])
    result = await asyncio.wait_for(run, 20)
    assert str(result.final_output).startswith(f"{answers[0]} | ")
