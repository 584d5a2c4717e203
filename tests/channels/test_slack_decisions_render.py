"""An approval's modals and votes line on Slack as pure functions: the input each argument gets, the value
each input gives back, where the core's refusals show, and how the votes line names people."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from channels.slack.approval_modals import (
    MAX_ARGUMENT_INPUTS,
    TEXT_INPUT_LIMIT,
    edit_errors,
    edit_view,
    read_edit,
    read_reason,
    reason_view,
)
from channels.slack.control_ids import NOTE, ControlRef, Verb
from channels.slack.controls import opens_form
from channels.slack.render import render_item
from gateway.base.forms import FieldError
from gateway.base.models import Prompt, PromptKind, PromptRequest, Question, ToolCall, Vote, utcnow
from gateway.rules import notices
from gateway.rules.render import votes_item

PID = "prm_01JABCDEFGHJKMNPQRSTVWXYZ0"


def approval(
    arguments: dict[str, Any], *, editable: bool = True, schema: dict[str, Any] | None = None
) -> Prompt:
    request = PromptRequest(
        kind=PromptKind.APPROVAL,
        questions=[Question(question="Allow deploy to run?")],
        tool_call=ToolCall(name="deploy", arguments=arguments),
        editable=editable,
        input_schema=schema,
    )
    now = utcnow()
    return Prompt(
        prompt_id=PID,
        run_id="run_01JABCDEFGHJKMNPQRSTVWXYZ0",
        thread_id="slack:C0TEAM:1712345678.000100",
        agent="ops",
        kind=PromptKind.APPROVAL,
        questions=request.questions,
        tool_call=request.tool_call,
        editable=request.editable,
        input_schema=request.input_schema,
        created_at=now,
        expires_at=now + timedelta(days=1),
    )


def element_of(view: dict[str, Any], block_id: str) -> dict[str, Any]:
    [block] = [block for block in view["blocks"] if block.get("block_id") == block_id]
    element: dict[str, Any] = block["element"]
    return element


def text_state(value: str | None) -> dict[str, Any]:
    return {"value": {"type": "plain_text_input", "value": value}}


# Which modal a press opens ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("verb", "editable", "opens"),
    [
        (Verb.REASON, False, True),
        (Verb.REASON, True, True),
        (Verb.EDIT, True, True),
        (Verb.EDIT, False, False),
    ],
)
def test_edit_opens_only_on_an_editable_approval_and_reason_on_any(
    verb: Verb, editable: bool, opens: bool
) -> None:
    assert opens_form(approval({"a": 1}, editable=editable), verb, ControlRef(PID)) is opens


def test_reason_and_edit_never_open_on_a_question_or_an_option() -> None:
    prompt = approval({"a": 1})
    assert not opens_form(prompt, Verb.EDIT, ControlRef(PID, 0))
    assert not opens_form(prompt, Verb.REASON, ControlRef(PID, 0, 1))


# Deny with reason… ------------------------------------------------------------------------------------------


def test_reason_modal_has_one_required_box_for_the_note() -> None:
    view = reason_view(approval({}))
    [box] = [block for block in view["blocks"] if block["type"] == "input"]
    assert (box["block_id"], box["optional"], box["element"]["multiline"]) == (NOTE, False, True)
    assert view["private_metadata"] == PID


@pytest.mark.parametrize(
    ("values", "reason"),
    [
        ({NOTE: {NOTE: {"type": "plain_text_input", "value": "not today"}}}, "not today"),
        ({NOTE: {NOTE: {"type": "plain_text_input", "value": None}}}, ""),
        ({}, None),
        ({NOTE: {NOTE: {"type": "checkboxes", "selected_options": []}}}, None),
    ],
)
def test_reason_is_read_from_its_box_only(values: dict[str, Any], reason: str | None) -> None:
    assert read_reason(values) == reason


# Edit and approve… ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "kind", "initial"),
    [
        ("ls -la", "plain_text_input", "ls -la"),
        (3, "number_input", "3"),
        (2.5, "number_input", "2.5"),
        (1e-05, "number_input", "0.00001"),
        (True, "static_select", None),
        ({"a": [1, 2]}, "plain_text_input", '{\n  "a": [\n    1,\n    2\n  ]\n}'),
        (None, "plain_text_input", "null"),
    ],
)
def test_each_argument_gets_an_input_of_its_kind_prefilled(
    value: Any, kind: str, initial: str | None
) -> None:
    element = element_of(edit_view(approval({"x": value})), "a0")
    assert element["type"] == kind
    assert element.get("initial_value") == initial


def test_numbers_take_decimals_when_the_value_or_the_schema_says_so() -> None:
    whole = element_of(edit_view(approval({"n": 3})), "a0")
    said = element_of(edit_view(approval({"n": 3}, schema={"properties": {"n": {"type": "number"}}})), "a0")
    fraction = element_of(edit_view(approval({"n": 0.5})), "a0")
    assert [whole["is_decimal_allowed"], said["is_decimal_allowed"], fraction["is_decimal_allowed"]] == [
        False,
        True,
        True,
    ]


def test_long_or_multi_line_text_gets_a_tall_box_and_text_too_long_to_edit_is_kept() -> None:
    prompt = approval({"short": "ls", "script": "echo 1\necho 2", "blob": "x" * (TEXT_INPUT_LIMIT + 1)})
    view = edit_view(prompt)
    assert element_of(view, "a0")["multiline"] is False
    assert element_of(view, "a1")["multiline"] is True
    assert [block.get("block_id") for block in view["blocks"]].count("a2") == 0
    assert "blob" in view["blocks"][-1]["elements"][0]["text"]
    edited = read_edit(prompt, {"a0": text_state("pwd"), "a1": text_state(None)})
    assert edited.arguments == {"short": "pwd", "script": "", "blob": "x" * (TEXT_INPUT_LIMIT + 1)}


def test_a_huge_call_gets_inputs_up_to_what_a_modal_takes() -> None:
    view = edit_view(approval({f"k{index}": index for index in range(MAX_ARGUMENT_INPUTS + 5)}))
    assert len(view["blocks"]) <= 100
    assert sum(block["type"] == "input" for block in view["blocks"]) == MAX_ARGUMENT_INPUTS


@pytest.mark.parametrize(
    ("current", "state", "read"),
    [
        (1, {"type": "number_input", "value": "42"}, 42),
        (1, {"type": "number_input", "value": "-0.25"}, -0.25),
        (1.5, {"type": "number_input", "value": "2"}, 2),
        (False, {"type": "static_select", "selected_option": {"value": "true"}}, True),
        ([1], {"type": "plain_text_input", "value": '{"k": null}'}, {"k": None}),
        ("a", {"type": "plain_text_input", "value": "b"}, "b"),
    ],
)
def test_each_input_is_typed_back_to_its_arguments_kind(
    current: Any, state: dict[str, Any], read: Any
) -> None:
    edited = read_edit(approval({"x": current}), {"a0": {"value": state}})
    assert edited.errors == {}
    assert edited.arguments == {"x": read}
    assert type(edited.arguments["x"]) is type(read)


@pytest.mark.parametrize(
    ("current", "state", "error"),
    [
        ([1], {"type": "plain_text_input", "value": "[1,"}, "Not valid JSON ("),
        ([1], {"type": "plain_text_input", "value": None}, "Not valid JSON ("),
        ([1], {"type": "plain_text_input", "value": "[" * 3000}, "Not valid JSON (values nested deeper"),
        ("a", {"type": "plain_text_input", "value": "[1,"}, None),
        (1, {"type": "number_input", "value": "1e999"}, notices.NOT_A_NUMBER),
        (1, {"type": "number_input", "value": "twelve"}, notices.NOT_A_NUMBER),
        (True, {"type": "static_select", "selected_option": None}, notices.CHOOSE_TRUE_OR_FALSE),
    ],
)
def test_a_value_that_does_not_read_is_shown_under_its_input(
    current: Any, state: dict[str, Any], error: str | None
) -> None:
    edited = read_edit(approval({"x": current}), {"a0": {"value": state}})
    if error is None:  # a text argument is text, whatever it holds
        assert edited.errors == {}
        return
    assert edited.arguments is None
    assert edited.errors["a0"].startswith(error)


@pytest.mark.parametrize(
    "values",
    [
        pytest.param({}, id="input-missing"),
        pytest.param({"a0": {"value": {"type": "plain_text_input", "value": "3"}}}, id="another-kind"),
    ],
)
def test_a_submission_that_does_not_fit_the_call_is_refused(values: dict[str, Any]) -> None:
    assert read_edit(approval({"x": 3}), values).arguments is None


def test_the_cores_refusals_show_under_the_argument_they_name() -> None:
    prompt = approval({"items": [1], "limit": 5})
    problems = (
        FieldError("items.0", "1 is not of type 'string'"),
        FieldError("limit", "5 is greater than the maximum of 3"),
        FieldError("arguments", "'name' is a required property"),
    )
    assert edit_errors(prompt, problems, "Not taken") == {
        "a0": "1 is not of type 'string'. 'name' is a required property.",
        "a1": "5 is greater than the maximum of 3.",
    }
    assert edit_errors(prompt, (), "Not taken: no.") == {"a0": "Not taken: no."}
    assert edit_errors(approval({}), (), "Not taken: no.") == {}


# The votes line ---------------------------------------------------------------------------------------------


def test_votes_line_names_slack_people_by_mention_and_others_as_they_are() -> None:
    now = utcnow()
    prompt = approval({}, editable=False).model_copy(
        update={
            "approvals": 3,
            "votes": [
                Vote(by="slack:U0ALICE", answer="Approve", at=now),
                Vote(by="web:<bob>", answer="Approve", at=now),
                Vote(by="slack:U0STARTER", answer="Approve", at=now, counted=False),
            ],
        }
    )
    [message] = render_item(votes_item(prompt))
    assert message.blocks == [
        {
            "type": "context",
            "elements": [{"type": "mrkdwn", "text": "Approved 2 of 3: <@U0ALICE>, web:&lt;bob&gt;"}],
        }
    ]
