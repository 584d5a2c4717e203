"""Seed 002's approval policy: ``{default: never|always|destructive, tools}``, decided in one function."""

from __future__ import annotations

from typing import Any

import pytest

from gateway.approval_policy import needs_approval
from gateway.models import ApprovalPolicy, ToolCall

DESTRUCTIVE = ApprovalPolicy.model_validate({"default": "destructive"})


def call(name: str, **arguments: Any) -> ToolCall:
    return ToolCall(name=name, arguments=arguments)


@pytest.mark.parametrize(
    ("policy", "tool_call", "flag", "asks"),
    [
        (ApprovalPolicy(), call("search"), None, True),
        (ApprovalPolicy.model_validate({"default": "never"}), call("Bash", command="rm -rf /"), None, False),
        (DESTRUCTIVE, call("search", query="x"), None, False),
        (DESTRUCTIVE, call("Bash", command="ls"), None, True),
        (DESTRUCTIVE, call("apply_patch"), None, True),
        (DESTRUCTIVE, call("http", method="DELETE", url="/repos/x"), None, True),
        (DESTRUCTIVE, call("http", method="get", url="/repos/x"), None, False),
        (DESTRUCTIVE, call("http", method="OPTIONS"), None, False),
        (DESTRUCTIVE, call("github__delete_repo"), True, True),
        (DESTRUCTIVE, call("Bash", command="ls"), False, False),
    ],
)
def test_the_default_decides_when_no_tool_rule_names_the_call(
    policy: ApprovalPolicy, tool_call: ToolCall, flag: bool | None, asks: bool
) -> None:
    assert needs_approval(policy, tool_call, flag) is asks


@pytest.mark.parametrize(
    ("tools", "name", "asks"),
    [
        ({"delete_repo": "always"}, "delete_repo", True),
        ({"github__*": "never"}, "github__delete_repo", False),
        ({"github__*": "never", "github__delete_*": "always"}, "github__delete_repo", True),
        ({"github__*": "always", "github__delete_repo": "never"}, "github__delete_repo", False),
        ({"github__*": "always"}, "search", False),
    ],
)
def test_a_tool_rule_beats_the_default_and_the_longest_glob_wins(
    tools: dict[str, str], name: str, asks: bool
) -> None:
    policy = ApprovalPolicy.model_validate({"default": "never", "tools": tools})
    assert needs_approval(policy, call(name)) is asks
