"""What a hook prints for each event, in the shape Claude Code or Codex documents; None prints nothing.

Pure functions from a verdict to JSON. The differences between the tools live here: Codex takes no
``updatedInput`` on PermissionRequest and only ``deny`` on PreToolUse (it fails open on ``allow`` and ``ask``,
and has no ``defer``), so for Codex an approval is silence and its own rules go on.
"""

from __future__ import annotations

from typing import Any, Literal

from gateway.integrations.permissions import Verdict
from gateway.integrations.prompts import ASK_USER_QUESTION, granted_message

Tool = Literal["claude", "codex"]
Unanswered = Literal["defer", "ask", "none"]
Output = dict[str, Any] | None


def permission_request(tool: Tool, tool_name: str, verdict: Verdict) -> Output:
    """``hookSpecificOutput.decision`` with ``behavior`` allow or deny; None when nobody decided."""
    if verdict.behavior is None:
        return None
    body: dict[str, Any] = {"behavior": verdict.behavior}
    if verdict.behavior == "deny":
        body["message"] = verdict.message
    else:
        # Allowed as asked: updatedInput only carries AskUserQuestion's answers (Codex refuses it outright).
        if tool == "claude" and tool_name == ASK_USER_QUESTION and verdict.updated_input is not None:
            body["updatedInput"] = verdict.updated_input
        if verdict.updated_permissions:
            body["updatedPermissions"] = verdict.updated_permissions
    return {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": body}}


def pre_tool_use(tool: Tool, tool_name: str, verdict: Verdict, unanswered: Unanswered) -> Output:
    """``hookSpecificOutput.permissionDecision``: allow (AskUserQuestion: its answers in ``updatedInput``),
    deny with the reason Claude reads, and, when nobody decided, ``defer``/``ask`` or nothing."""
    if verdict.behavior == "deny":
        return _pre_tool_use("deny", verdict.message or "Denied in chat.")
    if tool == "codex":
        return None  # Codex honours only deny here: an approval lets its own approval flow go on
    if verdict.behavior == "allow":
        reason = f"Approved in chat by {verdict.answered_by or 'a person'}."
        if verdict.grant_id is not None:
            reason = granted_message(verdict.grant_id)
        out = _pre_tool_use("allow", reason)
        if tool_name == ASK_USER_QUESTION and verdict.updated_input is not None:
            out["hookSpecificOutput"]["updatedInput"] = verdict.updated_input
        return out
    if unanswered == "defer":
        return _pre_tool_use("defer")
    if unanswered == "ask":
        why = f" ({verdict.unavailable})" if verdict.unavailable else ""
        return _pre_tool_use("ask", f"Not answered in chat{why}: confirm here.")
    return None


def _pre_tool_use(decision: str, reason: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"hookEventName": "PreToolUse", "permissionDecision": decision}
    if reason:
        body["permissionDecisionReason"] = reason
    return {"hookSpecificOutput": body}


def elicitation(action: Literal["accept", "decline", "cancel"], content: dict[str, Any] | None) -> Output:
    """``hookSpecificOutput`` with ``action``, and ``content`` (the form's values) on accept."""
    body: dict[str, Any] = {"hookEventName": "Elicitation", "action": action}
    if action == "accept" and content is not None:
        body["content"] = content
    return {"hookSpecificOutput": body}
