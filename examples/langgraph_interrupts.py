"""A LangGraph graph that asks where to deploy and for approval with ``interrupt()``, answered in chat.

Run a gateway (``threadgate serve``), then::

    export THREADGATE_URL=http://127.0.0.1:8787 THREADGATE_TOKEN=<an agent token>
    export THREADGATE_SESSION_CHANNEL=slack:C0456     # or telegram:-100123, discord:<id>, web:ops
    export THREADGATE_STARTED_BY=slack:U0123ABC      # who may answer (plus the agent's approvers)
    pip install 'threadgate[langgraph]'
    python examples/langgraph_interrupts.py

No model is involved: the graph's own nodes ask.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any, TypedDict

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt

from gateway.integrations.frameworks.langgraph import run_with_humans


class Release(TypedDict, total=False):
    target: str
    decision: dict[str, Any]


def choose_target(state: Release) -> Release:
    # A question with options; the answer is the chosen label (or the person's own words).
    return {"target": interrupt({"question": "Deploy where?", "options": ["staging", "production"]})}


def approve_deploy(state: Release) -> Release:
    # An approval showing the real call; the answer is {"approved", "by", "message"?}.
    call = {"name": "deploy", "arguments": {"target": state["target"]}}
    return {"decision": interrupt({"tool_call": call})}


async def main() -> None:
    graph = StateGraph(Release)
    graph.add_node("choose_target", choose_target)
    graph.add_node("approve_deploy", approve_deploy)
    graph.add_edge(START, "choose_target")
    graph.add_edge("choose_target", "approve_deploy")
    graph.add_edge("approve_deploy", END)
    compiled = graph.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": uuid.uuid4().hex}}
    final = await run_with_humans(compiled, {}, config)
    verdict = "approved" if final["decision"]["approved"] else "denied"
    print(f"Deploy to {final['target']}: {verdict} by {final['decision']['by']}")


if __name__ == "__main__":
    asyncio.run(main())
