"""OpenAI Agents SDK: tool calls that need approval (``needs_approval``) interrupt the run; each interruption
is asked in chat, approved or rejected on the run state, and the run resumed, as often as it stops.

Example::

    from gateway.integrations.frameworks.openai_agents import run_with_approvals

    result = await run_with_approvals(agent, "Deploy the release")

Deny rejects the call with a message saying who denied it and why, which the model reads. The SDK runs an
approved call only as the model made it, so a call a person approved with edits is rejected with a message
naming the call as edited; when the model then makes exactly that call, it is approved without asking
again (once). Nobody deciding raises HumanUnavailable and approves or rejects nothing; to keep the paused
run, call ``decide_interruptions`` on the result yourself and resume from ``result.to_state()`` later.
"""

from __future__ import annotations

from typing import Any

from agents import Agent, Runner
from agents.items import ToolApprovalItem
from agents.result import RunResult
from agents.run_state import RunState

from gateway.base.models import call_digest
from gateway.client import Approval, ApprovalDenied, Human
from gateway.integrations.frameworks.requests import (
    ApprovalRequest,
    arguments_of,
    denied_message,
    only_as_edited,
    outcome_async,
)

DEFAULT_AGENT = "openai-agents"
MAX_ROUNDS = 100


def request_of(item: ToolApprovalItem) -> ApprovalRequest:
    """The approval an interruption asks for: the tool and its parsed arguments."""
    return ApprovalRequest(item.name or "tool", arguments_of(item.arguments))


async def decide_interruptions(
    result: RunResult, human: Human, approved_as_edited: set[str] | None = None
) -> RunState[Any]:
    """Ask each of the result's interruptions in chat; the run state with each approved or rejected.

    ``approved_as_edited`` holds the digests of calls people approved only as edited: an interruption for
    exactly such a call is approved without asking (and taken out), one approved with edits is added.
    """
    edited_calls = approved_as_edited if approved_as_edited is not None else set()
    state = result.to_state()
    for item in result.interruptions:
        request = request_of(item)
        digest = call_digest(request.tool, request.arguments)
        if digest in edited_calls:
            edited_calls.discard(digest)
            state.approve(item)
            continue
        outcome = await outcome_async(human, request)
        if isinstance(outcome, ApprovalDenied):
            state.reject(item, rejection_message=denied_message(outcome))
        elif isinstance(outcome, Approval) and outcome.edited:
            edited_calls.add(call_digest(request.tool, outcome.arguments))
            state.reject(item, rejection_message=only_as_edited(request.tool, outcome))
        else:
            state.approve(item)
    return state


async def run_with_approvals(
    agent: Agent[Any], input: str | list[Any], *, human: Human | None = None, **run_args: Any
) -> RunResult:
    """``Runner.run`` that asks in chat whenever the run stops for approvals, until it finishes.

    ``run_args`` go to every ``Runner.run`` call; ``human`` defaults to ``Human.from_env("openai-agents")``.
    """
    asker = human or Human.from_env(DEFAULT_AGENT)
    approved_as_edited: set[str] = set()
    result = await Runner.run(agent, input, **run_args)
    for _ in range(MAX_ROUNDS):
        if not result.interruptions:
            return result
        state = await decide_interruptions(result, asker, approved_as_edited)
        result = await Runner.run(agent, state, **run_args)
    raise RuntimeError(f"the run still needed approvals after {MAX_ROUNDS} rounds of answers")
