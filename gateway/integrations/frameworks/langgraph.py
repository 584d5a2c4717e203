"""LangGraph: a graph's ``interrupt()`` payloads become prompts in chat; the answers resume it with
``Command(resume={interrupt_id: answer})``.

Example::

    from gateway.integrations.frameworks.langgraph import run_with_humans

    result = await run_with_humans(graph, {"messages": []}, {"configurable": {"thread_id": "t1"}})

Payloads the chat understands:

- a string: a free-text question; resumes with the person's text;
- ``{"question": str, "options": [str, …]}``: pick one; resumes with the chosen label (or their own words);
- ``{"tool_call": {"name": str, "arguments": {…}}, "question"?: str}``: an approval; resumes with
  ``{"approved": true, "by": identity}`` or ``{"approved": false, "by": identity, "message": why}``.

Nobody answering raises HumanUnavailable and leaves the graph interrupted at its checkpoint: run it again
later. It is never resumed as a denial.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from langgraph.types import Command, Interrupt

from gateway.client import Approval, ApprovalDenied, Human
from gateway.integrations.frameworks.requests import (
    ApprovalRequest,
    HumanRequest,
    Outcome,
    QuestionRequest,
    arguments_of,
    outcome_async,
    outcome_sync,
)

DEFAULT_AGENT = "langgraph"
MAX_ROUNDS = 100
INTERRUPTS = "__interrupt__"


class Graph(Protocol):
    """A compiled graph with a checkpointer (``StateGraph(...).compile(checkpointer=...)``)."""

    def invoke(self, input: Any, config: Any = None, /, **kwargs: Any) -> Any: ...

    async def ainvoke(self, input: Any, config: Any = None, /, **kwargs: Any) -> Any: ...


def request_of(payload: Any) -> HumanRequest:
    """The prompt an interrupt payload asks for (see the module's list of payloads)."""
    if isinstance(payload, str):
        return QuestionRequest(payload)
    if isinstance(payload, dict):
        tool_call = payload.get("tool_call")
        if isinstance(tool_call, dict) and isinstance(tool_call.get("name"), str):
            question = payload.get("question")
            return ApprovalRequest(
                tool_call["name"],
                arguments_of(tool_call.get("arguments")),
                question if isinstance(question, str) else None,
            )
        if isinstance(payload.get("question"), str):
            options = [str(option) for option in payload.get("options") or []]
            return QuestionRequest(payload["question"], options or None)
    raise ValueError(
        "An interrupt payload for chat is a question string, {question, options?} or {tool_call, question?}"
    )


def pending(result: Any) -> Sequence[Interrupt]:
    """The interrupts a run stopped on (none when it finished)."""
    interrupts = result.get(INTERRUPTS) if isinstance(result, dict) else None
    return list(interrupts or [])


def resume_value(outcome: Outcome) -> Any:
    """What ``interrupt()`` returns in the graph for an outcome (see the module's list of payloads)."""
    if isinstance(outcome, ApprovalDenied):
        return {"approved": False, "by": outcome.who, "message": outcome.why}
    if isinstance(outcome, Approval):
        return {"approved": True, "by": outcome.by}
    return outcome


async def run_with_humans(
    graph: Graph, input: Any, config: Any, *, human: Human | None = None, **invoke_args: Any
) -> Any:
    """Run the graph, and each time it stops on interrupts ask each in chat and resume with the answers.

    Returns the final state. ``human`` defaults to ``Human.from_env("langgraph")``.
    """
    asker = human or Human.from_env(DEFAULT_AGENT)
    result = await graph.ainvoke(input, config, **invoke_args)
    for _ in range(MAX_ROUNDS):
        if not (interrupts := pending(result)):
            return result
        answers = {}
        for item in interrupts:
            answers[item.id] = resume_value(await outcome_async(asker, request_of(item.value)))
        result = await graph.ainvoke(Command(resume=answers), config, **invoke_args)
    raise RuntimeError(f"the graph was still interrupted after {MAX_ROUNDS} rounds of answers")


def run_with_humans_sync(
    graph: Graph, input: Any, config: Any, *, human: Human | None = None, **invoke_args: Any
) -> Any:
    """``run_with_humans`` for sync code (``graph.invoke``)."""
    asker = human or Human.from_env(DEFAULT_AGENT)
    result = graph.invoke(input, config, **invoke_args)
    for _ in range(MAX_ROUNDS):
        if not (interrupts := pending(result)):
            return result
        answers = {item.id: resume_value(outcome_sync(asker, request_of(item.value))) for item in interrupts}
        result = graph.invoke(Command(resume=answers), config, **invoke_args)
    raise RuntimeError(f"the graph was still interrupted after {MAX_ROUNDS} rounds of answers")
