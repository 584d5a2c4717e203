"""LangGraph: a graph's ``interrupt()`` payloads become prompts in chat; the answers resume it with
``Command(resume={interrupt_id: answer})``.

Example::

    from gateway.integrations.frameworks.langgraph import run_with_humans

    result = await run_with_humans(graph, {"messages": []}, {"configurable": {"thread_id": "t1"}})

Payloads the chat understands:

- a string: a free-text question; resumes with the person's text;
- ``{"question": str, "options": [str, …]}``: pick one; resumes with the chosen label (or their own words);
- ``{"tool_call": {"name": str, "arguments": {…}}, "question"?, "editable"?: bool, "input_schema"?}``:
  an approval; resumes with ``{"approved": true, "by": identity}`` (plus ``"arguments"``, the call as the
  person edited it, when they did, and ``"note"`` when they wrote one) or ``{"approved": false, "by":
  identity, "message": why, "note"?: their reason}``;
- LangChain's human-in-the-loop request (``HumanInTheLoopMiddleware``): ``{"action_requests": [{"name",
  "args"}], "review_configs": [{"action_name", "allowed_decisions", "args_schema"?}]}``: each action an
  approval (editable where ``edit`` is allowed); resumes with ``{"decisions": [...]}``: ``{"type":
  "approve"}``, ``{"type": "edit", "edited_action": {"name", "args"}}`` or ``{"type": "reject", "message":
  why}``.

Nobody answering raises HumanUnavailable and leaves the graph interrupted at its checkpoint: run it again
later. It is never resumed as a denial.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from langgraph.types import Command, Interrupt

from gateway.client import Approval, ApprovalDenied, Human
from gateway.client.human import reason_given
from gateway.integrations.frameworks.requests import (
    ApprovalRequest,
    HumanRequest,
    Outcome,
    QuestionRequest,
    arguments_of,
    denied_message,
    only_as_edited,
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
            question, schema = payload.get("question"), payload.get("input_schema")
            return ApprovalRequest(
                tool_call["name"],
                arguments_of(tool_call.get("arguments")),
                question if isinstance(question, str) else None,
                editable=payload.get("editable") is True,
                input_schema=schema if isinstance(schema, dict) else None,
            )
        if isinstance(payload.get("question"), str):
            options = [str(option) for option in payload.get("options") or []]
            return QuestionRequest(payload["question"], options or None)
    raise ValueError(
        "An interrupt payload for chat is a question string, {question, options?}, {tool_call, question?} "
        "or a human-in-the-loop request {action_requests, review_configs}"
    )


def review_requests(payload: Any) -> list[ApprovalRequest] | None:
    """The approvals a LangChain human-in-the-loop request asks for, one per action (None for any other
    payload): editable where its review config allows ``edit``, within its ``args_schema``."""
    if not isinstance(payload, dict) or not isinstance(payload.get("action_requests"), list):
        return None
    configs = {
        config["action_name"]: config
        for config in payload.get("review_configs") or []
        if isinstance(config, dict) and isinstance(config.get("action_name"), str)
    }
    requests = []
    for action in payload["action_requests"]:
        if not isinstance(action, dict) or not isinstance(action.get("name"), str):
            raise ValueError("each action of a human-in-the-loop request needs its name")
        config = configs.get(action["name"], {})
        schema = config.get("args_schema")
        requests.append(
            ApprovalRequest(
                action["name"],
                arguments_of(action.get("args", action.get("arguments"))),
                editable="edit" in (config.get("allowed_decisions") or []),
                input_schema=schema if isinstance(schema, dict) else None,
            )
        )
    return requests


def review_decision(request: ApprovalRequest, outcome: Outcome) -> dict[str, Any]:
    """A human-in-the-loop decision: approve, edit (the call as the person edited it) or reject with why.

    An edit the request did not allow (the agent's policy rule let the person edit) rejects the call as
    asked, naming the call that was approved, so the model can make that one."""
    if isinstance(outcome, ApprovalDenied):
        return {"type": "reject", "message": denied_message(outcome)}
    if isinstance(outcome, Approval) and outcome.edited:
        if request.editable:
            return {"type": "edit", "edited_action": {"name": request.tool, "args": outcome.arguments}}
        return {"type": "reject", "message": only_as_edited(request.tool, outcome)}
    return {"type": "approve"}


def pending(result: Any) -> Sequence[Interrupt]:
    """The interrupts a run stopped on (none when it finished)."""
    interrupts = result.get(INTERRUPTS) if isinstance(result, dict) else None
    return list(interrupts or [])


def resume_value(outcome: Outcome) -> Any:
    """What ``interrupt()`` returns in the graph for an outcome (see the module's list of payloads)."""
    if isinstance(outcome, ApprovalDenied):
        denied: dict[str, Any] = {"approved": False, "by": outcome.who, "message": outcome.why}
        return denied if outcome.note is None else {**denied, "note": outcome.note}
    if isinstance(outcome, Approval):
        approved: dict[str, Any] = {"approved": True, "by": outcome.by}
        if outcome.edited:
            approved["arguments"] = outcome.arguments
        note = reason_given(outcome.note)
        return approved if note is None else {**approved, "note": note}
    return outcome


async def answer_async(human: Human, payload: Any) -> Any:
    """Ask ``payload`` in chat and return the value to resume its interrupt with."""
    reviews = review_requests(payload)
    if reviews is None:
        return resume_value(await outcome_async(human, request_of(payload)))
    return {
        "decisions": [review_decision(request, await outcome_async(human, request)) for request in reviews]
    }


def answer_sync(human: Human, payload: Any) -> Any:
    """``answer_async`` for sync code."""
    reviews = review_requests(payload)
    if reviews is None:
        return resume_value(outcome_sync(human, request_of(payload)))
    return {"decisions": [review_decision(request, outcome_sync(human, request)) for request in reviews]}


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
            answers[item.id] = await answer_async(asker, item.value)
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
        answers = {item.id: answer_sync(asker, item.value) for item in interrupts}
        result = graph.invoke(Command(resume=answers), config, **invoke_args)
    raise RuntimeError(f"the graph was still interrupted after {MAX_ROUNDS} rounds of answers")
