"""Slack's form and URL step controls as pure functions: the exact blocks and modal a prompt gets, what a
submitted modal answers, where the core's refusals show, and how an answered form reads in the thread."""

from __future__ import annotations

from typing import Any

from channels.slack.control_ids import ControlRef, Verb
from channels.slack.controls import opens_form
from channels.slack.forms import block_errors, fields_view, form_controls, read_fields, url_controls
from channels.slack.render import render_item, render_settled
from gateway.base.forms import FieldError
from gateway.base.models import Answer, PromptState
from gateway.rules.render import pending_prompt_item, resolved_item, settled_prompt_item
from tests.support.new_kinds import FORM, URL, prompt_of

THREAD = "slack:C0TEAM:1712345678.000100"
PID = "prm_01J0000000000000000000FORM"
TRIP: dict[str, Any] = {
    "kind": "form",
    "message": "Plan the trip",
    "requested_schema": {
        "type": "object",
        "properties": {
            "city": {
                "type": "string",
                "title": "City",
                "oneOf": [{"const": "ber", "title": "Berlin"}],
                "default": "ber",
            },
            "nights": {"type": "integer", "title": "Nights", "minimum": 1, "maximum": 14, "default": 2},
            "budget": {"type": "number", "title": "Budget"},
            "window": {"type": "boolean", "title": "Window seat", "default": True},
            "stops": {
                "type": "array",
                "title": "Stops",
                "items": {"type": "string", "enum": [f"s{n}" for n in range(11)]},
                "default": ["s1"],
            },
            "leave": {
                "type": "string",
                "title": "Leave at",
                "format": "date-time",
                "default": "2025-03-01T08:00:00Z",
            },
            "name": {
                "type": "string",
                "title": "Name",
                "description": "As on the passport",
                "minLength": 2,
                "maxLength": 40,
            },
        },
        "required": ["city", "name"],
    },
}


def plain(text: str) -> dict[str, Any]:
    return {"type": "plain_text", "text": text, "emoji": False}


def option(text: str, value: str) -> dict[str, Any]:
    return {"text": plain(text), "value": value}


def test_a_form_message_offers_fill_in_and_decline() -> None:
    assert form_controls(PID) == [
        {
            "type": "actions",
            "block_id": "tg.buttons",
            "elements": [
                {
                    "type": "button",
                    "text": plain("Fill in…"),
                    "action_id": "tg.form",
                    "value": PID,
                    "style": "primary",
                },
                {"type": "button", "text": plain("Decline"), "action_id": "tg.decline", "value": PID},
            ],
        }
    ]


def test_a_url_step_message_offers_its_link_done_and_decline() -> None:
    assert url_controls(PID, "https://example.com/c") == [
        {
            "type": "actions",
            "block_id": "tg.buttons",
            "elements": [
                {
                    "type": "button",
                    "text": plain("Open the page"),
                    "action_id": "tg.link",
                    "value": PID,
                    "url": "https://example.com/c",
                },
                {
                    "type": "button",
                    "text": plain("Done"),
                    "action_id": "tg.done",
                    "value": PID,
                    "style": "primary",
                },
                {"type": "button", "text": plain("Decline"), "action_id": "tg.decline", "value": PID},
            ],
        }
    ]


def test_the_fields_modal_has_a_typed_input_per_property_with_its_limits_and_defaults() -> None:
    stops = [option(f"s{n}", str(n)) for n in range(11)]
    assert fields_view(prompt_of(TRIP, THREAD)) == {
        "type": "modal",
        "callback_id": "tg.fields",
        "private_metadata": PID,
        "title": plain("Form"),
        "submit": plain("Submit"),
        "close": plain("Cancel"),
        "blocks": [
            {"type": "section", "text": plain("Plan the trip")},
            {
                "type": "input",
                "block_id": "city",
                "label": plain("City"),
                "element": {
                    "type": "static_select",
                    "options": [option("Berlin", "0")],
                    "placeholder": plain("Choose…"),
                    "initial_option": option("Berlin", "0"),
                    "action_id": "value",
                },
                "optional": False,
            },
            {
                "type": "input",
                "block_id": "nights",
                "label": plain("Nights"),
                "element": {
                    "type": "number_input",
                    "is_decimal_allowed": False,
                    "min_value": "1",
                    "max_value": "14",
                    "initial_value": "2",
                    "action_id": "value",
                },
                "optional": True,
            },
            {
                "type": "input",
                "block_id": "budget",
                "label": plain("Budget"),
                "element": {"type": "number_input", "is_decimal_allowed": True, "action_id": "value"},
                "optional": True,
            },
            {
                "type": "input",
                "block_id": "window",
                "label": plain("Window seat"),
                "element": {
                    "type": "checkboxes",
                    "options": [option("Yes", "0")],
                    "initial_options": [option("Yes", "0")],
                    "action_id": "value",
                },
                "optional": True,
            },
            {
                "type": "input",
                "block_id": "stops",
                "label": plain("Stops"),
                "element": {
                    "type": "multi_static_select",
                    "options": stops,
                    "placeholder": plain("Choose any…"),
                    "initial_options": [stops[1]],
                    "action_id": "value",
                },
                "optional": True,
            },
            {
                "type": "input",
                "block_id": "leave",
                "label": plain("Leave at"),
                "element": {"type": "datetimepicker", "initial_date_time": 1740816000, "action_id": "value"},
                "optional": True,
            },
            {
                "type": "input",
                "block_id": "name",
                "label": plain("Name"),
                "element": {
                    "type": "plain_text_input",
                    "multiline": False,
                    "max_length": 40,
                    "min_length": 2,
                    "action_id": "value",
                },
                "optional": False,
                "hint": plain("As on the passport"),
            },
        ],
    }


