"""What a hook prints for each event, in the shape Claude Code or Codex documents; None prints nothing.

Pure functions from a verdict to JSON. A denial's message carries the person's reason (PermissionRequest
``message``, PreToolUse ``permissionDecisionReason``, which the model reads); an approval with edits
carries the edited call in ``updatedInput``, which replaces the tool's whole input. The differences between
the tools live here: Codex takes no ``updatedInput`` on PermissionRequest, and on PreToolUse only ``deny``
and ``allow`` with ``updatedInput`` (a rewrite of the call; it fails open on a bare ``allow`` and on ``ask``,
and has no ``defer``), so for Codex an approval as asked is silence and its own rules go on.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from gateway.base.printable import printable
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
        body["message"] = printable(verdict.message) if verdict.message else verdict.message
    elif verdict.edited and tool == "codex":
        # Codex fails closed on updatedInput here, and the call as asked was not approved: refuse it, saying
        # which call was, so the agent makes that one instead.
        return {
            "hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": _run_edited(verdict)}
        }
    else:
        # updatedInput carries the call as edited, or AskUserQuestion's answers (Codex refuses it outright).
        carries_input = verdict.edited or tool_name == ASK_USER_QUESTION
        if tool == "claude" and carries_input and verdict.updated_input is not None:
            body["updatedInput"] = verdict.updated_input
        if verdict.updated_permissions:
            body["updatedPermissions"] = verdict.updated_permissions
    return {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": body}}


def _run_edited(verdict: Verdict) -> dict[str, Any]:
    edited = json.dumps(verdict.updated_input, ensure_ascii=False, sort_keys=True)
    who = verdict.answered_by or "a person"
    message = f"Approved in chat by {who} only as edited: make the call again with exactly {edited}."
    if verdict.note:
        message += f" {verdict.note}"
    return {"behavior": "deny", "message": printable(message)}


def pre_tool_use(tool: Tool, tool_name: str, verdict: Verdict, unanswered: Unanswered) -> Output:
    """``hookSpecificOutput.permissionDecision``: allow (the edited call, or AskUserQuestion's answers, in
    ``updatedInput``; an approver's note as ``additionalContext``, which Claude reads), deny with the reason
    the model reads, and, when nobody decided, ``defer``/``ask`` or nothing."""
    if verdict.behavior == "deny":
        return _pre_tool_use("deny", verdict.message or "Denied in chat.")
    if tool == "codex":
        if verdict.behavior == "allow" and verdict.edited and verdict.updated_input is not None:
            out = _pre_tool_use("allow")  # Codex rewrites the call; its own approval flow then goes on
            out["hookSpecificOutput"]["updatedInput"] = verdict.updated_input
            return out
        return None  # Codex honours only deny here: an approval lets its own approval flow go on
    if verdict.behavior == "allow":
        reason = verdict.message or f"Approved in chat by {verdict.answered_by or 'a person'}."
        if verdict.grant_id is not None:
            reason = granted_message(verdict.grant_id)
        out = _pre_tool_use("allow", reason)
        carries_input = verdict.edited or tool_name == ASK_USER_QUESTION
        if carries_input and verdict.updated_input is not None:
            out["hookSpecificOutput"]["updatedInput"] = verdict.updated_input
        if verdict.note:
            out["hookSpecificOutput"]["additionalContext"] = printable(f"The approver's note: {verdict.note}")
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
        body["permissionDecisionReason"] = printable(reason)  # a person's words, on the agent's terminal
    return {"hookSpecificOutput": body}


def elicitation(action: Literal["accept", "decline", "cancel"], content: dict[str, Any] | None) -> Output:
    """``hookSpecificOutput`` with ``action``, and ``content`` (the form's values) on accept."""
    body: dict[str, Any] = {"hookEventName": "Elicitation", "action": action}
    if action == "accept" and content is not None:
        body["content"] = content
    return {"hookSpecificOutput": body}
