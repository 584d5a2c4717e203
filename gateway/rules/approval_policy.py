"""Approval policies (seed 002): whether a tool call needs a person's approval, decided in one function.

Under ``default: destructive`` a call is asked about unless something says it only reads (contract §8),
checked in this order:

1. the request's ``destructive`` flag, when set, decides;
2. MCP ``annotations`` on the request, or an MCP tool (``mcp__<server>__<tool>``) without them: safe only
   with ``readOnlyHint: true`` or ``destructiveHint: false`` (MCP's defaults are not read-only, destructive);
3. arguments carrying ``method`` (an OpenAPI operation): safe only when it is the string GET, HEAD or OPTIONS;
4. anything else: safe only when the tool is one of ``READ_ONLY_TOOLS``.
"""

from __future__ import annotations

from fnmatch import fnmatchcase

from gateway.base.models import ApprovalPolicy, ApprovalRule, ToolAnnotations, ToolCall, ToolRule

# Built-in tools that only read (Claude Code's names). Everything else a tool can do may change something.
READ_ONLY_TOOLS = frozenset({"Read", "Glob", "Grep", "LS", "NotebookRead", "WebSearch", "TodoWrite"})
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
MCP_PREFIX = "mcp__"  # how Claude Code and Codex name an MCP server's tools


def is_destructive(
    tool_call: ToolCall, destructive: bool | None = None, annotations: ToolAnnotations | None = None
) -> bool:
    """Whether the call may change or delete something; any call nothing vouches for counts as one."""
    if destructive is not None:
        return destructive
    if annotations is not None or tool_call.name.startswith(MCP_PREFIX):
        return not read_only_by_annotations(annotations)
    if "method" in tool_call.arguments:
        method = tool_call.arguments["method"]
        return not (isinstance(method, str) and method.upper() in SAFE_METHODS)
    return tool_call.name not in READ_ONLY_TOOLS


def read_only_by_annotations(annotations: ToolAnnotations | None) -> bool:
    """MCP: ``destructiveHint`` (default true) counts only when ``readOnlyHint`` (default false) is false."""
    if annotations is None:
        return False
    return annotations.read_only_hint is True or annotations.destructive_hint is False


def tool_rule(policy: ApprovalPolicy, name: str) -> ToolRule | None:
    """The rule ``tools`` sets for ``name``: its exact entry, else the longest glob matching it."""
    if name in policy.tools:
        rule = policy.tools[name]
    else:
        matches = [pattern for pattern in policy.tools if fnmatchcase(name, pattern)]
        if not matches:
            return None
        rule = policy.tools[max(matches, key=len)]
    return ToolRule(ask=rule) if isinstance(rule, str) else rule


def needs_approval(
    policy: ApprovalPolicy,
    tool_call: ToolCall,
    destructive: bool | None = None,
    annotations: ToolAnnotations | None = None,
) -> bool:
    """Whether a person approves ``tool_call`` first: its tool's rule, else the policy's default."""
    rule = tool_rule(policy, tool_call.name)
    if rule is not None:
        return rule.ask == ApprovalRule.ALWAYS.value
    if policy.default is ApprovalRule.DESTRUCTIVE:
        return is_destructive(tool_call, destructive, annotations)
    return policy.default is ApprovalRule.ALWAYS
