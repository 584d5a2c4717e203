"""Who answered, in words: one line under a settled prompt and its audit item, worded once for every
channel (the web chat's script words it the same)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gateway.base.models import PromptState, ToolCall
from gateway.base.names import Names
from gateway.rules import notices
from gateway.rules.render import message_item, resolved_item, settled_prompt_item
from tests.unit.test_render import answered, cancelled, deploy_prompt, make_prompt

ROOT = Path(__file__).resolve().parents[2]
APPROVAL = ("approval", {"question": "Allow db__drop to run?"})


@pytest.mark.parametrize(
    ("kind", "answers", "line"),
    [
        ("approval", [["Approve"]], "Approved by alice"),
        ("approval", [["Deny"]], "Denied by alice"),
        ("approval", [[]], "Denied by alice"),  # nothing approved is a denial, as the mapper reads it
        ("url", [["done"]], "Marked done by alice"),
        ("ask_user_question", [["staging"]], "Answered by alice"),
        ("text", [["ship it"]], "Answered by alice"),
        ("form", [["prod"], ["3"]], "Answered by alice"),
        ("form", None, "Declined by alice"),
    ],
)
def test_settled_by_words_the_outcome_by_kind(kind: str, answers: Any, line: str) -> None:
    assert notices.settled_by(kind, answers, "alice") == line


def test_an_answered_prompts_audit_item_and_settled_message_name_who_answered() -> None:
    prompt = answered(make_prompt(*APPROVAL), ["Approve"])
    shown = {"slack:U0123ABC": "Alice"}.get
    for item in (resolved_item(prompt), settled_prompt_item(prompt)):
        assert notices.answered_by(item) == "Approved by slack:U0123ABC"
        assert notices.answered_by(item, lambda who: shown(who) or who) == "Approved by Alice"
    assert resolved_item(prompt).text == "✓ Answered: Approve"  # the item's own text stays the seed's


NPM = ToolCall(name="Bash", arguments={"command": "npm test"})


def test_an_approve_for_the_session_says_what_it_let_through_on_every_channel() -> None:
    asked = make_prompt(*APPROVAL, tool_call=NPM)
    prompt = answered(asked, ["Approve"], granted=NPM)
    for item in (resolved_item(prompt), settled_prompt_item(prompt)):
        assert item.metadata["prompt"]["granted"] == NPM.model_dump()
        assert notices.answered_by(item, {"slack:U0123ABC": "Alice"}.get) == (
            "Approved by Alice, and for this session: `npm test`"
        )
    plain = resolved_item(answered(asked, ["Approve"]))
    assert "granted" not in plain.metadata["prompt"]
    assert notices.answered_by(plain) == "Approved by slack:U0123ABC"
    assert notices.settled_by("approval", [["Deny"]], "alice", NPM) == "Denied by alice"


@pytest.mark.parametrize(
    ("pattern", "shown"),
    [
        (NPM, "`npm test`"),  # a command: its own words
        (ToolCall(name="Bash", arguments={"command": "git *"}), "`git *`"),
        (
            ToolCall(name="Write", arguments={"path": "a.txt", "content": "hi"}),
            '`Write {"path":"a.txt","content":"hi"}`',
        ),
        (ToolCall(name="refresh"), "`refresh`"),
    ],
)
def test_a_grants_pattern_reads_as_the_web_chat_shows_it(pattern: ToolCall, shown: str) -> None:
    assert notices.settled_by("approval", [["Approve"]], "alice", pattern) == (
        f"Approved by alice, and for this session: {shown}"
    )


def test_items_that_name_nobody_have_no_line() -> None:
    unnamed = answered(deploy_prompt(), ["staging"], answered_by=None)
    for item in (
        resolved_item(cancelled(deploy_prompt(), "the run ended")),
        resolved_item(unnamed),
        message_item("✓ Answered: staging", {"prompt": {"prompt_state": PromptState.ANSWERED}}),
    ):
        assert notices.answered_by(item) is None


def test_unreadable_metadata_names_nobody_rather_than_failing() -> None:
    item = resolved_item(answered(deploy_prompt(), ["staging"]))
    item.metadata["prompt"]["answers"] = "not a list"
    assert notices.answered_by(item) == "Answered by slack:U0123ABC"
    item.metadata["prompt"] = ["not", "a", "dict"]
    assert notices.answered_by(item) is None


def test_names_show_the_last_name_heard_and_forget_the_oldest() -> None:
    names = Names(size=2)
    names.learn("teams:a", "Ann")
    names.learn("teams:a", "Ann B.")
    names.learn("teams:b", "  ")  # not a name
    names.learn("teams:c", "Cid")
    names.learn("teams:d", "Dee")
    assert [names.shown(who) for who in ("teams:a", "teams:b", "teams:c", "teams:d")] == [
        "teams:a",
        "teams:b",
        "Cid",
        "Dee",
    ]


def test_the_web_chat_words_who_answered_as_the_core_does() -> None:
    script = (ROOT / "gateway" / "api" / "static" / "common.js").read_text()
    for template in (notices.APPROVED_BY, notices.DENIED_BY, notices.MARKED_DONE_BY, notices.ANSWERED_BY):
        assert template.format(who="${who}") in script
    assert notices.FOR_THE_SESSION.format(pattern="${patternText(prompt.granted)}") in script
