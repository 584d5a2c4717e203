"""A hook prints a person's words for the agent's terminal: without control characters or bidi overrides,
even from a prompt kept before they were removed on the way in."""

from __future__ import annotations

import json

import pytest

from gateway.integrations.hook_output import permission_request, pre_tool_use
from gateway.integrations.permissions import Verdict

BAD = ["\x1b", "\x07", "\r", "\x9b", "\u202e", "\u2067", "\x00"]


@pytest.mark.parametrize("bad", BAD)
@pytest.mark.parametrize("tool", ["claude", "codex"])
def test_a_denial_reason_is_printed_printable(bad: str, tool: str) -> None:
    denied = Verdict("deny", message=f"Denied in chat by web:alice: not{bad} now", note=f"not{bad} now")
    for out in (permission_request(tool, "Bash", denied), pre_tool_use(tool, "Bash", denied, "none")):  # type: ignore[arg-type]
        assert bad not in json.dumps(out, ensure_ascii=False)
        assert "not now" in json.dumps(out, ensure_ascii=False)


@pytest.mark.parametrize("bad", BAD)
def test_an_approvers_note_is_printed_printable(bad: str) -> None:
    allowed = Verdict("allow", message=f"Approved{bad}.", note=f"on{bad} staging", answered_by="web:alice")
    out = pre_tool_use("claude", "Bash", allowed, "none")
    assert out is not None
    shown = json.dumps(out, ensure_ascii=False)
    assert bad not in shown and "on staging" in shown
