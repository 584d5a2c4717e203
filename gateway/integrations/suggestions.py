"""A permission request's "always allow" suggestions as choices a person can pick in chat.

Claude Code and Codex send ``permission_suggestions`` with a PermissionRequest: the options their own dialog
shows ("Yes, and don't ask again for …"). Echoing one back as ``updatedPermissions`` on an allow is the same
as picking it in the dialog, so each one the tools can take back becomes one more labelled choice.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gateway.base.models import MAX_DESCRIPTION_CHARS, MAX_LABEL_CHARS

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


# The fields of each kind a person can pick; a suggestion with any other field is not offered, because
# the person would not see what it does.
_FIELDS = {
    "addRules": frozenset({"type", "rules", "behavior", "destination"}),
    "setMode": frozenset({"type", "mode", "destination"}),
    "addDirectories": frozenset({"type", "directories", "destination"}),
}
_CLAUDE_RULE_FIELDS = frozenset({"toolName", "ruleContent"})
_CODEX_RULE_FIELDS = frozenset({"type", "command"})


@dataclass(frozen=True, slots=True)
class Choice:
    """One "always" option: what the person sees, and the suggestion returned when they pick it.

    ``full`` is everything the suggestion does, every rule and where it is kept; ``label`` may be a cut of
    it (labels are short), and then the prompt shows ``full`` beside the options.
    """

    label: str
    description: str | None
    suggestion: dict[str, Any]
    full: str

    @property
    def clipped(self) -> bool:
        """Whether the label and description leave out part of what the suggestion does."""
        return self.full != f"{self.label}. {self.description}"


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _strings(value: Any) -> list[str] | None:
    if not isinstance(value, list) or not value or not all(isinstance(item, str) for item in value):
        return None
    return value


def _rule_text(rule: Any) -> str | None:
    """``npm test`` for a Claude rule ``{toolName, ruleContent}``, ``git push`` for a Codex prefix rule; None
    for a rule with anything else in it."""
    if not isinstance(rule, dict):
        return None
    if rule.get("type") == "prefixRule":
        command = _strings(rule.get("command"))
        if command is None or set(rule) - _CODEX_RULE_FIELDS:
            return None
        return f"commands starting `{' '.join(command)}`"
    tool, content = rule.get("toolName"), rule.get("ruleContent", "")
    if (
        not isinstance(tool, str)
        or not tool
        or not isinstance(content, str)
        or set(rule) - _CLAUDE_RULE_FIELDS
    ):
        return None
    if not content:
        return f"every {tool} call"
    return f"`{content}`" if tool in ("Bash", "PowerShell") else f"{tool} `{content}`"


def describe(suggestion: Any) -> tuple[str, str] | None:
    """The whole label and description of one suggestion: every rule, folder or mode, and where it is kept.
    None for one that is not an "allow" a person can pick, or that carries anything the words would not
    show."""
    if not isinstance(suggestion, dict):
        return None
    kind, destination = suggestion.get("type"), suggestion.get("destination")
    fields = _FIELDS.get(str(kind))
    if fields is None or set(suggestion) - fields or destination not in _WHERE:
        return None
    where, saved = _WHERE[destination], _SAVED_IN[destination]
    if kind == "addRules" and suggestion.get("behavior", "allow") == "allow":
        rules = suggestion.get("rules")
        texts = [_rule_text(rule) for rule in rules] if isinstance(rules, list) and rules else [None]
        if None in texts:
            return None
        return f"Always allow {', '.join(str(text) for text in texts)} {where}", saved
    if kind == "setMode" and isinstance(suggestion.get("mode"), str) and suggestion["mode"]:
        return f"Allow, and switch to {suggestion['mode']} mode {where}", saved
    folders = _strings(suggestion.get("directories"))
    if kind == "addDirectories" and folders is not None:
        return f"Allow, and add {', '.join(folders)} to the working folders {where}", saved
    return None


def choices(suggestions: Any) -> list[Choice]:
    """The suggestions a person can pick, each with a distinct label, in the order the tool sent them."""
    found: list[Choice] = []
    labels: set[str] = set()
    for suggestion in suggestions if isinstance(suggestions, list) else []:
        described = describe(suggestion)
        if described is None:
            continue
        text, saved = described
        label = _clip(text, MAX_LABEL_CHARS)
        if label.casefold() in labels or label.casefold() in ("approve", "deny"):
            continue
        labels.add(label.casefold())
        found.append(Choice(label, _clip(saved, MAX_DESCRIPTION_CHARS), suggestion, f"{text}. {saved}"))
        if len(found) == MAX_SUGGESTIONS:
            break
    return found
