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
  why}``;
- its per-call request (``HumanInTheLoopMiddleware(interrupt_mode="per_call")``): ``{"type":
  "tool_approval", "tool_call_id", "name", "args", "description"}``, one interrupt per call: an approval,
  editable where the interrupt's ``response_schema`` allows ``edit`` (its edited arguments held to the
  tool's argument schema there); resumes with that one decision, shaped as above.

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


def allowed_decisions(response_schema: Any) -> list[str]:
    """The decision types an interrupt's ``response_schema`` (JSON Schema, as LangGraph surfaces it)
    accepts: the discriminator's mapping of a union, or the one ``type`` constant of a single decision."""
    if not isinstance(response_schema, dict):
        return []
    mapping = (response_schema.get("discriminator") or {}).get("mapping")
    if isinstance(mapping, dict):
        return [str(name) for name in mapping]
    kind = (response_schema.get("properties") or {}).get("type") or {}
    return [kind["const"]] if isinstance(kind, dict) and isinstance(kind.get("const"), str) else []


def _resolved(schema: Any, definitions: dict[str, Any]) -> Any:
    """``schema``, or the definition its local ``#/$defs/…`` reference names."""
    reference = schema.get("$ref") if isinstance(schema, dict) else None
    if isinstance(reference, str) and reference.startswith("#/$defs/"):
        return definitions.get(reference.removeprefix("#/$defs/"))
    return schema


def edit_schema(response_schema: Any) -> dict[str, Any] | None:
    """The arguments an ``edit`` decision may carry, as a JSON Schema the gateway checks edits against
    (the tool's own argument schema, with the definitions it refers to); None when it names no fields."""
    if not isinstance(response_schema, dict):
        return None
    definitions = response_schema.get("$defs") or {}
    edit = (response_schema.get("discriminator") or {}).get("mapping", {}).get("edit")
    decision = _resolved({"$ref": edit} if isinstance(edit, str) else response_schema, definitions)
    action = _resolved(((decision or {}).get("properties") or {}).get("edited_action"), definitions)
    arguments = _resolved(((action or {}).get("properties") or {}).get("args"), definitions)
    if not isinstance(arguments, dict) or not arguments.get("properties"):
        return None
    return {**arguments, "$defs": definitions} if definitions else arguments


def per_call_request(payload: Any, response_schema: Any = None) -> ApprovalRequest | None:
    """The approval a LangChain per-call request asks for (None for any other payload): editable where
    the interrupt's ``response_schema`` allows ``edit``."""
    if not isinstance(payload, dict) or payload.get("type") != "tool_approval":
        return None
    if not isinstance(payload.get("name"), str):
        raise ValueError("a per-call tool approval request needs the tool's name")
    editable = "edit" in allowed_decisions(response_schema)
    return ApprovalRequest(
        payload["name"],
        arguments_of(payload.get("args")),
        editable=editable,
        input_schema=edit_schema(response_schema) if editable else None,
    )


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


def _response_schema(item: Interrupt) -> Any:
    """What the interrupt says its answer must look like (LangGraph releases before it say nothing)."""
    return getattr(item, "response_schema", None)


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


async def answer_async(human: Human, payload: Any, response_schema: Any = None) -> Any:
    """Ask ``payload`` in chat and return the value to resume its interrupt with (``response_schema``: the
    interrupt's, which says what a per-call request allows)."""
    if (single := per_call_request(payload, response_schema)) is not None:
        return review_decision(single, await outcome_async(human, single))
    reviews = review_requests(payload)
    if reviews is None:
        return resume_value(await outcome_async(human, request_of(payload)))
    return {
        "decisions": [review_decision(request, await outcome_async(human, request)) for request in reviews]
    }


def answer_sync(human: Human, payload: Any, response_schema: Any = None) -> Any:
    """``answer_async`` for sync code."""
    if (single := per_call_request(payload, response_schema)) is not None:
        return review_decision(single, outcome_sync(human, single))
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
            answers[item.id] = await answer_async(asker, item.value, _response_schema(item))
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
        answers = {item.id: answer_sync(asker, item.value, _response_schema(item)) for item in interrupts}
        result = graph.invoke(Command(resume=answers), config, **invoke_args)
    raise RuntimeError(f"the graph was still interrupted after {MAX_ROUNDS} rounds of answers")
