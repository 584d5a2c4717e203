"""OpenAI Agents SDK: tool calls that need approval (``needs_approval``) interrupt the run; each interruption
is asked in chat, approved or rejected on the run state, and the run resumed, as often as it stops.

Example::

    from gateway.integrations.frameworks.openai_agents import run_with_approvals

    result = await run_with_approvals(agent, "Deploy the release")

Deny rejects the call with a message saying who denied it, which the model reads. Nobody deciding raises
HumanUnavailable and approves or rejects nothing; to keep the paused run, call ``decide_interruptions``
on the result yourself and resume from ``result.to_state()`` later.
"""

from __future__ import annotations

from typing import Any

from agents import Agent, Runner
from agents.items import ToolApprovalItem
from agents.result import RunResult
from agents.run_state import RunState

from gateway.client import ApprovalDenied, Human
from gateway.integrations.frameworks.requests import ApprovalRequest, arguments_of, outcome_async

DEFAULT_AGENT = "openai-agents"
MAX_ROUNDS = 100


def request_of(item: ToolApprovalItem) -> ApprovalRequest:
    """The approval an interruption asks for: the tool and its parsed arguments."""
    return ApprovalRequest(item.name or "tool", arguments_of(item.arguments))


async def decide_interruptions(result: RunResult, human: Human) -> RunState[Any]:
    """Ask each of the result's interruptions in chat; the run state with each approved or rejected."""
    state = result.to_state()
    for item in result.interruptions:
        outcome = await outcome_async(human, request_of(item))
        if isinstance(outcome, ApprovalDenied):
            state.reject(item, rejection_message=f"Not approved: {outcome.why}.")
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
    result = await Runner.run(agent, input, **run_args)
    for _ in range(MAX_ROUNDS):
        if not result.interruptions:
            return result
        state = await decide_interruptions(result, asker)
        result = await Runner.run(agent, state, **run_args)
    raise RuntimeError(f"the run still needed approvals after {MAX_ROUNDS} rounds of answers")
