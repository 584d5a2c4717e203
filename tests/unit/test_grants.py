"""The grant pattern rule (gateway/rules/grants.py): one tool, every argument named, exact values, and widened
commands that never reach a second command."""

from __future__ import annotations

from typing import Any

import pytest

from gateway.base.models import ToolCall
from gateway.rules.grants import (
    GrantMatch,
    exact_match,
    first_word,
    grant_problem,
    matches,
    widened_match,
)


def call(name: str = "Bash", **arguments: Any) -> ToolCall:
    return ToolCall(name=name, arguments=arguments)


def pattern(name: str = "Bash", **arguments: Any) -> GrantMatch:
    return GrantMatch(name=name, arguments=arguments)


GIT = pattern(command="git *")


@pytest.mark.parametrize(
    "command",
    ["git", "git status", "git log -p --stat", "git commit -m 'tidy up'", "git  status", "git *", "git ~/x"],
)
def test_a_widened_command_matches_its_first_word_with_any_plain_arguments(command: str) -> None:
    assert matches(GIT, call(command=command))


@pytest.mark.parametrize(
    "command",
    [
        "git status; rm -rf /",
        "git status && rm -rf /",
        "git status || rm -rf /",
        "git status & rm -rf /",
        "git log | sh",
        "git $(rm -rf /)",
        "git ${IFS}x",
        "git `rm -rf /`",
        "git status > /etc/passwd",
        "git apply < /tmp/patch",
        "git status\nrm -rf /",
        "git status\rrm -rf /",
        "git status\x00rm",
        "git (rm)",
        "git status \\\nrm -rf /",
        "git commit -m 'a; b'",  # quoted, but not parsed: refused rather than trusted
    ],
)
def test_a_widened_command_never_matches_shell_metacharacters(command: str) -> None:
    assert not matches(GIT, call(command=command))


@pytest.mark.parametrize(
    "command",
    ["gitk", "git-shell -c x", "gi", " git status", "\tgit status", "GIT status", "github", "rm -rf / git"],
)
def test_a_widened_command_matches_only_that_first_word(command: str) -> None:
    assert not matches(GIT, call(command=command))


def test_a_grant_never_matches_another_tool() -> None:
    assert not matches(GIT, call("bash", command="git status"))
    assert not matches(GIT, call("Bash2", command="git status"))
    assert not matches(pattern("Write", file_path="/tmp/a"), call("Edit", file_path="/tmp/a"))


def test_the_exact_pattern_matches_that_call_and_no_other() -> None:
    approved = call("Run", command="ls -la", timeout=30)
    exact = exact_match(approved)
    assert matches(exact, approved)
    assert not matches(exact, call("Run", command="ls -la /etc", timeout=30))
    assert not matches(exact, call("Run", command="ls -la", timeout=31))
    assert not matches(exact, call("Run", command="ls -la"))  # an argument missing
    assert not matches(exact, call("Run", command="ls -la", timeout=30, background=True))  # one more


def test_an_argument_the_pattern_leaves_out_is_not_a_wildcard() -> None:
    assert not matches(pattern("Run", command="git *"), call("Run", command="git status", cwd="/"))
    assert not matches(pattern(), call(command="git status"))
    assert not matches(pattern(command="git *"), call(command="git status", dangerouslyDisableSandbox=True))


@pytest.mark.parametrize(
    ("granted", "given"),
    [
        (1, True),
        (True, 1),
        (1, 1.0),
        (0, False),
        (None, "null"),
        ("1", 1),
        ([1, 2], [2, 1]),
        ({"a": 1}, {"a": "1"}),
    ],
)
def test_values_compare_as_json(granted: Any, given: Any) -> None:
    assert not matches(pattern("T", x=granted), call("T", x=given))


def test_nested_values_compare_exactly_and_never_widen() -> None:
    nested = pattern("T", cmd=["git *"], options={"command": "git *"})
    assert not matches(nested, call("T", cmd=["git status"], options={"command": "git status"}))
    assert matches(nested, call("T", cmd=["git *"], options={"command": "git *"}))
    assert matches(pattern("T", o={"b": 1, "a": 2}), call("T", o={"a": 2, "b": 1}))


