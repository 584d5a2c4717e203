"""A permission request's "always allow" suggestions as choices a person can pick in chat.

Claude Code and Codex send ``permission_suggestions`` with a PermissionRequest: the options their own dialog
shows ("Yes, and don't ask again for …"). Echoing one back as ``updatedPermissions`` on an allow is the same
as picking it in the dialog, so each one the tools can take back becomes one more labelled choice.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gateway.models import MAX_DESCRIPTION_CHARS, MAX_LABEL_CHARS

MAX_SUGGESTIONS = 5
_WHERE = {
    "session": "for the rest of this session",
    "localSettings": "in this project (your local settings)",
    "projectSettings": "in this project",
    "userSettings": "in every project (your user settings)",
}
_SAVED_IN = {
    "session": "Kept until the session ends.",
    "localSettings": "Saved in .claude/settings.local.json.",
    "projectSettings": "Saved in the project's settings.",
    "userSettings": "Saved in your user settings.",
}


@dataclass(frozen=True, slots=True)
class Choice:
    """One "always" option: what the person sees, and the suggestion returned when they pick it."""

    label: str
    description: str | None
    suggestion: dict[str, Any]


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _rule_text(rule: Any) -> str | None:
    """``npm test`` for a Claude rule ``{toolName, ruleContent}``, ``git push`` for a Codex prefix rule."""
    if not isinstance(rule, dict):
        return None
    command = rule.get("command")
    if rule.get("type") == "prefixRule" and isinstance(command, list) and command:
        return f"commands starting `{' '.join(str(part) for part in command)}`"
    tool, content = rule.get("toolName"), rule.get("ruleContent")
    if isinstance(tool, str) and isinstance(content, str) and content:
        return f"`{content}`" if tool in ("Bash", "PowerShell") else f"{tool} `{content}`"
    return f"every {tool} call" if isinstance(tool, str) else None


def describe(suggestion: Any) -> tuple[str, str | None] | None:
    """The label and description of one suggestion; None for one that is not an "allow" a person can pick."""
    if not isinstance(suggestion, dict):
        return None
    kind, destination = suggestion.get("type"), suggestion.get("destination")
    where = _WHERE.get(str(destination), "")
    saved = _SAVED_IN.get(str(destination))
    if kind == "addRules" and suggestion.get("behavior", "allow") == "allow":
        rules = [_rule_text(rule) for rule in suggestion.get("rules") or []]
        if not rules or None in rules:
            return None
        return f"Always allow {', '.join(str(rule) for rule in rules)} {where}".strip(), saved
    if kind == "setMode" and isinstance(suggestion.get("mode"), str):
        return f"Allow, and switch to {suggestion['mode']} mode {where}".strip(), saved
    if kind == "addDirectories" and suggestion.get("directories"):
        folders = ", ".join(str(folder) for folder in suggestion["directories"])
        return f"Allow, and add {folders} to the working folders {where}".strip(), saved
    return None


def choices(suggestions: Any) -> list[Choice]:
    """The suggestions a person can pick, each with a distinct label, in the order the tool sent them."""
    found: list[Choice] = []
    labels: set[str] = set()
    for suggestion in suggestions if isinstance(suggestions, list) else []:
        described = describe(suggestion)
        if described is None:
            continue
        label = _clip(described[0], MAX_LABEL_CHARS)
        if label.casefold() in labels or label.casefold() in ("approve", "deny"):
            continue
        labels.add(label.casefold())
        description = _clip(described[1], MAX_DESCRIPTION_CHARS) if described[1] else None
        found.append(Choice(label, description, suggestion))
        if len(found) == MAX_SUGGESTIONS:
            break
    return found
