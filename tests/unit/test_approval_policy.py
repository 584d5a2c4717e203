"""Seed 002's approval policy: ``{default: never|always|destructive, tools}``, decided in one function."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from gateway.base.models import ApprovalPolicy, ToolAnnotations, ToolCall
from gateway.rules.approval_policy import READ_ONLY_TOOLS, is_destructive, needs_approval

DESTRUCTIVE = ApprovalPolicy.model_validate({"default": "destructive"})


def call(name: str, **arguments: Any) -> ToolCall:
    return ToolCall(name=name, arguments=arguments)


@pytest.mark.parametrize(
    ("policy", "tool_call", "flag", "asks"),
    [
        (ApprovalPolicy(), call("Read"), None, True),
        (ApprovalPolicy.model_validate({"default": "never"}), call("Bash", command="rm -rf /"), None, False),
        (DESTRUCTIVE, call("Bash", command="ls"), None, True),
        (DESTRUCTIVE, call("github__delete_repo"), True, True),
        (DESTRUCTIVE, call("Bash", command="ls"), False, False),
        (DESTRUCTIVE, call("Read", file_path="/a"), True, True),
    ],
)
def test_the_default_decides_when_no_tool_rule_names_the_call(
    policy: ApprovalPolicy, tool_call: ToolCall, flag: bool | None, asks: bool
) -> None:
    assert needs_approval(policy, tool_call, flag) is asks


@pytest.mark.parametrize(
    ("tool_call", "destructive"),
    [
        # Built-in tools: only the short list of read-only ones is safe.
        *[(call(name), False) for name in sorted(READ_ONLY_TOOLS)],
        (call("Bash", command="ls"), True),
        (call("Write", file_path="/a", content="x"), True),
        (call("apply_patch"), True),
        (call("shell"), True),
        (call("WebFetch", url="https://example.com/?q=secret"), True),  # sends data out: not read-only
        (call("Task", prompt="clean up"), True),
        (call("search", query="x"), True),  # unknown: nothing vouches for it
        (call("read"), True),  # names are exact
        # MCP tools without annotations: MCP's defaults (not read-only, destructive).
        (call("mcp__github__list_repos"), True),
        (call("mcp__api__request", method="GET"), True),
        # OpenAPI operations: the method, a string, decides.
        (call("http", method="GET", url="/repos/x"), False),
        (call("http", method="get", url="/repos/x"), False),
        (call("http", method="HEAD"), False),
        (call("http", method="OPTIONS"), False),
        (call("http", method="DELETE", url="/repos/x"), True),
        (call("http", method="POST"), True),
        (call("Read", method="POST"), True),  # a method argument makes it an operation
        (call("http", method=["GET"]), True),
        (call("http", method={"verb": "GET"}), True),
        (call("http", method=[["GET"]]), True),
        (call("http", method=None), True),
        (call("http", method=1), True),
        (call("http", method=" GET"), True),
        (call("http", method=""), True),
    ],
)
def test_destructive_unless_something_says_the_call_only_reads(
    tool_call: ToolCall, destructive: bool
) -> None:
    assert is_destructive(tool_call) is destructive
    assert needs_approval(DESTRUCTIVE, tool_call) is destructive


@pytest.mark.parametrize(
    ("annotations", "destructive"),
    [
        ({}, True),
        ({"readOnlyHint": True}, False),
        ({"readOnlyHint": True, "destructiveHint": True}, False),  # destructiveHint counts only when writing
        ({"readOnlyHint": False}, True),
        ({"destructiveHint": False}, False),
        ({"readOnlyHint": False, "destructiveHint": False}, False),
        ({"destructiveHint": True}, True),
        ({"idempotentHint": True, "openWorldHint": False}, True),
        ({"title": "List repositories"}, True),
        ({"readonlyhint": True}, True),  # an unknown hint never makes a call safe
    ],
)
def test_mcp_annotations_follow_the_specs_defaults(annotations: dict[str, Any], destructive: bool) -> None:
    hints = ToolAnnotations.model_validate(annotations)
    for name in ("mcp__github__list_repos", "list_repos", "Read"):
        assert is_destructive(call(name), annotations=hints) is destructive


@pytest.mark.parametrize("value", ["no", "false", "true", 0, 1, "", None, [], {}])
def test_annotation_hints_are_json_booleans_only(value: Any) -> None:
    if value is None:
        assert ToolAnnotations.model_validate({"readOnlyHint": value}).read_only_hint is None
        return
    with pytest.raises(ValidationError):
        ToolAnnotations.model_validate({"readOnlyHint": value})
    with pytest.raises(ValidationError):
        ToolAnnotations.model_validate({"destructiveHint": value})


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
