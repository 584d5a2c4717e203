"""A real LangGraph graph whose ``interrupt()`` calls are asked in the web chat, then resumed with answers."""

from __future__ import annotations

import asyncio
from typing import Any, TypedDict

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt

from gateway.client import HumanUnavailable
from gateway.integrations.frameworks.langgraph import pending, run_with_humans, run_with_humans_sync
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
