"""What the hooks print, event by event and tool by tool, checked against the tools' published schemas."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest

from gateway.cli import build_parser
from gateway.integrations import hook_output
from gateway.integrations.elicitation import elicitation_request
from gateway.integrations.hooks import EVENTS
from gateway.integrations.permissions import Verdict
from gateway.integrations.prompts import approval_choices
from gateway.integrations.suggestions import choices
from tests.integrations.schemas import FIXTURES, check_output

EXAMPLES = Path(__file__).parents[2] / "examples"
ALWAYS_NPM = {
    "type": "addRules",
    "rules": [{"toolName": "Bash", "ruleContent": "npm test"}],
    "behavior": "allow",
    "destination": "projectSettings",
}
CODEX_PREFIX = {
    "type": "addRules",
    "rules": [{"type": "prefixRule", "command": ["git", "push"]}],
    "behavior": "allow",
    "destination": "projectSettings",
}
ALLOW = Verdict("allow", updated_input={"command": "npm test"}, answered_by="web:alice")
DENY = Verdict("deny", message="Denied in chat by web:alice.")
NOBODY = Verdict(None, unavailable="nobody answered within 590 s")


@pytest.mark.parametrize(
    "sample",
    ["pre_tool_use.output.json", "permission_request.output.json", "elicitation.output.json"],
)
def test_the_references_own_samples_fit_the_claude_schema(sample: str) -> None:
    event = json.loads((FIXTURES / "claude" / sample).read_text())["hookSpecificOutput"]["hookEventName"]
    check_output("claude", event, json.loads((FIXTURES / "claude" / sample).read_text()))


@pytest.mark.parametrize(
    ("tool", "verdict", "expected"),
    [
        ("claude", ALLOW, {"behavior": "allow"}),
        ("claude", DENY, {"behavior": "deny", "message": "Denied in chat by web:alice."}),
        ("codex", DENY, {"behavior": "deny", "message": "Denied in chat by web:alice."}),
        (
            "claude",
            Verdict("allow", updated_permissions=[ALWAYS_NPM]),
            {"behavior": "allow", "updatedPermissions": [ALWAYS_NPM]},
        ),
        (
            "codex",
            Verdict("allow", updated_permissions=[CODEX_PREFIX]),
            {"behavior": "allow", "updatedPermissions": [CODEX_PREFIX]},
        ),
    ],
)
def test_permission_request_decisions(tool: str, verdict: Verdict, expected: dict[str, Any]) -> None:
    output = hook_output.permission_request(tool, "Bash", verdict)  # type: ignore[arg-type]
    assert output == {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": expected}}
    check_output(tool, "PermissionRequest", output)


def test_codex_never_gets_updated_input_on_permission_request() -> None:
    verdict = Verdict("allow", updated_input={"questions": [], "answers": {}})
    output = hook_output.permission_request("codex", "AskUserQuestion", verdict)
    assert output is not None
    assert "updatedInput" not in output["hookSpecificOutput"]["decision"]


def test_nobody_deciding_prints_nothing_on_permission_request() -> None:
    assert hook_output.permission_request("claude", "Bash", NOBODY) is None


@pytest.mark.parametrize(
    ("verdict", "unanswered", "decision", "reason"),
    [
        (ALLOW, "defer", "allow", "Approved in chat by web:alice."),
        (DENY, "defer", "deny", "Denied in chat by web:alice."),
        (NOBODY, "defer", "defer", None),
        (NOBODY, "ask", "ask", "Not answered in chat (nobody answered within 590 s): confirm here."),
    ],
)
def test_claude_pre_tool_use_decisions(
    verdict: Verdict, unanswered: Any, decision: str, reason: str | None
) -> None:
    output = hook_output.pre_tool_use("claude", "Bash", verdict, unanswered)
    assert output is not None
    body = output["hookSpecificOutput"]
    assert (body["permissionDecision"], body.get("permissionDecisionReason")) == (decision, reason)
    assert "updatedInput" not in body  # an approval runs the call exactly as asked
    check_output("claude", "PreToolUse", output)


def test_claude_pre_tool_use_answers_ask_user_question_in_updated_input() -> None:
    answered = Verdict("allow", updated_input={"questions": [], "answers": {"Which?": "React"}})
    output = hook_output.pre_tool_use("claude", "AskUserQuestion", answered, "defer")
    assert output is not None
    assert output["hookSpecificOutput"]["updatedInput"] == {"questions": [], "answers": {"Which?": "React"}}
    check_output("claude", "PreToolUse", output)


@pytest.mark.parametrize(("verdict", "printed"), [(ALLOW, False), (NOBODY, False), (DENY, True)])
def test_codex_pre_tool_use_only_ever_denies(verdict: Verdict, printed: bool) -> None:
    output = hook_output.pre_tool_use("codex", "Bash", verdict, "defer")
    assert (output is not None) is printed
    if output is not None:
        assert output["hookSpecificOutput"]["permissionDecision"] == "deny"
        check_output("codex", "PreToolUse", output)


EDITED = Verdict(
    "allow",
    updated_input={"command": "npm test -- --bail"},
    message='Approved in chat by web:alice, edited to {"command": "npm test -- --bail"}.',
    answered_by="web:alice",
    edited=True,
)
DENY_WHY = Verdict(
    "deny", message="Denied in chat by web:alice: run the unit tests only", note="run the unit tests only"
)


@pytest.mark.parametrize("tool", ["claude", "codex"])
def test_a_deny_with_a_reason_carries_it_where_the_model_reads_it(tool: Any) -> None:
    request = hook_output.permission_request(tool, "Bash", DENY_WHY)
    pre = hook_output.pre_tool_use(tool, "Bash", DENY_WHY, "defer")
    assert request is not None and pre is not None
    assert request["hookSpecificOutput"]["decision"]["message"].endswith(": run the unit tests only")
    assert pre["hookSpecificOutput"]["permissionDecisionReason"].endswith(": run the unit tests only")
    check_output(tool, "PermissionRequest", request)
    check_output(tool, "PreToolUse", pre)


def test_claude_runs_the_call_as_edited_in_updated_input() -> None:
    request = hook_output.permission_request("claude", "Bash", EDITED)
    pre = hook_output.pre_tool_use("claude", "Bash", EDITED, "defer")
    assert request == {
        "hookSpecificOutput": {
            "hookEventName": "PermissionRequest",
            "decision": {"behavior": "allow", "updatedInput": {"command": "npm test -- --bail"}},
        }
    }
    assert pre == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "allow",
            "permissionDecisionReason": EDITED.message,
            "updatedInput": {"command": "npm test -- --bail"},
        }
    }
    check_output("claude", "PermissionRequest", request)
    check_output("claude", "PreToolUse", pre)


def test_codex_rewrites_an_edited_call_on_pre_tool_use_and_refuses_it_as_asked_on_permission_request() -> (
    None
):
    pre = hook_output.pre_tool_use("codex", "Bash", EDITED, "defer")
    assert pre == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "allow",
            "updatedInput": {"command": "npm test -- --bail"},
        }
    }
    check_output("codex", "PreToolUse", pre)
    request = hook_output.permission_request("codex", "Bash", EDITED)
    assert request is not None
    decision = request["hookSpecificOutput"]["decision"]
    assert decision == {
        "behavior": "deny",
        "message": "Approved in chat by web:alice only as edited: make the call again with exactly "
        '{"command": "npm test -- --bail"}.',
    }
    check_output("codex", "PermissionRequest", request)


def test_an_approvers_note_reaches_claude_as_additional_context() -> None:
    noted = Verdict(
        "allow", updated_input={"command": "npm test"}, answered_by="web:alice", note="watch the logs"
    )
    output = hook_output.pre_tool_use("claude", "Bash", noted, "defer")
    assert output is not None
    assert output["hookSpecificOutput"]["additionalContext"] == "The approver's note: watch the logs"
    assert "updatedInput" not in output["hookSpecificOutput"]  # approved as asked
    check_output("claude", "PreToolUse", output)


@pytest.mark.parametrize(
    ("action", "content", "expected"),
    [
        ("accept", {"username": "alice"}, {"action": "accept", "content": {"username": "alice"}}),
        ("accept", None, {"action": "accept"}),
        ("decline", {"ignored": True}, {"action": "decline"}),
        ("cancel", None, {"action": "cancel"}),
    ],
)
def test_elicitation_outputs(action: Any, content: Any, expected: dict[str, Any]) -> None:
    output = hook_output.elicitation(action, content)
    assert output == {"hookSpecificOutput": {"hookEventName": "Elicitation", **expected}}
    check_output("claude", "Elicitation", output)


def test_suggestions_become_labelled_choices() -> None:
    offered = choices(
        [
            ALWAYS_NPM,
            CODEX_PREFIX,
            {"type": "setMode", "mode": "acceptEdits", "destination": "session"},
            {
                "type": "addRules",
                "rules": [{"toolName": "Bash"}],
                "behavior": "deny",
                "destination": "session",
            },
            "not a suggestion",
        ]
    )
    assert [(choice.label, choice.description) for choice in offered] == [
        ("Always allow `npm test` in this project", "Saved in the project's settings."),
        ("Always allow commands starting `git push` in this project", "Saved in the project's settings."),
        (
            "Allow, and switch to acceptEdits mode for the rest of this session",
            "Kept until the session ends.",
        ),
    ]
    assert offered[0].suggestion is ALWAYS_NPM


@pytest.mark.parametrize(
    "suggestion",
    [
        {**ALWAYS_NPM, "destination": "policySettings"},  # nowhere the person is told about
        {key: value for key, value in ALWAYS_NPM.items() if key != "destination"},
        {**ALWAYS_NPM, "hidden": {"allow": ["Bash"]}},
        {**ALWAYS_NPM, "rules": [{"toolName": "Bash", "ruleContent": "npm test", "scope": "global"}]},
        {**ALWAYS_NPM, "rules": [{"toolName": "Bash", "ruleContent": 7}]},
        {**ALWAYS_NPM, "rules": []},
        {**CODEX_PREFIX, "rules": [{"type": "prefixRule", "command": ["git", {"push": True}]}]},
        {"type": "addDirectories", "directories": ["/srv", 7], "destination": "session"},
        {"type": "setMode", "mode": "", "destination": "session"},
        {
            "type": "replaceRules",
            "rules": [{"toolName": "Bash"}],
            "behavior": "allow",
            "destination": "session",
        },
    ],
)
def test_a_suggestion_whose_words_would_not_show_everything_it_does_is_not_offered(
    suggestion: dict[str, Any],
) -> None:
    assert choices([suggestion]) == []


def test_a_long_suggestion_is_spelled_out_in_full_under_the_question() -> None:
    long_rule = "npm run " + "x" * 292
    wide = {
        "type": "addRules",
        "rules": [{"toolName": "Bash", "ruleContent": long_rule}, {"toolName": "Bash"}],
        "behavior": "allow",
        "destination": "userSettings",
    }
    offered = choices([ALWAYS_NPM, wide])
    questions, kept = approval_choices([{"question": "Allow Bash to run `npm test`?"}], offered)
    assert kept == offered
    text = questions[0]["question"]
    assert text.startswith("Allow Bash to run `npm test`?\n\nThe choices in full:\n3. Always allow ")
    assert f"`{long_rule}`, every Bash call in every project (your user settings)" in text
    assert "Saved in your user settings." in text
    assert "2. " not in text  # the short one's label already says it all
    labels = [option["label"] for option in questions[0]["options"]]
    assert labels[2] == kept[1].label and len(labels[2]) <= 100


def test_a_suggestion_too_long_to_show_in_full_is_not_offered() -> None:
    huge = {**ALWAYS_NPM, "rules": [{"toolName": "Bash", "ruleContent": "x" * 3000}]}
    offered = choices([huge, ALWAYS_NPM])
    questions, kept = approval_choices([{"question": "Allow Bash to run `npm test`?"}], offered)
    assert [choice.suggestion for choice in kept] == [ALWAYS_NPM]
    assert [option["label"] for option in questions[0]["options"]] == [
        "Approve",
        "Always allow `npm test` in this project",
        "Deny",
    ]
    assert questions[0]["question"] == "Allow Bash to run `npm test`?"


@pytest.mark.parametrize(
    "example", sorted(EXAMPLES.glob("*hooks.json")) + sorted(EXAMPLES.glob("claude-code*.json"))
)
def test_every_example_hook_runs_a_command_this_cli_accepts_for_an_event_it_handles(example: Path) -> None:
    hooks = json.loads(example.read_text())["hooks"]
    for event, groups in hooks.items():
        for group in groups:
            for hook in group["hooks"]:
                program, *argv = shlex.split(hook["command"])
                args = build_parser().parse_args(argv)
                assert program == "threadgate"
                assert event in EVENTS[args.tool]
                assert hook["timeout"] > float(
                    argv[argv.index("--wait") + 1]
                )  # the hook withdraws itself first


def test_a_form_elicitation_becomes_a_form_prompt_naming_the_server() -> None:
    data = json.loads((FIXTURES / "claude" / "elicitation_form.input.json").read_text())
    request = elicitation_request(data, key="claude-code:abc123", header="Claude Code in x, session abc123")
    assert (request.kind, request.body) == (
        "form",
        {
            "message": "Please provide your credentials\n(asked by my-mcp-server)",
            "requested_schema": data["requested_schema"],
        },
    )


def test_a_url_elicitation_becomes_a_url_step() -> None:
    data = json.loads((FIXTURES / "claude" / "elicitation_url.input.json").read_text())
    request = elicitation_request(data, key="k", header="h")
    assert (request.kind, request.body) == (
        "url",
        {"message": "Please authenticate\n(asked by my-mcp-server)", "url": "https://auth.example.com/login"},
    )


@pytest.mark.parametrize(
    "data",
    [
        {"mcp_server_name": "s", "message": "m", "mode": "url"},
        {"mcp_server_name": "s", "message": "m", "mode": "form"},
        {"mcp_server_name": "s", "message": "m", "mode": "carrier pigeon", "url": "https://x"},
    ],
)
def test_an_elicitation_missing_its_url_or_schema_is_refused(data: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        elicitation_request(data, key="k", header="h")
