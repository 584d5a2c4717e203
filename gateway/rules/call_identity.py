"""What makes two tool calls the same call, for grants and for binding a decision to the call it was made on.

For most tools every argument counts. A command tool's arguments also carry words the agent writes afresh
for each call (Claude Code's ``description``), and knobs that do not change what runs (a timeout, running
in the background): those are not part of the call's identity, so a grant on ``npm test`` matches the next
``npm test`` whatever its description says. What runs does count: the command, the working directory where
the tool has one, and anything else the tool takes (sandbox escalation, a shell, an environment), including
arguments this table does not know, which count as they stand.
"""

from __future__ import annotations

from typing import Any

from gateway.base.models import ToolCall

# Per command tool, the arguments left out of its identity (they describe the call or bound its wait).
DESCRIPTIVE: dict[str, frozenset[str]] = {
    # Claude Code's Bash (also Codex's tool name in its hooks): identity {command}; a
    # dangerouslyDisableSandbox flag, when present, stays part of it.
    "Bash": frozenset({"description", "timeout", "run_in_background"}),
    # Codex's model tools: identity the command (``cmd`` for exec_command) and ``workdir``, with any
    # sandbox or shell choice; justification, suggested prefix rules and waits are left out.
    "shell": frozenset({"justification", "timeout_ms", "prefix_rule"}),
    "shell_command": frozenset({"justification", "timeout_ms", "prefix_rule"}),
    "exec_command": frozenset({"justification", "yield_time_ms", "max_output_tokens", "prefix_rule"}),
    "local_shell": frozenset({"timeout_ms"}),
}
COMMAND_TOOLS = frozenset(DESCRIPTIVE)


def identity_arguments(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """The arguments that make a call of tool ``name`` the call it is (all of them for most tools)."""
    left_out = DESCRIPTIVE.get(name)
    if not left_out:
        return arguments
    kept = {key: value for key, value in arguments.items() if key not in left_out}
    action = kept.get("action")
    if name == "local_shell" and isinstance(action, dict):  # Codex nests the exec under ``action``
        kept["action"] = {key: value for key, value in action.items() if key not in left_out}
    return kept


def identity(call: ToolCall) -> ToolCall:
    """The call as far as grants and decision bindings see it."""
    arguments = identity_arguments(call.name, call.arguments)
    return call if arguments is call.arguments else ToolCall(name=call.name, arguments=arguments)


def same_call(one: ToolCall, other: ToolCall) -> bool:
    """Whether two calls are the same call (same tool, same identity, compared by digest)."""
    return identity(one).digest() == identity(other).digest()


__all__ = ["COMMAND_TOOLS", "DESCRIPTIVE", "identity", "identity_arguments", "same_call"]
