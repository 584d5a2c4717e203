"""Grants ("approve for this session"): which later calls of a run a person's approval lets through.

A grant's ``match`` is a tool name and a pattern for the call's arguments. ``matches`` is the one rule:

- ``name`` equals the call's tool name exactly: a grant never matches another tool;
- ``arguments`` names exactly the call's arguments, no more and no fewer: an argument the pattern leaves
  out is not "anything", it makes the call not match;
- each value equals the call's value, compared as JSON (``1``, ``1.0`` and ``true`` differ), except
- a string ending in `` *`` (space, star), a *widened* value: it matches a string that is the part before
  the space alone, or that part followed by a space and anything, provided the whole string holds no shell
  metacharacter (`` ; & | $ ` < > ( ) \\ ``), no control character and no line or paragraph separator of
  any kind (``\\n``, ``\\r``, ``\\v``, ``\\f``, U+001C-001E, U+0085, U+2028, U+2029). ``git *`` matches
  ``git``, ``git status`` and ``git log -p``, never ``git status; rm -rf /``, ``git $(id)`` or a second
  line. Only strings at the top of ``arguments`` widen; anything nested compares exactly;
- a string ending in ``\\*`` matches, exactly, itself with that backslash taken out: how a value that
  itself ends in `` *`` (``ls *``) is granted as it stands (``exact_match`` writes it so).

Both sides are compared as the call's identity (``gateway.rules.call_identity``): a command tool's descriptive
arguments (Claude Code's ``description``, a timeout) are neither named by a pattern nor matched.

A grant is made only for the very call being approved, so its pattern must match that call
(``grant_problem``), and a widened value cannot start with a shell or a command that runs other commands
(``bash *``, ``sudo *``, ``env *``): that would be every command.
"""

from __future__ import annotations

import json
import re
import unicodedata
from datetime import datetime
from typing import Any, Literal, Protocol

from pydantic import Field

from gateway.base.models import Identity, Model, ToolCall
from gateway.rules.call_identity import identity_arguments

WIDENED = " *"  # a string argument ending so matches its prefix followed by anything
LITERAL_STAR = "\\*"  # a string argument ending so ends in a plain star
# Characters that would let a widened command run something else: chain, pipe, substitute, redirect.
SHELL_METACHARACTERS = frozenset(";&|$`<>()\\")
# First words that run whatever their arguments say: widening them would grant every command.
RUNS_OTHER_COMMANDS = frozenset(
    {
        "sh", "bash", "zsh", "dash", "ksh", "fish", "csh", "tcsh", "busybox",
        "env", "sudo", "doas", "su", "xargs", "eval", "exec", "nohup", "timeout", "nice", "ionice",
        "time", "command", "builtin", "watch", "ssh", "stdbuf", "setsid", "chroot", "flock",
        "python", "node", "perl", "ruby", "php", "deno", "bun", "npx", "pwsh", "powershell", "cmd",
        "osascript", "lua", "tclsh", "awk", "gawk",
    }
)  # fmt: skip
_VERSION_SUFFIX = re.compile(r"[\d.]+$")
# Control characters (C0, DEL, C1 such as U+0085) and the line and paragraph separators U+2028, U+2029:
# anything a shell or a terminal may take as the end of one command and the start of another.
_BREAKING_CATEGORIES = frozenset({"Cc", "Zl", "Zp"})


class GrantMatch(Model):
    """The calls a grant lets through: one tool, and a pattern for each of its arguments."""

    name: str = Field(min_length=1, max_length=200)
    arguments: dict[str, Any] = Field(default_factory=dict)


class GrantRequest(Model):
    """``grant`` on an approve: let matching calls through for the rest of the run without asking."""

    scope: Literal["run"]
    match: GrantMatch


class Grant(Model):
    """A grant in force: who made it (approving ``prompt_id``), when, and how often it answered since."""

    grant_id: str
    run_id: str
    match: GrantMatch
    created_by: Identity
    created_at: datetime
    prompt_id: str
    uses: int = 0

    @property
    def by(self) -> str:
        """Who allowed a call this grant answers: ``grant:<grant_id>``."""
        return f"grant:{self.grant_id}"


def grant_id_of(prompt_id: str) -> str:
    """The id of the grant an approve of ``prompt_id`` makes (``grt_`` and the prompt's own): a prompt is
    settled by one answer, so it makes one grant at most, kept with that answer and confirmed after it."""
    return f"grt_{prompt_id.partition('_')[2] or prompt_id}"


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _plain_command(value: str) -> bool:
    """No metacharacter, control character or line separator: the string runs one command with its
    arguments."""
    return not any(
        char in SHELL_METACHARACTERS or unicodedata.category(char) in _BREAKING_CATEGORIES for char in value
    )


def widened_prefix(pattern: Any) -> str | None:
    """The prefix of a widened value (``git`` for ``git *``); None for a value compared exactly."""
    if isinstance(pattern, str) and pattern.endswith(WIDENED) and not pattern.endswith(LITERAL_STAR):
        return pattern[: -len(WIDENED)]
    return None


def _value_matches(pattern: Any, value: Any) -> bool:
    prefix = widened_prefix(pattern)
    if prefix is not None:
        return (
            isinstance(value, str)
            and prefix.strip() != ""
            and _plain_command(value)
            and (value == prefix or value.startswith(prefix + " "))
        )
    if isinstance(pattern, str) and pattern.endswith(LITERAL_STAR):
        return isinstance(value, str) and value == pattern[: -len(LITERAL_STAR)] + "*"
    return _json(pattern) == _json(value)


