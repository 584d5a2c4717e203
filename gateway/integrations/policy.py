"""Which tool calls a PreToolUse hook asks a person about: the approval policy of seed 002, set locally.

PreToolUse sees every call, so only the calls the policy names are asked; the rest get no decision and go on
through the tool's own permission rules. The rule is the one the gateway applies to agent definitions
(``approval.default``: ``always``, ``never`` or ``destructive``); until hooks ask the gateway's policy
(``POST /v1/runs/{run_id}/approvals``), ``--approve`` or ``THREADGATE_APPROVE`` sets it here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

Rule = Literal["always", "never", "destructive"]
RULES: tuple[Rule, ...] = ("always", "never", "destructive")
DEFAULT_RULE: Rule = "destructive"

# Seed 002's destructive calls: tools that change files or run commands, and HTTP calls that write.
DESTRUCTIVE_TOOLS = frozenset({"Bash", "Write", "Edit", "MultiEdit", "NotebookEdit", "apply_patch", "shell"})
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def is_destructive(tool_name: str, tool_input: Mapping[str, Any]) -> bool:
    """A known destructive tool, or arguments carrying an HTTP ``method`` other than GET, HEAD, OPTIONS."""
    if tool_name in DESTRUCTIVE_TOOLS:
        return True
    method = tool_input.get("method")
    return isinstance(method, str) and method.strip().upper() not in SAFE_METHODS


def needs_person(rule: Rule, tool_name: str, tool_input: Mapping[str, Any]) -> bool:
    """Whether a person approves the call first under ``rule``."""
    if rule == "destructive":
        return is_destructive(tool_name, tool_input)
    return rule == "always"


def rule_from(raw: str | None, default: Rule = DEFAULT_RULE) -> Rule:
    """``always``/``never``/``destructive`` (any case); ValueError naming the choices otherwise."""
    if raw is None or not raw.strip():
        return default
    value = raw.strip().lower()
    if value not in RULES:
        raise ValueError(f"the approval rule must be one of {', '.join(RULES)}, not {raw!r}")
    return value
