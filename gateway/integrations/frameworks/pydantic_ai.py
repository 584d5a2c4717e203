"""Pydantic AI: deferred tool calls (``requires_approval=True``, ``ApprovalRequired``, ``CallDeferred``,
external tools) become prompts in chat; the answers go back as ``DeferredToolResults``.

Inline, the run continues as soon as a person answers::

    from gateway.integrations.frameworks.pydantic_ai import ask_in_chat

    agent = Agent(model, capabilities=[ask_in_chat()])

Or between runs, with ``output_type=[str, DeferredToolRequests]``::

    results = await results_from_chat(result.output)
    result = await agent.run(message_history=result.all_messages(), deferred_tool_results=results)

Approvals become ``approval`` prompts showing the call: Approve → ``ToolApproved()`` (with
``override_args``, the call as the person edited it, when they did), Deny → ``ToolDenied`` with who denied
it and their reason. Other deferred calls are asked as questions: ``{question, options?}``
arguments are asked as they are, anything else shows the call, and the answer text is the tool's result.
A call nobody could answer is left out of the results, so it stays pending (the run ends with it in
``DeferredToolRequests``); it is never denied.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic_ai.capabilities import HandleDeferredToolCalls
from pydantic_ai.messages import ToolCallPart
from pydantic_ai.tools import DeferredToolRequests, DeferredToolResults, RunContext, ToolApproved, ToolDenied

from gateway.client import Approval, ApprovalDenied, Human, HumanUnavailable
from gateway.integrations.frameworks.requests import (
    ApprovalRequest,
    QuestionRequest,
    denied_message,
    outcome_async,
)

DEFAULT_AGENT = "pydantic-ai"
MAX_SHOWN = 600


def question_of(call: ToolCallPart) -> QuestionRequest:
    """The question a deferred (non-approval) call asks a person."""
    arguments = call.args_as_dict()
    question = arguments.get("question")
    if isinstance(question, str) and question.strip():
        options = [str(option) for option in arguments.get("options") or []]
        return QuestionRequest(question, options or None)
    shown = json.dumps(arguments, ensure_ascii=False, sort_keys=True)
    if len(shown) > MAX_SHOWN:
        shown = shown[: MAX_SHOWN - 1] + "…"
    return QuestionRequest(f"What is the result of {call.tool_name} with {shown}?")


async def results_from_chat(
    requests: DeferredToolRequests, *, human: Human | None = None, editable: bool = False
) -> DeferredToolResults:
    """Ask each pending call in chat, one after another; the results of those a person answered.

    With ``editable`` (or the agent's policy rule ``edit``) a person may edit an approval's arguments; the
    tool then runs with the edited ones."""
    asker = human or Human.from_env(DEFAULT_AGENT)
    approvals: dict[str, bool | ToolApproved | ToolDenied] = {}
    answers: dict[str, Any] = {}
    answered_by: dict[str, str] = {}
    for call in requests.approvals:
        request = ApprovalRequest(call.tool_name, call.args_as_dict(), editable=editable)
        try:
            outcome = await outcome_async(asker, request)
        except HumanUnavailable:
            continue
        if isinstance(outcome, ApprovalDenied):
            approvals[call.tool_call_id] = ToolDenied(denied_message(outcome))
            who = outcome.who
        elif isinstance(outcome, Approval):
            approvals[call.tool_call_id] = ToolApproved(
                override_args=outcome.arguments if outcome.edited else None
            )
            who = outcome.by
        else:
            approvals[call.tool_call_id] = ToolApproved()
            who = None
        if who:
            answered_by[call.tool_call_id] = who
    for call in requests.calls:
        try:
            answers[call.tool_call_id] = await outcome_async(asker, question_of(call))
        except HumanUnavailable:
            continue
    return requests.build_results(approvals=approvals, calls=answers, answered_by=answered_by)


def ask_in_chat(*, human: Human | None = None, editable: bool = False) -> HandleDeferredToolCalls[Any]:
    """A capability that answers deferred tool calls in chat during the run (see the module's example);
    ``editable`` as in ``results_from_chat``."""

    async def handle(ctx: RunContext[Any], requests: DeferredToolRequests) -> DeferredToolResults | None:
        results = await results_from_chat(requests, human=human, editable=editable)
        return results if results.approvals or results.calls else None

    return HandleDeferredToolCalls(handler=handle)
