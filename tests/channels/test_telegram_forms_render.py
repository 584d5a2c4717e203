"""Telegram forms and URL steps as pure data: the messages byte for byte, a keyboard per field type, the
controls a form or URL step accepts, what each press says as typed text, and the audit line a field a
line. Callback data stays within Telegram's 64 bytes for the largest form."""

from __future__ import annotations

from typing import Any

import pytest

from channels.telegram.control_ids import MAX_BYTES, Action, decode
from channels.telegram.forms import (
    FORM_HINT,
    URL_HINT,
    StepView,
    keyboard,
    linkable,
    messages,
)
from channels.telegram.render import render_item, settled_text
from gateway.base.models import Answer, Prompt, PromptState
from gateway.rules.render import pending_prompt_item, resolved_item, settled_prompt_item
from tests.support.new_kinds import FORM, FORM_TEXT, URL, URL_TEXT, prompt_of

PROMPT_ID = "prm_01J0000000000000000000FORM"
DM, GROUP = "telegram:111", "telegram:-100500"


def view_of(payload: dict[str, Any]) -> StepView:
    prompt = prompt_of(payload, DM)
    item = pending_prompt_item(prompt)
    view = StepView.of_metadata(item.metadata, item.text)
    assert view is not None
    return view


def rows(view: StepView, step: int = 0, ticked: frozenset[int] = frozenset()) -> list[list[str]]:
    return [[button.text for button in row] for row in keyboard(view, step, ticked)]


def field_form(schema: dict[str, Any], required: bool = True) -> dict[str, Any]:
    properties = {"x": schema, "y": {"type": "string"}}
    return {
        "kind": "form",
        "message": "M",
        "requested_schema": {"type": "object", "properties": properties, "required": ["x"] * required},
    }


def test_a_form_in_a_private_chat_is_its_text_with_the_field_line_and_the_fields_buttons() -> None:
    [only] = messages(view_of(FORM), reply_to=7)

    assert only.text == f"{FORM_TEXT}\n\n▶ Field 1 of 2: Environment — pick one, required"
    assert only.reply_to == 7 and not only.force_reply
    assert only.keyboard is not None
    assert [[(b.text, decode(b.data).action) for b in row] for row in only.keyboard] == [
        [("1. stg", Action.PICK)],
        [("2. prod", Action.PICK)],
        [("✗ Decline", Action.DECLINE)],
    ]


def test_a_form_in_a_group_asks_for_a_reply_and_its_buttons_follow() -> None:
    question, buttons = messages(view_of(FORM), reply_to=7, group=True)

    assert (question.text, question.force_reply, question.reply_to) == (FORM_TEXT, True, 7)
    assert buttons.text == f"{FORM_HINT}\n\n▶ Field 1 of 2: Environment — pick one, required"
    assert buttons.keyboard is not None and not buttons.force_reply


def test_a_url_step_is_its_text_with_a_link_done_and_decline() -> None:
    [only] = messages(view_of(URL))

    assert only.text == URL_TEXT
    assert only.keyboard is not None
    [[link], [done, decline]] = only.keyboard
    assert (link.text, link.url, link.data) == ("Open link", "https://example.com/c", "")
    assert [(b.text, decode(b.data).action) for b in (done, decline)] == [
        ("✓ Done", Action.DONE),
        ("✗ Decline", Action.DECLINE),
    ]
    [_question, group_buttons] = messages(view_of(URL), group=True)
    assert group_buttons.text == URL_HINT


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://example.com/c", True),
        ("https://localhost/c", False),  # Telegram refuses a host without a dot
        ("http://127.0.0.1:8080/setup", False),  # opens nothing on the person's phone
    ],
)
def test_only_https_links_to_a_dotted_host_get_a_link_button(url: str, expected: bool) -> None:
    assert linkable(url) is expected


@pytest.mark.parametrize(
    ("schema", "required", "expected"),
    [
        ({"type": "boolean"}, True, [["Yes", "No"], ["✗ Decline"]]),
        (
            {"type": "string", "oneOf": [{"const": "a", "title": "Alpha"}]},
            True,
            [["1. Alpha"], ["✗ Decline"]],
        ),
        ({"type": "integer", "minimum": 1}, True, [["✎ Answer…"], ["✗ Decline"]]),
        ({"type": "string", "format": "date"}, False, [["✎ Answer…"], ["Skip", "✗ Decline"]]),
        (
            {"type": "array", "items": {"enum": ["a", "b"]}},
            True,
            [["1. a"], ["✓ 2. b"], ["Submit"], ["✗ Decline"]],
        ),
    ],
)
def test_each_field_type_has_its_buttons(schema: dict[str, Any], required: bool, expected: Any) -> None:
    assert rows(view_of(field_form(schema, required)), 0, frozenset({1})) == expected


def test_every_button_of_the_largest_form_fits_telegrams_64_bytes() -> None:
    choices = [f"{index:02d} " + "é" * 97 for index in range(25)]
    properties = {f"field_{index}": {"type": "array", "items": {"enum": choices}} for index in range(10)}
    view = view_of(
        {"kind": "form", "message": "M", "requested_schema": {"type": "object", "properties": properties}}
    )

    sizes = [len(b.data.encode()) for step in range(10) for row in keyboard(view, step) for b in row]

    assert len(sizes) == 10 * (25 + 1 + 2)  # choices, Submit, Skip and Decline
    assert max(sizes) <= MAX_BYTES


def answered_form() -> Prompt:
    prompt = prompt_of(FORM, DM)
    return prompt.model_copy(
        update={
            "prompt_state": PromptState.ANSWERED,
            "content": {"env": "prod"},
            "answers": [
                Answer(question="Environment", question_id="env", answer=["prod"]),
                Answer(question="replicas", question_id="replicas", answer=[]),
            ],
        }
    )


def test_an_answered_forms_audit_line_shows_a_field_a_line() -> None:
    [audit] = render_item(resolved_item(answered_form()), reply_to=9)

    assert (audit.text, audit.reply_to) == ("✓ Answered:\nEnvironment: prod\nreplicas: (no selection)", 9)


def test_an_answered_form_message_keeps_its_text_and_ends_with_its_fields() -> None:
    assert settled_text(settled_prompt_item(answered_form())) == (
        f"{FORM_TEXT}\n\n✓ Answered:\nEnvironment: prod\nreplicas: (no selection)"
    )


def test_other_settled_items_keep_their_one_line_outcome() -> None:
    url = prompt_of(URL, DM).model_copy(
        update={
            "prompt_state": PromptState.ANSWERED,
            "answers": [Answer(question="Connect your GitHub account", question_id="q1", answer=["done"])],
        }
    )
    assert settled_text(resolved_item(url)) == "✓ Answered: done"
    declined = prompt_of(FORM, DM).model_copy(
        update={"prompt_state": PromptState.CANCELLED, "reason": "the person declined to answer"}
    )
    assert settled_text(settled_prompt_item(declined)).endswith(
        "\n\n✗ Cancelled: the person declined to answer"
    )


def test_a_question_prompts_metadata_is_not_a_step_view() -> None:
    item = pending_prompt_item(prompt_of({"kind": "text", "questions": [{"question": "Why?"}]}, DM))
    assert StepView.of_metadata(item.metadata, item.text) is None
