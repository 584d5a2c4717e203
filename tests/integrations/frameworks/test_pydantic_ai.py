"""A real Pydantic AI agent on a scripted FunctionModel; its deferred tool calls are answered in chat."""

from __future__ import annotations

import asyncio

from pydantic_ai import Agent
from pydantic_ai.exceptions import CallDeferred
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.tools import DeferredToolRequests

from gateway.client import Human
from gateway.integrations.frameworks.pydantic_ai import ask_in_chat, results_from_chat
from tests.integrations.conftest import PERSON, Gateway
from tests.support.redis_server import free_port


def scripted(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """First turn: call both tools; then report what came back, tool by tool."""
    returns = [
        part
        for message in messages
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, ToolReturnPart)
    ]
    if not returns:
        return ModelResponse(
            parts=[
                ToolCallPart("deploy", {"target": "production"}, tool_call_id="call_deploy"),
                ToolCallPart(
                    "ask_reviewer",
                    {"question": "Who reviews the release?", "options": ["ana", "bo"]},
                    tool_call_id="call_reviewer",
                ),
            ]
        )
    return ModelResponse(parts=[TextPart("; ".join(f"{part.tool_name}={part.content}" for part in returns))])


def release_agent(**options: object) -> Agent[None, object]:
    agent: Agent[None, object] = Agent(FunctionModel(scripted), **options)  # type: ignore[call-overload]

    @agent.tool_plain(requires_approval=True)
    def deploy(target: str) -> str:
        return f"deployed to {target}"

    @agent.tool_plain
    def ask_reviewer(question: str, options: list[str]) -> str:
        raise CallDeferred(kind="question")

    return agent


async def test_deferred_calls_are_answered_in_chat_during_the_run(gateway: Gateway, agent: str) -> None:
    run = asyncio.create_task(release_agent(capabilities=[ask_in_chat()]).run("Release it"))
    approval = await gateway.pending_prompt(agent)
    assert approval["tool_call"] == {"name": "deploy", "arguments": {"target": "production"}}
    await gateway.say(approval["thread_id"], "approve")
    question = await gateway.pending_prompt(agent)
    assert question["questions"][0]["question"] == "Who reviews the release?"
    await gateway.say(question["thread_id"], "2")
    result = await run
    assert result.output == "deploy=deployed to production; ask_reviewer=bo"


async def test_a_denial_goes_back_as_a_deferred_result_saying_who(gateway: Gateway, agent: str) -> None:
    release = release_agent(output_type=[str, DeferredToolRequests])
    first = await release.run("Release it")
    assert isinstance(first.output, DeferredToolRequests)
    answering = asyncio.create_task(results_from_chat(first.output))
    await gateway.say((await gateway.pending_prompt(agent))["thread_id"], "deny")
    await gateway.say((await gateway.pending_prompt(agent))["thread_id"], "ana")
    results = await answering
    assert results.answered_by == {"call_deploy": f"web:{PERSON}"}
    second = await release.run(message_history=first.all_messages(), deferred_tool_results=results)
    assert second.output == f"deploy=Not approved: denied in chat by web:{PERSON}.; ask_reviewer=ana"


async def test_calls_nobody_could_answer_stay_pending_never_denied() -> None:
    release = release_agent(output_type=[str, DeferredToolRequests])
    first = await release.run("Release it")
    assert isinstance(first.output, DeferredToolRequests)
    nobody = Human.from_env(thread="web:nowhere", url=f"http://127.0.0.1:{free_port()}")
    results = await results_from_chat(first.output, human=nobody)
    assert results.approvals == {} and results.calls == {}
    remaining = first.output.remaining(results)
    assert remaining is not None and [call.tool_name for call in remaining.approvals] == ["deploy"]


async def test_an_unanswerable_run_ends_with_the_calls_still_pending() -> None:
    nobody = Human.from_env(thread="web:nowhere", url=f"http://127.0.0.1:{free_port()}")
    release = release_agent(output_type=[str, DeferredToolRequests], capabilities=[ask_in_chat(human=nobody)])
    result = await release.run("Release it")
    assert isinstance(result.output, DeferredToolRequests)
    assert [call.tool_name for call in result.output.approvals] == ["deploy"]


async def test_a_denials_reason_and_an_edited_call_reach_the_tools(gateway: Gateway, agent: str) -> None:
    run = asyncio.create_task(release_agent(capabilities=[ask_in_chat(editable=True)]).run("Release it"))
    approval = await gateway.pending_prompt(agent)
    assert approval["editable"] is True
    await gateway.say(approval["thread_id"], "target: staging")
    await gateway.say((await gateway.pending_prompt(agent))["thread_id"], "1")
    result = await asyncio.wait_for(run, 20)
    assert result.output == "deploy=deployed to staging; ask_reviewer=ana"  # ToolApproved(override_args=…)

    release = release_agent(output_type=[str, DeferredToolRequests])
    first = await release.run("Release it")
    assert isinstance(first.output, DeferredToolRequests)
    answering = asyncio.create_task(results_from_chat(first.output))
    await gateway.say((await gateway.pending_prompt(agent))["thread_id"], "production is frozen this week")
    await gateway.say((await gateway.pending_prompt(agent))["thread_id"], "bo")
    results = await asyncio.wait_for(answering, 20)
    second = await release.run(message_history=first.all_messages(), deferred_tool_results=results)
    assert second.output == (
        f"deploy=Not approved: denied in chat by web:{PERSON}: production is frozen this week; "
        "ask_reviewer=bo"
    )
