"""Seed 002's reply rule: a reply that fits the waiting input answers it; under ``new_message`` anything
else supersedes it and runs as the next message. Under ``answer`` (seed 000) every reply is mapped."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from gateway.base.models import Prompt, PromptRequest, ReplyPolicy, ToolCall
from gateway.rules.replies import ReplyAction, read_reply

NOW = datetime(2025, 1, 1, tzinfo=UTC)
DEPLOY = {
    "kind": "ask_user_question",
    "questions": [
        {"question": "Target?", "options": [{"label": "staging"}, {"label": "production"}]},
        {"question": "Anything else?"},
    ],
}
SECTIONS = {
    "kind": "ask_user_question",
    "questions": [
        {"question": "Sections?", "multiSelect": True, "options": [{"label": "KPI"}, {"label": "Table"}]}
    ],
}
APPROVAL = {"kind": "approval", "questions": [{"question": "Allow db__drop to run?"}]}
TEXT = {"kind": "text", "questions": [{"question": "Release name?"}]}
URL = {"kind": "url", "message": "Connect GitHub", "url": "https://example.com/connect"}
AGE = {
    "kind": "form",
    "message": "Your age?",
    "requested_schema": {
        "type": "object",
        "properties": {"age": {"type": "integer", "minimum": 0}},
        "required": ["age"],
    },
}
PROFILE = {
    "kind": "form",
    "message": "Your profile",
    "requested_schema": {
        "type": "object",
        "properties": {
            "name": {"type": "string", "title": "Name"},
            "age": {"type": "integer", "minimum": 0},
            "team": {"type": "string", "enum": ["red", "blue"]},
        },
        "required": ["name", "age"],
    },
}


def prompt(payload: dict[str, Any], policy: ReplyPolicy = ReplyPolicy.NEW_MESSAGE) -> Prompt:
    request = PromptRequest.model_validate(payload)
    assert request.questions is not None
    return Prompt(
        prompt_id="prm_1",
        run_id="run_1",
        thread_id="web:room",
        agent="ops",
        kind=request.kind,
        message=request.message,
        requested_schema=request.requested_schema,
        url=request.url,
        questions=request.questions,
        created_at=NOW,
        expires_at=NOW,
        on_unmatched_reply=policy,
    )


@pytest.mark.parametrize(
    ("payload", "text", "action", "answer"),
    [
        (APPROVAL, "approve", ReplyAction.ANSWER, [["Approve"]]),
        (APPROVAL, " OK ", ReplyAction.ANSWER, [["Approve"]]),
        (APPROVAL, "deny", ReplyAction.ANSWER, [["Deny"]]),
        (APPROVAL, "2", ReplyAction.ANSWER, [["Deny"]]),
        (APPROVAL, "reject", ReplyAction.ANSWER, [["Deny"]]),
        (APPROVAL, "wait, drop prod instead", ReplyAction.SUPERSEDE, []),
        (DEPLOY, "2", ReplyAction.ANSWER, [["production"], ["2"]]),
        (DEPLOY, "Staging", ReplyAction.ANSWER, [["staging"], ["Staging"]]),
        (DEPLOY, "actually, deploy the docs first", ReplyAction.SUPERSEDE, []),
        (SECTIONS, "1 2", ReplyAction.ANSWER, [["KPI", "Table"]]),
        (SECTIONS, "3", ReplyAction.SUPERSEDE, []),
        (TEXT, "Heron", ReplyAction.ANSWER, [["Heron"]]),
        (URL, "Done", ReplyAction.ANSWER, [["done"]]),
        (URL, "decline", ReplyAction.DECLINE, []),
        (URL, "what is this page?", ReplyAction.SUPERSEDE, []),
        (AGE, "36", ReplyAction.ANSWER, [["36"]]),
        (AGE, "how old must I be?", ReplyAction.SUPERSEDE, []),
        (AGE, "-1", ReplyAction.SUPERSEDE, []),
    ],
)
def test_new_message_supersedes_waiting_input_unless_the_reply_fits(
    payload: dict[str, Any], text: str, action: ReplyAction, answer: list[list[str]]
) -> None:
    reading = read_reply(prompt(payload), text)
    assert reading.action is action
    assert [entry.answer for entry in reading.answers] == answer


@pytest.mark.parametrize(
    ("payload", "text", "action", "answer"),
    [
        (APPROVAL, "wait, drop prod instead", ReplyAction.ANSWER, [["Deny"]]),
        (
            DEPLOY,
            "actually, deploy the docs first",
            ReplyAction.ANSWER,
            [["actually, deploy the docs first"]] * 2,
        ),
        (URL, "what is this page?", ReplyAction.INVALID, []),
        (AGE, "-1", ReplyAction.INVALID, []),
    ],
)
def test_answer_mode_maps_every_reply_as_seed_000_does(
    payload: dict[str, Any], text: str, action: ReplyAction, answer: list[list[str]]
) -> None:
    reading = read_reply(prompt(payload, ReplyPolicy.ANSWER), text)
    assert reading.action is action
    assert [entry.answer for entry in reading.answers] == answer


def test_an_invalid_form_value_gets_a_notice_naming_the_constraint() -> None:
    reading = read_reply(prompt(AGE, ReplyPolicy.ANSWER), "-1")
    assert reading.notice == "Not taken: age must be at least 0 (minimum 0). The form is still open."


def test_the_reply_to_a_one_property_form_is_its_value() -> None:
    reading = read_reply(prompt(AGE), " 36 ")
    assert (reading.action, reading.content) == (ReplyAction.ANSWER, {"age": 36})


def test_name_value_lines_fill_a_longer_form_in_one_message() -> None:
    reading = read_reply(prompt(PROFILE), "Name: Ada\nage: 36\nteam: blue")
    assert reading.action is ReplyAction.ANSWER
    assert reading.content == {"name": "Ada", "age": 36, "team": "blue"}
    assert [(a.question_id, a.answer) for a in reading.answers] == [
        ("name", ["Ada"]),
        ("age", ["36"]),
        ("team", ["blue"]),
    ]


def test_a_longer_form_is_asked_a_property_at_a_time() -> None:
    asked = prompt(PROFILE)
    first = read_reply(asked, "Ada", draft={})
    assert (first.action, first.draft) == (ReplyAction.STEP, {"name": json.dumps("Ada")})
    assert first.notice == (
        "Next, reply with 2. age — integer: a whole number, at least 0, required\n"
        "That sends the form. To fill team too, reply with a line each:\nage: …\nteam: …"
    )
    second = read_reply(asked, "36", draft=first.draft)
    assert (second.action, second.content) == (ReplyAction.ANSWER, {"name": "Ada", "age": 36})


# Required fields first, last, between optional ones; by lines, by steps, or both.
NOTES = {"type": "string", "title": "Notes"}
MIXED = {
    "kind": "form",
    "message": "Deploy",
    "requested_schema": {
        "type": "object",
        "properties": {
            "env": {"type": "string", "enum": ["staging", "prod"]},
            "notes": NOTES,
            "replicas": {"type": "integer", "minimum": 1},
            "team": {"type": "string"},
            "urgent": {"type": "boolean"},
        },
        "required": ["env", "replicas"],
    },
}


@pytest.mark.parametrize(
    ("payload", "replies", "content"),
    [
        (PROFILE, ["name: Ada\nage: 36"], {"name": "Ada", "age": 36}),
        (PROFILE, ["Age: 36\nname: Ada"], {"name": "Ada", "age": 36}),
        (PROFILE, ["name: Ada", "36"], {"name": "Ada", "age": 36}),
        (MIXED, ["env: prod\nreplicas: 3"], {"env": "prod", "replicas": 3}),
        (MIXED, ["env: prod\nreplicas: 3\nurgent: yes"], {"env": "prod", "replicas": 3, "urgent": True}),
        (MIXED, ["prod", "skip", "3"], {"env": "prod", "replicas": 3}),
        (MIXED, ["prod", "careful", "3"], {"env": "prod", "notes": "careful", "replicas": 3}),
        (MIXED, ["env: prod\nteam: red", "skip", "2"], {"env": "prod", "team": "red", "replicas": 2}),
    ],
)
def test_a_form_is_sent_once_every_required_field_has_a_value(
    payload: dict[str, Any], replies: list[str], content: dict[str, Any]
) -> None:
    asked, draft = prompt(payload), {}
    for reply in replies[:-1]:
        reading = read_reply(asked, reply, draft=draft)
        assert reading.action is ReplyAction.STEP, reading.notice
        draft = {**draft, **reading.draft}
    last = read_reply(asked, replies[-1], draft=draft)
    assert (last.action, last.content) == (ReplyAction.ANSWER, content)


@pytest.mark.parametrize("text", ["decline", " Declined ", "DECLINE"])
@pytest.mark.parametrize("draft", [{}, {"env": json.dumps("prod")}])
def test_decline_typed_on_a_form_declines_it(text: str, draft: dict[str, str]) -> None:
    for policy in ReplyPolicy:
        reading = read_reply(prompt(MIXED, policy), text, draft=draft)
        assert reading.action is ReplyAction.DECLINE


def test_an_invalid_step_keeps_the_form_pending_in_answer_mode() -> None:
    asked = prompt(PROFILE, ReplyPolicy.ANSWER)
    reading = read_reply(asked, "thirty", draft={"name": json.dumps("Ada")})
    assert reading.action is ReplyAction.INVALID
    assert reading.notice == "Not taken: age must be a whole number (integer). The form is still open."


def test_structured_answers_fill_a_form_through_the_same_validator() -> None:
    structured = [
        {"question_id": "name", "answer": ["Ada"]},
        {"question_id": "age", "answer": ["36"]},
        {"question_id": "team", "answer": []},
    ]
    reading = read_reply(prompt(PROFILE), "", structured)
    assert (reading.action, reading.content) == (ReplyAction.ANSWER, {"name": "Ada", "age": 36})
    refused = read_reply(prompt(PROFILE), "", [{**structured[0], "answer": []}, *structured[1:]])
    assert refused.action is ReplyAction.INVALID and "Name is required" in (refused.notice or "")


@pytest.mark.parametrize("payload", [PROFILE, URL])
def test_a_decline_control_declines_a_form_or_url_step(payload: dict[str, Any]) -> None:
    reading = read_reply(prompt(payload, ReplyPolicy.ANSWER), "decline", decline=True)
    assert reading.action is ReplyAction.DECLINE


@pytest.mark.parametrize("text", ["name: decline", "no", "deny"])
def test_other_words_and_a_named_decline_are_a_forms_values(text: str) -> None:
    reading = read_reply(prompt(PROFILE, ReplyPolicy.ANSWER), text, draft={})
    value = text.removeprefix("name: ")
    assert (reading.action, reading.draft) == (ReplyAction.STEP, {"name": json.dumps(value)})


def test_structured_form_values_not_taken_are_named_per_property() -> None:
    structured = [
        {"question_id": "name", "answer": []},
        {"question_id": "age", "answer": ["-3"]},
        {"question_id": "team", "answer": []},
    ]
    reading = read_reply(prompt(PROFILE), "", structured)
    assert reading.action is ReplyAction.INVALID
    assert [(error.property, error.problem) for error in reading.errors] == [
        ("age", "must be at least 0 (minimum 0)"),
    ]
    fixed_age = [structured[0], {**structured[1], "answer": ["3"]}, structured[2]]
    missing = read_reply(prompt(PROFILE), "", fixed_age)
    assert [(error.property, error.problem) for error in missing.errors] == [("name", "is required")]


def test_edited_arguments_the_tools_schema_refuses_are_named_per_argument() -> None:
    schema = {"type": "object", "properties": {"command": {"type": "string", "maxLength": 5}}}
    editable = prompt(APPROVAL).model_copy(
        update={
            "tool_call": ToolCall(name="Bash", arguments={"command": "ls"}),
            "editable": True,
            "input_schema": schema,
        }
    )
    reading = read_reply(editable, "", None, arguments={"command": "rm -rf build"})
    assert reading.action is ReplyAction.INVALID
    assert [error.property for error in reading.errors] == ["command"]
    assert reading.notice is not None and reading.notice.endswith("The approval is still open.")


@pytest.mark.parametrize("text", ["2\nnothing", "1. production\n2. nothing", "2) nothing\n1) 2"])
@pytest.mark.parametrize("policy", list(ReplyPolicy))
def test_a_line_per_question_answers_and_fits_each_question(text: str, policy: ReplyPolicy) -> None:
    reading = read_reply(prompt(DEPLOY, policy), text)
    assert reading.action is ReplyAction.ANSWER
    assert [entry.answer for entry in reading.answers] == [["production"], ["nothing"]]
