"""``threadgate hook claude|codex``: a hook that asks in chat and prints the decision in the tool's shape.

Events: ``PermissionRequest`` (the tool is about to show its permission dialog), ``PreToolUse`` (every call,
also in headless ``claude -p`` runs) and, for Claude Code, ``Elicitation`` (an MCP server asks the user for a
form or a URL step). The agent's approval policy, kept and applied by the gateway, picks which calls are
asked in chat; the others get no decision and go on through the tool's own permission rules. When the person
cannot be asked the hook never denies: it prints nothing (the tool's own flow goes on), or for PreToolUse
``defer``/``ask`` so a person still decides (see docs/integrations.md for what each tool then does).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from gateway.client import Threadgate
from gateway.client.target import Target, session_header, session_key
from gateway.integrations import hook_output
from gateway.integrations.asking import Unavailable
from gateway.integrations.elicitation import ask_elicitation
from gateway.integrations.hook_output import Output, Tool, Unanswered
from gateway.integrations.permissions import Verdict, ask_permission
from gateway.integrations.quick_hook import MAX_INPUT_CHARS, TOOLS

EVENTS = {
    "claude": ("PermissionRequest", "PreToolUse", "Elicitation"),
    "codex": ("PermissionRequest", "PreToolUse"),  # Codex has no elicitation hook
}
DEFAULT_WAIT_S = 590.0  # just under the 600 s both tools give a command hook by default
SETUP_GRACE_S = 15.0  # on top of the wait: finding the thread and raising the prompt


@dataclass(frozen=True, slots=True)
class HookInput:
    """The fields of a hook's stdin that matter here (the rest of the event is kept in ``data``)."""

    event: str
    session_id: str
    cwd: str | None
    tool_name: str = ""
    tool_input: dict[str, Any] = field(default_factory=dict)
    tool_use_id: str | None = None
    data: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class HookOptions:
    """How the hook behaves: what PreToolUse prints when nobody decided in time."""

    unanswered: Unanswered = "defer"


def parse_hook_input(raw: str, tool: Tool = "claude") -> HookInput:
    """The hook's JSON; ValueError when it is not an event this hook handles, with the fields it needs."""
    if len(raw) > MAX_INPUT_CHARS:
        raise ValueError("the hook input is too large")
    data = json.loads(raw)
    if not isinstance(data, dict):
        raise ValueError("the hook input is not a JSON object")
    event = data.get("hook_event_name", "PermissionRequest")
    if event not in EVENTS[tool]:
        raise ValueError(f"this hook handles {', '.join(EVENTS[tool])}, not {event}")
    session, cwd = data.get("session_id"), data.get("cwd")
    hook = HookInput(
        event=event,
        session_id=session if isinstance(session, str) and session else "unknown",
        cwd=cwd if isinstance(cwd, str) else None,
        data=data,
    )
    if event == "Elicitation":
        if not isinstance(data.get("message"), str) or not isinstance(data.get("mcp_server_name"), str):
            raise ValueError("the Elicitation input has no mcp_server_name and message")
        return hook
    tool_name, tool_input = data.get("tool_name"), data.get("tool_input")
    tool_use_id = data.get("tool_use_id")
    if not isinstance(tool_name, str) or not tool_name or not isinstance(tool_input, dict):
        raise ValueError("the hook input has no tool_name and tool_input")
    return replace(
        hook,
        tool_name=tool_name,
        tool_input=tool_input,
        tool_use_id=tool_use_id if isinstance(tool_use_id, str) and tool_use_id else None,
    )


async def decide(tool: Tool, hook: HookInput, tg: Threadgate, target: Target, options: HookOptions) -> Output:
    """Ask in chat when the event calls for it and return what to print (None: nothing)."""
    product = TOOLS[tool][0]
    key = session_key(target.agent, hook.session_id)
    header = session_header(product, hook.cwd, hook.session_id)
    if hook.event == "Elicitation":
        return await ask_elicitation(tg, target, hook.data, key=key, header=header)
    if hook.event == "PreToolUse":
        verdict = await ask_permission(
            tg, target, hook.tool_name, hook.tool_input, key=key, header=header, call_id=hook.tool_use_id
        )
        if verdict.by_policy:
            return None  # the policy asks nobody: the tool's own permission rules decide
        if verdict.behavior is None:  # still open (or never asked): the fallback defers or asks
            raise Unavailable(verdict.unavailable)
        return hook_output.pre_tool_use(tool, hook.tool_name, verdict, options.unanswered)
    verdict = await ask_permission(
        tg,
        target,
        hook.tool_name,
        hook.tool_input,
        key=key,
        header=header,
        suggestions=hook.data.get("permission_suggestions"),
    )
    if verdict.by_policy:
        return None  # the policy asks nobody: the tool shows its own dialog
    if verdict.behavior is None:
        raise Unavailable(verdict.unavailable)
    return hook_output.permission_request(tool, hook.tool_name, verdict)


def fallback(tool: Tool, hook: HookInput | None, reason: str, options: HookOptions) -> Output:
    """What to print when nobody could be asked: PreToolUse keeps a person in the loop, the rest nothing.

    The policy could not be read either, so every PreToolUse call counts as one a person may need to see.
    """
    if hook is None or hook.event != "PreToolUse":
        return None
    verdict = Verdict(None, unavailable=reason)
    return hook_output.pre_tool_use(tool, hook.tool_name, verdict, options.unanswered)


async def run_hook(
    tool: Tool,
    raw: str,
    *,
    wait_s: float | None = None,
    unanswered: Unanswered | None = None,
    environ: Mapping[str, str] | None = None,
    client: Callable[[], Threadgate] = Threadgate,
    warn: Callable[[str], None] = lambda _text: None,
) -> str:
    """The hook's stdout for ``raw`` stdin: the decision JSON, or "" when the tool should go on by itself."""
    product = TOOLS[tool][0]
    hook: HookInput | None = None
    options = HookOptions() if unanswered is None else HookOptions(unanswered=unanswered)
    try:
        hook = parse_hook_input(raw, tool)
        target = Target.from_env(TOOLS[tool][1], wait_s=DEFAULT_WAIT_S, environ=environ)
        if wait_s is not None:
            target = replace(target, wait_s=wait_s)
    except ValueError as exc:
        warn(f"threadgate hook: {exc}; leaving the decision to {product}")
        return _printed(fallback(tool, hook, str(exc), options))
    deadline = None if target.wait_s is None else target.wait_s + SETUP_GRACE_S
    try:
        async with client() as tg:
            output = await asyncio.wait_for(decide(tool, hook, tg, target, options), deadline)
    except (Unavailable, ValueError, TimeoutError) as exc:
        warn(f"threadgate hook: unavailable ({exc}); {product} decides by its own rules")
        return _printed(fallback(tool, hook, str(exc) or "no answer in time", options))
    return _printed(output)


def _printed(output: Output) -> str:
    return "" if output is None else json.dumps(output, ensure_ascii=False)
