"""Approval policies (seed 002): whether a tool call needs a person's approval, decided in one function."""

from __future__ import annotations

from fnmatch import fnmatchcase
from typing import Any

from gateway.models import ApprovalPolicy, ApprovalRule, ToolCall

# Tools that change files or run commands: destructive unless the caller says otherwise.
DESTRUCTIVE_TOOLS = frozenset({"Bash", "Write", "Edit", "MultiEdit", "NotebookEdit", "apply_patch", "shell"})
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def is_destructive(tool_call: ToolCall, destructive: bool | None = None) -> bool:
    """The caller's flag (MCP ``destructiveHint``) when given; else a known destructive tool, or an HTTP
    ``method`` argument other than GET, HEAD and OPTIONS (OpenAPI operations)."""
    if destructive is not None:
        return destructive
    if tool_call.name in DESTRUCTIVE_TOOLS:
        return True
    method: Any = tool_call.arguments.get("method")
    return isinstance(method, str) and method.strip().upper() not in SAFE_METHODS


def tool_rule(policy: ApprovalPolicy, name: str) -> str | None:
    """The rule ``tools`` sets for ``name``: its exact entry, else the longest glob matching it."""
    if name in policy.tools:
        return policy.tools[name]
    matches = [pattern for pattern in policy.tools if fnmatchcase(name, pattern)]
    return policy.tools[max(matches, key=len)] if matches else None


def needs_approval(policy: ApprovalPolicy, tool_call: ToolCall, destructive: bool | None = None) -> bool:
    """Whether a person approves ``tool_call`` first: its tool's rule, else the policy's default."""
    rule = tool_rule(policy, tool_call.name)
    if rule is not None:
        return rule == ApprovalRule.ALWAYS.value
    if policy.default is ApprovalRule.DESTRUCTIVE:
        return is_destructive(tool_call, destructive)
    return policy.default is ApprovalRule.ALWAYS