def test_a_widened_value_matches_strings_only() -> None:
    assert not matches(pattern("T", n="5 *"), call("T", n=5))
    assert not matches(pattern("T", n="git *"), call("T", n=["git", "status"]))


def test_a_command_that_itself_ends_in_a_star_is_granted_exactly() -> None:
    glob = call(command="ls *")
    exact = exact_match(glob)
    assert exact.arguments == {"command": "ls \\*"}
    assert matches(exact, glob)
    assert not matches(exact, call(command="ls -la"))
    assert not matches(exact, call(command="ls \\*"))
    assert matches(pattern(command="ls *"), call(command="ls -la"))  # written unescaped, it widens


@pytest.mark.parametrize("value", ["ls *", "ls \\*", "a\\\\*", "*", " *", "\\*", "x*", "plain"])
def test_every_string_is_its_own_exact_pattern(value: str) -> None:
    assert matches(exact_match(call(command=value)), call(command=value))
    assert not matches(exact_match(call(command=value)), call(command=value + " more"))


def test_widening_to_the_first_word_keeps_the_other_arguments_exact() -> None:
    widened = widened_match(call("Run", command="npm test -- --watch", timeout=60))
    assert widened == pattern("Run", command="npm *", timeout=60)
    assert widened_match(call(command="ls; rm -rf /")) is None
    assert widened_match(call(path="/tmp")) is None


@pytest.mark.parametrize(
    "command",
    ["bash -c 'ls'", "sh -c x", "/bin/sh x", "sudo ls", "env ls", "FOO=1 ls", "xargs rm", "python3 x.py",
     "python3.12 -c x", "node -e x", "eval ls", "timeout 5 rm", "nohup rm", "ssh host rm"],
)  # fmt: skip
def test_commands_that_run_other_commands_are_never_widened(command: str) -> None:
    assert first_word(command) is None
    word = command.split(" ", 1)[0]
    assert grant_problem(pattern(command=f"{word} *"), call(command=command)) is not None


def test_a_grant_must_cover_the_call_being_approved() -> None:
    approved = call("Run", command="git status", timeout=10)
    assert grant_problem(exact_match(approved), approved) is None
    assert grant_problem(pattern("Run", command="git *", timeout=10), approved) is None
    assert grant_problem(pattern("Run", command="git push *", timeout=10), approved) is not None
    assert "name" in (grant_problem(pattern("Write", command="git *", timeout=10), approved) or "")
    assert "missing timeout" in (grant_problem(pattern("Run", command="git *"), approved) or "")
    extra = pattern("Run", command="git *", timeout=10, x=1)
    assert "not in the call" in (grant_problem(extra, approved) or "")
    assert grant_problem(pattern("Run", command=" *", timeout=10), approved) is not None
    assert grant_problem(pattern("Run", command="git status; *", timeout=10), approved) is not None
    chained = call(command="cd /srv && make")
    assert grant_problem(pattern(command="cd *"), chained) is not None  # widening cannot take the chain
    assert grant_problem(exact_match(chained), chained) is None  # but the exact chain can be granted


# Every Unicode line or paragraph separator, and the other characters str.splitlines breaks on.
SEPARATORS = ["\n", "\r", "\r\n", "\v", "\f", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]


@pytest.mark.parametrize("separator", SEPARATORS)
@pytest.mark.parametrize("tail", ["rm -rf /", "curl evil.example", ""])
def test_a_widened_command_never_matches_past_a_line_separator(separator: str, tail: str) -> None:
    command = f"git status{separator}{tail}"
    assert not matches(GrantMatch(name="Bash", arguments={"command": "git *"}), call(command=command))
    assert first_word(command) is None
    assert widened_match(call(command=command)) is None
    problem = grant_problem(
        GrantMatch(name="Bash", arguments={"command": f"git{separator} *"}), call(command=command)
    )
    assert problem is not None


@pytest.mark.parametrize("char", ["\x80", "\x9f", "\x7f", "\x00", "\t"])
def test_a_widened_command_never_matches_a_control_character(char: str) -> None:
    assert not matches(GrantMatch(name="Bash", arguments={"command": "git *"}), call(command=f"git x{char}y"))
