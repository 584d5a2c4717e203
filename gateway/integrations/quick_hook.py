"""A hook's quick answer: a tool call the agent's approval policy lets through costs one small HTTP request.

With Claude Code's headless ``PreToolUse`` matcher ``*`` every tool call of a run starts a hook process,
so the common case (a call the policy allows: ``Read``, ``Grep``, …) must cost about what starting Python
costs. This module loads nothing but the standard library and ``gateway.client.target`` (itself standard
library only): it asks ``POST /v1/agents/{agent}/policy`` and, when the policy allows the call, the hook
prints nothing and the tool goes on. Anything else (a call to ask about, a question, an elicitation, the
gateway unreachable, input it does not understand) goes the whole way, through ``gateway.integrations.hooks``,
which decides exactly as before.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from typing import Any

from gateway.client.target import DEFAULT_URL, Target

# Per tool: its product name (said in chat) and the agent its sessions belong to by default.
TOOLS: dict[str, tuple[str, str]] = {"claude": ("Claude Code", "claude-code"), "codex": ("Codex", "codex")}
MAX_INPUT_CHARS = 1_000_000
QUESTION_TOOLS = frozenset({"AskUserQuestion"})  # asked as questions, never allowed by a policy
POLICY_TIMEOUT_S = 2.0  # on a slow answer the whole path asks again, with its own deadlines


def allowed_by_policy(tool: str, raw: str, environ: Mapping[str, str] | None = None) -> bool:
    """Whether the agent's approval policy lets the call in the hook input ``raw`` run without asking.

    False whenever that is not certain: the whole path then decides (and asks the same policy first)."""
    env = os.environ if environ is None else environ
    call = _tool_call(raw)
    if call is None or tool not in TOOLS:
        return False
    try:
        agent = Target.from_env(TOOLS[tool][1], environ=env).agent
    except ValueError:
        return False
    url = (env.get("THREADGATE_URL") or DEFAULT_URL).rstrip("/")
    request = urllib.request.Request(
        f"{url}/v1/agents/{urllib.parse.quote(agent, safe='')}/policy",
        data=json.dumps({"tool_call": call}).encode(),
        headers={"Content-Type": "application/json", **_bearer(env.get("THREADGATE_TOKEN", ""))},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=POLICY_TIMEOUT_S) as response:
            verdict = json.loads(response.read(65_536))
    except (OSError, ValueError, urllib.error.URLError):
        return False
    return isinstance(verdict, dict) and verdict.get("decision") == "allow"


def _tool_call(raw: str) -> dict[str, Any] | None:
    """The tool call of a ``PreToolUse`` or ``PermissionRequest`` input; None for anything else."""
    if len(raw) > MAX_INPUT_CHARS:
        return None
    try:
        data = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    if data.get("hook_event_name", "PermissionRequest") not in ("PreToolUse", "PermissionRequest"):
        return None
    name, arguments = data.get("tool_name"), data.get("tool_input")
    if not isinstance(name, str) or not name or name in QUESTION_TOOLS or not isinstance(arguments, dict):
        return None
    return {"name": name, "arguments": arguments}


def _bearer(token: str) -> dict[str, str]:
    token = token.strip()
    return {"Authorization": f"Bearer {token}"} if token else {}
