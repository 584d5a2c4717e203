"""``threadgate hook claude|codex``: a PermissionRequest hook that asks in chat, then prints the decision.

The decision JSON has the shape each tool documents (``hookSpecificOutput.decision``). When the person
cannot be asked (gateway down, prompt not posted, no answer in time) the hook prints nothing and exits 0,
so the tool shows its own prompt: "unavailable" is never a denial.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

from gateway.client import Threadgate
from gateway.integrations.asking import Unavailable
from gateway.integrations.permissions import ask_permission
from gateway.integrations.prompts import ASK_USER_QUESTION
from gateway.integrations.sessions import session_header, session_key
from gateway.integrations.settings import Target

Tool = Literal["claude", "codex"]
TOOLS: dict[str, tuple[str, str]] = {"claude": ("Claude Code", "claude-code"), "codex": ("Codex", "codex")}
EVENT = "PermissionRequest"
MAX_INPUT_CHARS = 1_000_000
DEFAULT_WAIT_S = 590.0  # just under the 600 s both tools give a command hook by default
SETUP_GRACE_S = 15.0  # on top of the wait: finding the thread and raising the prompt


@dataclass(frozen=True, slots=True)
class HookInput:
    """The fields of a PermissionRequest hook's stdin that matter here."""

    session_id: str
    cwd: str | None
    tool_name: str
    tool_input: dict[str, Any]


def parse_hook_input(raw: str) -> HookInput:
    """The hook's JSON; ValueError when it is not a PermissionRequest with a tool name and input."""
    if len(raw) > MAX_INPUT_CHARS:
        raise ValueError("the hook input is too large")
    data = json.loads(raw)
    if not isinstance(data, dict):
        raise ValueError("the hook input is not a JSON object")
    event = data.get("hook_event_name")
    if event is not None and event != EVENT:
        raise ValueError(f"this hook handles {EVENT}, not {event}")
    tool_name, tool_input = data.get("tool_name"), data.get("tool_input")
    if not isinstance(tool_name, str) or not tool_name or not isinstance(tool_input, dict):
        raise ValueError("the hook input has no tool_name and tool_input")
    session = data.get("session_id")
    cwd = data.get("cwd")
    return HookInput(
        session_id=session if isinstance(session, str) and session else "unknown",
        cwd=cwd if isinstance(cwd, str) else None,
        tool_name=tool_name,
        tool_input=tool_input,
    )


def decision(behavior: Literal["allow", "deny"], **fields: Any) -> dict[str, Any]:
    """``{"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {...}}}``."""
    body = {"behavior": behavior, **{key: value for key, value in fields.items() if value is not None}}
    return {"hookSpecificOutput": {"hookEventName": EVENT, "decision": body}}


async def decide(tool: Tool, hook: HookInput, tg: Threadgate, target: Target) -> dict[str, Any]:
    """Ask in chat and return the decision to print; Unavailable when nobody decided."""
    product, slug = TOOLS[tool]
    verdict = await ask_permission(
        tg,
        target,
        hook.tool_name,
        hook.tool_input,
        key=session_key(slug, hook.session_id),
        header=session_header(product, hook.cwd, hook.session_id),
    )
    if verdict.behavior is None:
        raise Unavailable(verdict.unavailable)
    if verdict.behavior == "deny":
        return decision("deny", message=verdict.message)
    # An approval is allowed as asked: updatedInput (Codex refuses it) only carries AskUserQuestion answers.
    return decision(
        "allow", updatedInput=verdict.updated_input if hook.tool_name == ASK_USER_QUESTION else None
    )


async def run_hook(
    tool: Tool,
    raw: str,
    *,
    wait_s: float | None = None,
    environ: Mapping[str, str] | None = None,
    client: Callable[[], Threadgate] = Threadgate,
    warn: Callable[[str], None] = lambda _text: None,
) -> str:
    """The hook's stdout for ``raw`` stdin: the decision JSON, or "" when the tool should ask itself."""
    try:
        hook = parse_hook_input(raw)
        target = Target.from_env(TOOLS[tool][1], wait_s=DEFAULT_WAIT_S, environ=environ)
        if wait_s is not None:
            target = replace(target, wait_s=wait_s)
    except ValueError as exc:
        warn(f"threadgate hook: {exc}; leaving the decision to {TOOLS[tool][0]}")
        return ""
    deadline = None if target.wait_s is None else target.wait_s + SETUP_GRACE_S
    try:
        async with client() as tg:
            output = await asyncio.wait_for(decide(tool, hook, tg, target), deadline)
    except (Unavailable, ValueError, TimeoutError) as exc:
        warn(f"threadgate hook: unavailable ({exc}); {TOOLS[tool][0]} asks in its own prompt")
        return ""
    return json.dumps(output, ensure_ascii=False)
