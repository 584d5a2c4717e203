"""A real LangGraph graph whose ``interrupt()`` calls are asked in the web chat, then resumed with answers."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any, Literal, NotRequired, TypedDict, Union

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt
from pydantic import BaseModel, ConfigDict, Discriminator, create_model
from typing_extensions import TypedDict as Decision  # pydantic reads these on Python < 3.12

from gateway.client import HumanUnavailable
from gateway.integrations.frameworks.langgraph import (
    pending,
    per_call_request,
    run_with_humans,
    run_with_humans_sync,
)
from tests.integrations.conftest import PERSON, Gateway, unique
from tests.support.redis_server import free_port


class Release(TypedDict, total=False):
    target: str
    decision: dict[str, Any]
    deployed: bool


def choose_target(state: Release) -> Release:
    return {"target": interrupt({"question": "Deploy where?", "options": ["staging", "production"]})}


def approve_deploy(state: Release) -> Release:
    decision = interrupt({"tool_call": {"name": "deploy", "arguments": {"target": state["target"]}}})
    return {"decision": decision, "deployed": decision["approved"]}


def release_graph() -> Any:
    graph = StateGraph(Release)
    graph.add_node("choose_target", choose_target)
    graph.add_node("approve_deploy", approve_deploy)
    graph.add_edge(START, "choose_target")
    graph.add_edge("choose_target", "approve_deploy")
    graph.add_edge("approve_deploy", END)
    return graph.compile(checkpointer=InMemorySaver())


def config() -> dict[str, Any]:
    return {"configurable": {"thread_id": unique("graph")}}


async def test_interrupts_are_asked_in_chat_and_resume_the_graph(gateway: Gateway, agent: str) -> None:
    run = asyncio.create_task(run_with_humans(release_graph(), {}, config()))
    question = await gateway.pending_prompt(agent)
    assert question["questions"][0]["question"] == "Deploy where?"
    await gateway.say(question["thread_id"], "production")
    approval = await gateway.pending_prompt(agent)
    assert approval["tool_call"] == {"name": "deploy", "arguments": {"target": "production"}}
    await gateway.say(approval["thread_id"], "approve")
    final = await run
    assert final["target"] == "production"
    assert final["deployed"] is True
    assert final["decision"] == {"approved": True, "by": f"web:{PERSON}"}


async def test_a_denial_resumes_the_graph_with_who_denied(gateway: Gateway, agent: str) -> None:
    run = asyncio.create_task(asyncio.to_thread(run_with_humans_sync, release_graph(), {}, config()))
    question = await gateway.pending_prompt(agent)
    await gateway.say(question["thread_id"], "1")
    approval = await gateway.pending_prompt(agent)
    await gateway.say(approval["thread_id"], "deny")
    final = await run
    assert final["deployed"] is False
    assert final["decision"]["by"] == f"web:{PERSON}"


async def test_nobody_to_ask_leaves_the_graph_interrupted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("THREADGATE_URL", f"http://127.0.0.1:{free_port()}")
    monkeypatch.setenv("THREADGATE_THREAD", "web:nowhere")
    graph, settings = release_graph(), config()
    with pytest.raises(HumanUnavailable):
        await run_with_humans(graph, {}, settings)
    state = await graph.aget_state(settings)
    assert [item.value["question"] for item in state.interrupts] == ["Deploy where?"]
    assert pending({"__interrupt__": state.interrupts})


def approve_edited_deploy(state: Release) -> Release:
    decision = interrupt(
        {"tool_call": {"name": "deploy", "arguments": {"target": "production"}}, "editable": True}
    )
    return {"decision": decision, "deployed": decision["approved"]}


def edit_graph() -> Any:
    graph = StateGraph(Release)
    graph.add_node("approve_deploy", approve_edited_deploy)
    graph.add_edge(START, "approve_deploy")
    graph.add_edge("approve_deploy", END)
    return graph.compile(checkpointer=InMemorySaver())


async def test_the_resume_value_carries_the_edited_call_and_the_reason(gateway: Gateway, agent: str) -> None:
    run = asyncio.create_task(run_with_humans(edit_graph(), {}, config()))
    prompt = await gateway.pending_prompt(agent)
    assert prompt["editable"] is True
    await gateway.say(prompt["thread_id"], "target: staging")
    edited = await asyncio.wait_for(run, 20)
    assert edited["decision"] == {"approved": True, "by": f"web:{PERSON}", "arguments": {"target": "staging"}}

    run = asyncio.create_task(run_with_humans(edit_graph(), {}, config()))
    await gateway.say((await gateway.pending_prompt(agent))["thread_id"], "not on a Friday")
    denied = await asyncio.wait_for(run, 20)
    assert denied["decision"] == {
        "approved": False,
        "by": f"web:{PERSON}",
        "message": f"denied in chat by web:{PERSON}: not on a Friday",
        "note": "not on a Friday",
    }


class Reviewed(TypedDict, total=False):
    calls: list[dict[str, Any]]
    rejected: list[str]


def review_tool_calls(state: Reviewed) -> Reviewed:
    """What LangChain's HumanInTheLoopMiddleware does after the model: one request for every call to
    review, then each decision applied (approve as is, edit to the edited action, reject with a message)."""
    calls = [
        {"name": "deploy", "args": {"target": "production"}},
        {"name": "migrate", "args": {"database": "orders"}},
        {"name": "notify", "args": {"channel": "#ops"}},
    ]
    request = {
        "action_requests": [{**call, "description": f"Tool: {call['name']}"} for call in calls],
        "review_configs": [
            {"action_name": "deploy", "allowed_decisions": ["approve", "edit", "reject"]},
            {"action_name": "migrate", "allowed_decisions": ["approve", "reject"]},
            {"action_name": "notify", "allowed_decisions": ["approve", "reject"]},
        ],
    }
    decisions = interrupt(request)["decisions"]
    kept, rejected = [], []
    for call, decision in zip(calls, decisions, strict=True):
        if decision["type"] == "approve":
            kept.append(call)
        elif decision["type"] == "edit":
            kept.append(decision["edited_action"])
        else:
            rejected.append(decision["message"])
    return {"calls": kept, "rejected": rejected}


async def test_a_human_in_the_loop_request_is_answered_with_its_decisions(
    gateway: Gateway, agent: str
) -> None:
    graph = StateGraph(Reviewed)
    graph.add_node("review", review_tool_calls)
    graph.add_edge(START, "review")
    graph.add_edge("review", END)
    run = asyncio.create_task(run_with_humans(graph.compile(checkpointer=InMemorySaver()), {}, config()))
    deploy = await gateway.pending_prompt(agent)
    assert (deploy["tool_call"]["name"], deploy["editable"]) == ("deploy", True)
    await gateway.say(deploy["thread_id"], "target: staging")
    migrate = await gateway.pending_prompt(agent)
    assert (migrate["tool_call"]["name"], migrate["editable"]) == ("migrate", False)
    await gateway.say(migrate["thread_id"], "after the backup finishes")
    await gateway.say((await gateway.pending_prompt(agent))["thread_id"], "approve")
    final = await asyncio.wait_for(run, 20)
    assert final["calls"] == [
        {"name": "deploy", "args": {"target": "staging"}},
        {"name": "notify", "args": {"channel": "#ops"}},
    ]
    assert final["rejected"] == [f"Not approved: denied in chat by web:{PERSON}: after the backup finishes"]


async def test_an_edit_the_review_config_does_not_allow_rejects_naming_the_edited_call(
    gateway: Gateway, agent: str
) -> None:
    await gateway.set_approval_policy(agent, {"tools": {"migrate": {"ask": "always", "edit": True}}})
    graph = StateGraph(Reviewed)
    graph.add_node("review", review_tool_calls)
    graph.add_edge(START, "review")
    graph.add_edge("review", END)
    run = asyncio.create_task(run_with_humans(graph.compile(checkpointer=InMemorySaver()), {}, config()))
    await gateway.say((await gateway.pending_prompt(agent))["thread_id"], "approve")
    await gateway.say((await gateway.pending_prompt(agent))["thread_id"], "database: orders_copy")
    await gateway.say((await gateway.pending_prompt(agent))["thread_id"], "approve")
    final = await asyncio.wait_for(run, 20)
    assert [call["name"] for call in final["calls"]] == ["deploy", "notify"]
    assert final["rejected"] == [
        f"Not run as asked: approved in chat by web:{PERSON} only as edited. "
        'Call migrate again with exactly these arguments: {"database": "orders_copy"}'
    ]


# LangChain's per-call mode (HumanInTheLoopMiddleware(interrupt_mode="per_call")): one interrupt per
# gated call, its value a ToolApprovalRequest, its response_schema the decisions the tool allows.


class ApproveDecision(Decision):
    type: Literal["approve"]


class RejectDecision(Decision):
    type: Literal["reject"]
    message: NotRequired[str]


class RespondDecision(Decision):
    type: Literal["respond"]
    message: str


class DeployArgs(BaseModel):
    target: Literal["staging", "production"]


def decision_schema(allowed: list[str], tool: str, args: type[BaseModel] | None = None) -> Any:
    """The per-call response_schema as LangChain builds it: the allowed decisions, the edit branch
    pinned to the tool and its argument model."""
    by_type: dict[str, Any] = {
        "approve": ApproveDecision,
        "reject": RejectDecision,
        "respond": RespondDecision,
    }
    if "edit" in allowed:
        action = create_model(
            "EditedAction",
            __config__=ConfigDict(extra="forbid"),
            name=(Literal[tool], ...),  # type: ignore[valid-type]
            args=(args or dict[str, Any], ...),
        )
        by_type["edit"] = create_model(
            "EditDecision",
            __config__=ConfigDict(extra="forbid"),
            type=(Literal["edit"], ...),
            edited_action=(action, ...),
        )
    members = tuple(by_type[name] for name in allowed)
    return members[0] if len(members) == 1 else Annotated[Union[members], Discriminator("type")]  # noqa: UP007


class PerCall(TypedDict, total=False):
    deploy: Any
    migrate: Any


def gated(
    key: str, tool: str, args: dict[str, Any], allowed: list[str], model: type[BaseModel] | None = None
) -> Any:
    def node(state: PerCall) -> PerCall:
        value = {"type": "tool_approval", "tool_call_id": f"call_{tool}", "name": tool, "args": args}
        value["description"] = f"Tool execution requires approval\n\nTool: {tool}\nArgs: {args}"
        decision = interrupt(value, response_schema=decision_schema(allowed, tool, model))
        return {key: decision.model_dump() if isinstance(decision, BaseModel) else decision}  # type: ignore[misc]

    return node


def per_call_graph() -> Any:
    """Two gated calls of one model turn, paused side by side as the per-call middleware pauses them."""
    graph = StateGraph(PerCall)
    graph.add_node(
        "deploy",
        gated("deploy", "deploy", {"target": "production"}, ["approve", "edit", "reject"], DeployArgs),
    )
    graph.add_node("migrate", gated("migrate", "migrate", {"database": "orders"}, ["approve", "reject"]))
    graph.add_edge(START, "deploy")
    graph.add_edge(START, "migrate")
    graph.add_edge("deploy", END)
    graph.add_edge("migrate", END)
    return graph.compile(checkpointer=InMemorySaver())


async def test_a_per_call_request_is_answered_with_one_decision_each(gateway: Gateway, agent: str) -> None:
    run = asyncio.create_task(run_with_humans(per_call_graph(), {}, config()))
    asked = {}
    for _ in range(2):
        prompt = await gateway.pending_prompt(agent)
        asked[prompt["tool_call"]["name"]] = prompt
        if prompt["tool_call"]["name"] == "deploy":
            assert prompt["tool_call"]["arguments"] == {"target": "production"}
            assert prompt["editable"] is True
            assert prompt["input_schema"]["properties"]["target"]["enum"] == ["staging", "production"]
            await gateway.say(prompt["thread_id"], "target: staging")
        else:
            assert (prompt["tool_call"]["arguments"], prompt["editable"]) == ({"database": "orders"}, False)
            await gateway.say(prompt["thread_id"], "after the backup finishes")
    final = await asyncio.wait_for(run, 20)
    assert sorted(asked) == ["deploy", "migrate"]
    assert final["deploy"] == {
        "type": "edit",
        "edited_action": {"name": "deploy", "args": {"target": "staging"}},
    }
    assert final["migrate"] == {
        "type": "reject",
        "message": f"Not approved: denied in chat by web:{PERSON}: after the backup finishes",
    }


@pytest.mark.parametrize(
    ("allowed", "editable"),
    [
        (["approve", "edit", "reject"], True),
        (["approve", "edit", "reject", "respond"], True),
        (["approve", "edit"], True),
        (["edit"], True),
        (["approve", "reject"], False),
        (["approve"], False),
        (["reject", "respond"], False),
    ],
)
async def test_a_per_call_request_is_read_from_the_interrupt_langgraph_surfaces(
    allowed: list[str], editable: bool
) -> None:
    graph = StateGraph(PerCall)
    graph.add_node("deploy", gated("deploy", "deploy", {"target": "production"}, allowed, DeployArgs))
    graph.add_edge(START, "deploy")
    graph.add_edge("deploy", END)
    (item,) = pending(await graph.compile(checkpointer=InMemorySaver()).ainvoke({}, config()))
    request = per_call_request(item.value, item.response_schema)
    assert request is not None
    assert (request.tool, request.arguments, request.editable) == (
        "deploy",
        {"target": "production"},
        editable,
    )
    if editable:
        assert request.input_schema is not None
        assert request.input_schema["properties"]["target"]["enum"] == ["staging", "production"]
    else:
        assert request.input_schema is None
    assert per_call_request({"type": "tool_approval", "name": "deploy"}).editable is False  # type: ignore[union-attr]
