"""A call's identity (gateway/rules/call_identity.py) for grants and decision bindings."""

from __future__ import annotations

from typing import Any

import pytest

from gateway.base.models import Prompt, ToolCall
from gateway.integrations.asking import Ask, asks_about
from gateway.rules.call_identity import identity, same_call
from gateway.rules.grants import GrantMatch, exact_match, grant_problem, matches


def call(name: str, **arguments: Any) -> ToolCall:
    return ToolCall(name=name, arguments=arguments)


@pytest.mark.parametrize(
    ("name", "first", "later"),
    [
        (
            "Bash",
            {"command": "npm test", "description": "Run the tests", "timeout": 60000},
            {"command": "npm test", "description": "Tests again", "run_in_background": True},
        ),
        (
            "shell",
            {"command": ["bash", "-lc", "npm test"], "workdir": "/srv/app", "justification": "run tests"},
            {
                "command": ["bash", "-lc", "npm test"],
                "workdir": "/srv/app",
                "timeout_ms": 1000,
                "prefix_rule": ["npm"],
            },
        ),
        (
            "shell_command",
            {"command": "npm test", "workdir": "/srv/app", "justification": "a"},
            {"command": "npm test", "workdir": "/srv/app", "justification": "b", "timeout_ms": 5},
        ),
        (
            "exec_command",
            {"cmd": "npm test", "workdir": "/srv/app", "yield_time_ms": 10, "max_output_tokens": 100},
            {"cmd": "npm test", "workdir": "/srv/app", "justification": "again"},
        ),
        (
            "local_shell",
            {
                "action": {
                    "type": "exec",
                    "command": ["npm", "test"],
                    "working_directory": "/srv",
                    "timeout_ms": 1,
                }
            },
            {"action": {"type": "exec", "command": ["npm", "test"], "working_directory": "/srv"}},
        ),
    ],
)
def test_a_command_tools_call_is_its_command_and_working_directory(
    name: str, first: dict[str, Any], later: dict[str, Any]
) -> None:
    granted, again = call(name, **first), call(name, **later)
    assert same_call(granted, again)
    assert matches(exact_match(granted), again)
    assert grant_problem(exact_match(again), granted) is None
    for key in ("command", "cmd", "action"):
        if key in first:  # another command, or the same one elsewhere, is another call
            other = {**first, key: "npm publish"}
            assert not matches(exact_match(granted), call(name, **other))
    for key in ("workdir",):
        if key in first:
            assert not matches(exact_match(granted), call(name, **{**later, key: "/"}))


@pytest.mark.parametrize(
    ("name", "arguments", "extra"),
    [
        ("Bash", {"command": "npm test"}, {"dangerouslyDisableSandbox": True}),
        ("shell", {"command": ["npm", "test"]}, {"sandbox_permissions": "require_escalated"}),
        ("shell", {"command": ["npm", "test"]}, {"with_escalated_permissions": True}),
        ("exec_command", {"cmd": "npm test"}, {"shell": "/bin/zsh"}),
        ("shell_command", {"command": "npm test"}, {"login": True}),
        ("local_shell", {"action": {"command": ["npm", "test"]}}, {"env": {"LD_PRELOAD": "/tmp/x.so"}}),
    ],
)
def test_what_changes_what_runs_stays_part_of_the_call(
    name: str, arguments: dict[str, Any], extra: dict[str, Any]
) -> None:
    plain = call(name, **arguments)
    more = call(name, **arguments, **extra)
    assert not same_call(plain, more)
    assert not matches(exact_match(plain), more)


@pytest.mark.parametrize("name", ["Write", "mcp__db__drop", "deploy", "bash"])
def test_other_tools_keep_every_argument(name: str) -> None:
    asked = call(name, command="x", description="one")
    assert identity(asked) == asked
    assert not same_call(asked, call(name, command="x", description="two"))


def test_a_grant_naming_descriptive_fields_is_kept_on_the_command() -> None:
    asked = call("Bash", command="npm test", description="Run the tests", timeout=5)
    named = GrantMatch(
        name="Bash", arguments={"command": "npm test", "description": "Run the tests", "timeout": 5}
    )
    assert grant_problem(named, asked) is None
    assert grant_problem(GrantMatch(name="Bash", arguments={"command": "npm test"}), asked) is None
    assert matches(named, call("Bash", command="npm test", description="Something else"))


def _approval(tool_call: ToolCall) -> Prompt:
    return Prompt.model_validate(
        {
            "prompt_id": "prm_01J0000000000000000000000A",
            "run_id": "run_01J0000000000000000000000A",
            "thread_id": "web:room",
            "agent": "ops",
            "kind": "approval",
            "prompt_state": "pending",
            "questions": [
                {"id": "q1", "question": "Run?", "options": [{"label": "Approve"}, {"label": "Deny"}]}
            ],
            "tool_call": tool_call.model_dump(),
            "created_at": "2026-01-01T00:00:00Z",
            "expires_at": "2026-01-08T00:00:00Z",
        }
    )


@pytest.mark.parametrize("description", ["Run the tests", "Run them again", None])
def test_a_hooks_decision_binds_to_the_command_not_its_description(description: str | None) -> None:
    prompt = _approval(call("Bash", command="npm test", description="Run the tests"))
    arguments: dict[str, Any] = {"command": "npm test"}
    if description is not None:
        arguments["description"] = description
    again = Ask("approval", [], "ops:s1", "h", {"name": "Bash", "arguments": arguments}, call_id="toolu_1")
    other = Ask("approval", [], "ops:s1", "h", {"name": "Bash", "arguments": {"command": "npm publish"}})
    assert asks_about(prompt, again)
    assert not asks_about(prompt, other)
