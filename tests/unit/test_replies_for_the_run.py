"""Typing "always allow" (or "approve for this session") to an approval approves it and asks for a grant
of the exact call for the rest of the run; nothing else does, and no other kind of prompt takes it."""

from __future__ import annotations

import pytest

from gateway.base.models import ReplyPolicy, ToolCall
from gateway.rules.replies import ReplyAction, read_reply
from tests.unit.test_replies import APPROVAL, TEXT, prompt

BASH = ToolCall(name="Bash", arguments={"command": "git status"})


@pytest.mark.parametrize("policy", [ReplyPolicy.ANSWER, ReplyPolicy.NEW_MESSAGE])
@pytest.mark.parametrize(
    "text",
    ["always allow", " Always Approve ", "ALWAYS ALLOW", "approve for this session", "Allow  for\tsession"],
)
def test_always_approves_an_approval_and_asks_for_a_grant(text: str, policy: ReplyPolicy) -> None:
    approval = prompt(APPROVAL, policy).model_copy(update={"tool_call": BASH})
    reading = read_reply(approval, text)
    assert reading.action is ReplyAction.ANSWER
    assert [answer.answer for answer in reading.answers] == [["Approve"]]
    assert reading.grant


@pytest.mark.parametrize(
    "text", ["approve", "yes", "always", "always deny", "not always", "approve for the week", "no"]
)
def test_other_replies_ask_for_no_grant(text: str) -> None:
    approval = prompt(APPROVAL, ReplyPolicy.ANSWER).model_copy(update={"tool_call": BASH})
    assert not read_reply(approval, text).grant


def test_an_approval_without_a_tool_call_is_approved_with_nothing_to_grant() -> None:
    reading = read_reply(prompt(APPROVAL, ReplyPolicy.ANSWER), "always allow")
    assert [answer.answer for answer in reading.answers] == [["Approve"]]
    assert not reading.grant


def test_a_question_takes_always_as_its_answer_text() -> None:
    reading = read_reply(prompt(TEXT, ReplyPolicy.ANSWER), "always")
    assert [answer.answer for answer in reading.answers] == [["always"]]
    assert not reading.grant