def matches(match: GrantMatch, call: ToolCall) -> bool:
    """Whether the grant pattern ``match`` lets ``call`` through (the rule is the module's docstring)."""
    if match.name != call.name:
        return False
    wanted = identity_arguments(match.name, match.arguments)
    given = identity_arguments(call.name, call.arguments)
    if wanted.keys() != given.keys():
        return False
    return all(_value_matches(pattern, given[key]) for key, pattern in wanted.items())


def describe(match: GrantMatch) -> str:
    """The pattern as people read it: ``Bash {"command": "git *"}`` (``Bash`` with no arguments)."""
    if not match.arguments:
        return f"{match.name} with no arguments"
    return f"{match.name} {json.dumps(match.arguments, ensure_ascii=False)}"


def in_short(match: GrantMatch | ToolCall) -> str:
    """A pattern as a settled card shows it: a command's own words (``npm test``), else the tool and its
    arguments as compact JSON (``Write {"path":"a.txt"}``), or the tool alone when it takes none."""
    arguments = match.arguments
    if list(arguments) == ["command"] and isinstance(arguments["command"], str):
        return arguments["command"]
    if not arguments:
        return match.name
    return f"{match.name} {json.dumps(arguments, ensure_ascii=False, separators=(',', ':'))}"


def _exact(value: Any) -> Any:
    """A value as an exact pattern: a string ending in `` *`` or ``\\*`` gets its star escaped."""
    if isinstance(value, str) and value.endswith("*") and value[:-1].endswith((" ", "\\")):
        return value[:-1] + LITERAL_STAR
    return value


def exact_match(call: ToolCall) -> GrantMatch:
    """The default pattern: this call's tool and its identity's arguments, exactly."""
    arguments = identity_arguments(call.name, call.arguments)
    return GrantMatch(name=call.name, arguments={key: _exact(value) for key, value in arguments.items()})


def normalized(match: GrantMatch) -> GrantMatch:
    """The pattern as kept: a command tool's descriptive arguments left out (they are never matched)."""
    arguments = identity_arguments(match.name, match.arguments)
    return match if arguments is match.arguments else match.model_copy(update={"arguments": arguments})


def first_word(command: str) -> str | None:
    """The command's first word, when widening to it is allowed: a plain command that does not run others."""
    word = command.split(" ", 1)[0]
    if not word or not _plain_command(command) or _runs_other_commands(word):
        return None
    return word


def widened_match(call: ToolCall, key: str = "command") -> GrantMatch | None:
    """The exact pattern with the string argument ``key`` widened to its first word (``git *``), or None
    when the call has no such argument or it cannot be widened (see ``first_word``)."""
    command = call.arguments.get(key)
    word = first_word(command) if isinstance(command, str) else None
    if word is None:
        return None
    exact = exact_match(call)
    return exact.model_copy(update={"arguments": {**exact.arguments, key: word + WIDENED}})


def _runs_other_commands(word: str) -> bool:
    base = word.rsplit("/", 1)[-1].casefold()
    return base in RUNS_OTHER_COMMANDS or _VERSION_SUFFIX.sub("", base) in RUNS_OTHER_COMMANDS or "=" in base


class Approved(Protocol):
    """A prompt, or a view of one: how many approvers it needs."""

    @property
    def approvals(self) -> int: ...


def needs_several(prompt: Approved) -> str | None:
    """Why no grant goes with an answer to ``prompt`` when it needs several approvers (None otherwise): a
    grant is one person's word, and would answer the run's later calls that need more than one."""
    if prompt.approvals < 2:
        return None
    return f"this call needs {prompt.approvals} approvers, so it cannot be allowed for the session"


def grant_problem(match: GrantMatch, call: ToolCall) -> str | None:
    """Why ``match`` cannot be granted while approving ``call``; None when it can."""
    if match.name != call.name:
        return f"grant.match.name must be the tool being approved ({call.name!r}), not {match.name!r}"
    match = normalized(match)
    called = identity_arguments(call.name, call.arguments)
    for key, pattern in match.arguments.items():
        prefix = widened_prefix(pattern)
        if prefix is None:
            continue
        if not prefix.strip():
            return f"grant.match.arguments.{key} widens nothing: name at least the command's first word"
        if _runs_other_commands(prefix.split(" ", 1)[0]):
            return (
                f"grant.match.arguments.{key} cannot be widened: {prefix.split(' ', 1)[0]!r} runs other "
                "commands, so the pattern would allow any command; grant the exact call instead"
            )
        if not _plain_command(prefix):
            return f"grant.match.arguments.{key} cannot widen a command holding shell metacharacters"
    missing = sorted(called.keys() - match.arguments.keys())
    extra = sorted(match.arguments.keys() - called.keys())
    if missing or extra:
        return (
            "grant.match.arguments must name exactly the call's arguments"
            + (f" (missing {', '.join(missing)})" if missing else "")
            + (f" (not in the call: {', '.join(extra)})" if extra else "")
        )
    if not matches(match, call):
        return "grant.match does not match the call being approved: a grant covers at least that call"
    return None


__all__ = [
    "Grant",
    "GrantMatch",
    "GrantRequest",
    "describe",
    "exact_match",
    "first_word",
    "grant_id_of",
    "grant_problem",
    "in_short",
    "matches",
    "needs_several",
    "normalized",
    "widened_match",
]