def state(kind: str, **fields: Any) -> dict[str, Any]:
    return {"value": {"type": kind, **fields}}


TRIP_VALUES = {
    "city": state("static_select", selected_option=option("Berlin", "0")),
    "nights": state("number_input", value="3"),
    "budget": state("number_input", value=None),
    "window": state("checkboxes", selected_options=[]),
    "stops": state("multi_static_select", selected_options=[option("s2", "2"), option("s10", "10")]),
    "leave": state("datetimepicker", selected_date_time=1740816000),
    "name": state("plain_text_input", value="Ada"),
}


def test_a_submitted_modal_reads_as_one_shown_answer_per_property() -> None:
    assert read_fields(prompt_of(TRIP, THREAD), TRIP_VALUES) == [
        ["Berlin"],
        ["3"],
        [],
        ["No"],  # an unticked yes/no box
        ["s2", "s10"],
        ["2025-03-01T08:00:00Z"],
        ["Ada"],
    ]


def test_a_submission_that_does_not_fit_the_form_is_refused() -> None:
    trip = prompt_of(TRIP, THREAD)
    forged = {**TRIP_VALUES, "city": state("static_select", selected_option=option("Paris", "7"))}
    retyped = {**TRIP_VALUES, "nights": state("plain_text_input", value="3")}
    missing = {name: value for name, value in TRIP_VALUES.items() if name != "name"}
    assert [read_fields(trip, values) for values in (forged, retyped, missing)] == [None, None, None]


def test_the_cores_refusals_show_under_their_inputs_and_one_naming_no_input_under_the_first() -> None:
    trip = prompt_of(TRIP, THREAD)
    errors = (
        FieldError("nights", "must be at most 14 (maximum 14)"),
        FieldError("extra", "is not a field of this form"),
    )
    assert block_errors(trip, errors, None) == {
        "nights": "Must be at most 14 (maximum 14).",
        "city": "Is not a field of this form.",
    }
    assert block_errors(trip, (), "Not taken.") == {"city": "Not taken."}


def test_a_form_opens_its_fields_modal_and_a_url_step_none() -> None:
    form, url = prompt_of(FORM, THREAD), prompt_of(URL, THREAD)
    ref = ControlRef(PID)
    assert [opens_form(form, Verb.FORM, ref), opens_form(url, Verb.FORM, ref)] == [True, False]
    assert opens_form(form, Verb.OTHER, ControlRef(PID, 0)) is False


def answered_form() -> Any:
    form = prompt_of(FORM, THREAD)
    return form.model_copy(
        update={
            "prompt_state": PromptState.ANSWERED,
            "answers": [
                Answer(question="Environment", question_id="env", answer=["prod"]),
                Answer(question="replicas", question_id="replicas", answer=[]),
            ],
            "content": {"env": "prod"},
        }
    )


def test_an_answered_forms_audit_item_lists_each_field_with_its_value() -> None:
    [message] = render_item(resolved_item(answered_form()))
    assert message.blocks == [
        {"type": "section", "text": plain("✓ Answered\nEnvironment: prod\nreplicas: —")}
    ]


def test_a_settled_forms_message_keeps_the_form_text_above_its_fields_values() -> None:
    settled = render_settled(settled_prompt_item(answered_form()))
    assert settled.blocks[0]["text"]["text"].endswith(
        "at least 1, optional\n\n✓ Answered\nEnvironment: prod\nreplicas: —"
    )
    assert [block["type"] for block in settled.blocks] == ["section"]


def test_a_pending_form_is_posted_as_its_text_then_fill_in_and_decline() -> None:
    [message] = render_item(pending_prompt_item(prompt_of(FORM, THREAD)))
    assert message.blocks[1:] == form_controls(PID)
