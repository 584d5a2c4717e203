"""A Claude Agent SDK ``can_use_tool`` callback that asks a person in chat, returning the SDK's own results.

Example::

    from claude_agent_sdk import ClaudeAgentOptions, ClaudeSDKClient

    from gateway.integrations.claude_agent_sdk import gateway_can_use_tool

    options = ClaudeAgentOptions(can_use_tool=gateway_can_use_tool())

Approvals become ``approval`` prompts showing the real call, unless the agent's approval policy allows the
call (then it is allowed without asking); ``AskUserQuestion`` becomes an ``ask_user_question`` prompt whose
answers go back in ``updated_input``. When nobody could be asked, the call is refused with a message that
says so ("Approval unavailable"), never as a person's denial.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable
from typing import Any

from claude_agent_sdk import (
    CanUseTool,
    PermissionResult,
    PermissionResultAllow,
    PermissionResultDeny,
    PermissionUpdate,
    ToolPermissionContext,
)

from gateway.client import Threadgate
from gateway.client.target import Target, session_header, session_key
from gateway.integrations.permissions import ask_permission


def gateway_can_use_tool(
    target: Target | None = None,
    *,
    session_id: str | None = None,
    product: str = "Claude Agent SDK",
    cwd: str | None = None,
    client: Callable[[], Threadgate] = Threadgate,
) -> CanUseTool:
    """A ``can_use_tool`` callback for ``ClaudeAgentOptions``. One callback is one agent session (one thread).

    ``target`` defaults to the environment (``THREADGATE_SESSION_CHANNEL`` or ``THREADGATE_THREAD``,
    ``THREADGATE_AGENT``, ``THREADGATE_STARTED_BY``, ``THREADGATE_WAIT_SECONDS``); ``client`` makes the
    gateway client (``THREADGATE_URL``, ``THREADGATE_TOKEN``).
    """
    settings = target or Target.from_env("claude-agent-sdk")
    session = session_id or uuid.uuid4().hex[:12]
    key = session_key(settings.agent, session)
    header = session_header(product, cwd or os.getcwd(), session)

    async def can_use_tool(
        tool_name: str, tool_input: dict[str, Any], context: ToolPermissionContext
    ) -> PermissionResult:
        offered = _wire_forms(context.suggestions)
        async with client() as tg:
            verdict = await ask_permission(
                tg,
                settings,
                tool_name,
                tool_input,
                key=key,
                header=header,
                suggestions=[w for w, _ in offered],
            )
        if verdict.by_policy:  # the SDK wants an answer: the policy's is to let the call run as it stands
            return PermissionResultAllow(updated_input=tool_input)
        if verdict.behavior == "allow":
            # The verdict hands back the very wire form the person picked: map it to the SDK's object.
            chosen = verdict.updated_permissions or []
            picked = [update for wire, update in offered if any(wire is entry for entry in chosen)]
            return PermissionResultAllow(
                updated_input=verdict.updated_input, updated_permissions=picked or None
            )
        if verdict.behavior == "deny":
            return PermissionResultDeny(message=verdict.message or "Denied in chat.")
        return PermissionResultDeny(message=verdict.unavailable_message(tool_name))

    return can_use_tool


def _wire_forms(suggestions: list[PermissionUpdate]) -> list[tuple[dict[str, Any], PermissionUpdate]]:
    """Each suggestion with its wire form (what a hook would receive), skipping any the CLI cannot take."""
    forms = []
    for suggestion in suggestions:
        try:
            forms.append((suggestion.to_dict(), suggestion))
        except ValueError:
            continue
    return forms
