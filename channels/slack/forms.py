"""Form prompts and URL steps on Slack: their message controls, the fields modal, and a submitted modal
read back as one shown answer per field. Pure.

A form's message carries **Fill in…** (opens the modal) and **Decline**; a URL step's carries a link
button to its page, **Done** and **Decline**. The modal has one typed input per property, its block id
the property name: a select menu for a choice, a number input, a date picker, an email box, checkboxes
(a multi-select menu past ten) for a list, a checkbox for a yes/no. The inputs carry the schema's limits
so Slack helps the person; whether the values are right is decided by the core's form validator alone.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from channels.slack.control_ids import ACTIONS_BLOCK, FIELD, FIELDS_CALLBACK, ControlRef, Verb, action_id
from channels.slack.controls import (
    MAX_CHECKBOXES,
    button,
    input_block,
    option,
    option_indexes,
    plain,
    shorten,
)
from gateway.sdk import YES, FieldError, FormField, Prompt

FILL_IN, DECLINE, DONE, OPEN_PAGE = "Fill in…", "Decline", "Done", "Open the page"
TEXT_INPUT_LIMIT = 3_000  # Slack's longest plain_text_input
MESSAGE_LIMIT = 3_000  # characters in the modal's section with the form's message
ERROR_LIMIT = 2_000  # characters Slack shows under an input (a view's errors)
MULTILINE_PAST = 150  # a text box taller than one line when the field may be longer than this
_TEXT_STATES = frozenset({"plain_text_input", "email_text_input", "number_input"})


def form_controls(prompt_id: str) -> list[dict[str, Any]]:
    """A form's message controls: Fill in… opens the fields modal; Decline declines the form."""
    ref = ControlRef(prompt_id).encode()
    fill = button(FILL_IN, action_id(Verb.FORM), ref, style="primary")
    decline = button(DECLINE, action_id(Verb.DECLINE), ref)
    return [{"type": "actions", "block_id": ACTIONS_BLOCK, "elements": [fill, decline]}]


def url_controls(prompt_id: str, url: str) -> list[dict[str, Any]]:
    """A URL step's message controls: a link button to the page, then Done and Decline."""
    ref = ControlRef(prompt_id).encode()
    link = button(OPEN_PAGE, action_id(Verb.LINK), ref)
    link["url"] = url
    done = button(DONE, action_id(Verb.DONE), ref, style="primary")
    decline = button(DECLINE, action_id(Verb.DECLINE), ref)
    return [{"type": "actions", "block_id": ACTIONS_BLOCK, "elements": [link, done, decline]}]


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def _choices(field: FormField, picked: list[str]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A field's choices as options valued by index, and the ones among ``picked`` (choice values)."""
    options = [option(choice.label, str(index)) for index, choice in enumerate(field.choices)]
    initial = [options[index] for index, choice in enumerate(field.choices) if choice.value in picked]
    return options, initial


def _string_element(field: FormField) -> dict[str, Any]:
    default = field.default if isinstance(field.default, str) else None
    if field.choices:
        options, initial = _choices(field, [default] if default else [])
        element: dict[str, Any] = {
            "type": "static_select",
            "options": options,
            "placeholder": plain("Choose…"),
        }
        if initial:
            element["initial_option"] = initial[0]
        return element
    if field.format == "date":
        return {"type": "datepicker", **({"initial_date": default} if default else {})}
    if field.format == "date-time":
        element = {"type": "datetimepicker"}
        if default:
            moment = datetime.fromisoformat(default.replace("Z", "+00:00"))
            element["initial_date_time"] = int(moment.timestamp())
        return element
    if field.format == "email":
        return {"type": "email_text_input", **({"initial_value": default} if default else {})}
    longest = min(field.max_length if field.max_length is not None else TEXT_INPUT_LIMIT, TEXT_INPUT_LIMIT)
    element = {"type": "plain_text_input", "multiline": longest > MULTILINE_PAST, "max_length": longest}
    if field.min_length:
        element["min_length"] = min(field.min_length, TEXT_INPUT_LIMIT)
    if default:
        element["initial_value"] = default
    return element


def field_element(field: FormField) -> dict[str, Any]:
    """The typed input for one property, carrying its limits (``action_id`` added by the caller)."""
    if field.type == "string":
        return _string_element(field)
    if field.type in ("integer", "number"):
        element: dict[str, Any] = {"type": "number_input", "is_decimal_allowed": field.type == "number"}
        for key, bound in (("min_value", field.minimum), ("max_value", field.maximum)):
            if bound is not None:
                element[key] = _number(bound)
        if field.default is not None:
            element["initial_value"] = _number(field.default)
        return element
    if field.type == "boolean":
        yes = option(YES, "0")  # valued by index, as every option here
        return {
            "type": "checkboxes",
            "options": [yes],
            **({"initial_options": [yes]} if field.default else {}),
        }
    options, initial = _choices(field, field.default if isinstance(field.default, list) else [])
    if len(options) <= MAX_CHECKBOXES:
        element = {"type": "checkboxes", "options": options}
    else:
        element = {"type": "multi_static_select", "options": options, "placeholder": plain("Choose any…")}
    if initial:
        element["initial_options"] = initial
    return element


def field_block(field: FormField) -> dict[str, Any]:
    """One property's input block: labelled with its title, its description as the hint.

    A yes/no checkbox is never required by Slack: left unticked, it answers No.
    """
    element = {**field_element(field), "action_id": FIELD}
    optional = field.type == "boolean" or not field.required
    return input_block(field.name, field.title, element, optional=optional, hint=field.description)


def fields_view(prompt: Prompt) -> dict[str, Any]:
    """The modal that fills in a form prompt: its message, then an input per property."""
    message = {"type": "section", "text": plain(shorten(prompt.message or "", MESSAGE_LIMIT))}
    return {
        "type": "modal",
        "callback_id": FIELDS_CALLBACK,
        "private_metadata": prompt.prompt_id,
        "title": plain("Form"),
        "submit": plain("Submit"),
        "close": plain("Cancel"),
        "blocks": [message, *(field_block(field) for field in prompt.form_fields())],
    }


def _shown(field: FormField, state: dict[str, Any]) -> list[str] | None:
    """What one input holds, as people see it (a choice's title, Yes/No, the text typed); None when the
    input is not the one this field was given."""
    expected = field_element(field)["type"]
    if state.get("type") != expected:
        return None
    if expected in _TEXT_STATES:
        value = state.get("value")
        return [value] if isinstance(value, str) and value else []
    if expected == "datepicker":
        day = state.get("selected_date")
        return [day] if isinstance(day, str) and day else []
    if expected == "datetimepicker":
        moment = state.get("selected_date_time")
        if not isinstance(moment, int) or isinstance(moment, bool):
            return []
        return [datetime.fromtimestamp(moment, UTC).isoformat().replace("+00:00", "Z")]
    if field.type == "boolean":
        ticked = option_indexes(state, 1)
        return None if ticked is None else [YES if ticked else "No"]
    indexes = option_indexes(state, len(field.choices))
    return None if indexes is None else [field.choices[index].label for index in indexes]


def read_fields(prompt: Prompt, values: dict[str, Any]) -> list[list[str]] | None:
    """One shown answer per property from a submitted modal's ``state.values``, in the form's order.

    None when the submission does not fit the form (an input missing or of another kind, an option out
    of range): it is refused, never handed to the core.
    """
    answers: list[list[str]] = []
    for field in prompt.form_fields():
        state = (values.get(field.name) or {}).get(FIELD)
        shown = _shown(field, state) if isinstance(state, dict) else None
        if shown is None:
            return None
        answers.append(shown)
    return answers


def block_errors(prompt: Prompt, errors: tuple[FieldError, ...], notice: str | None) -> dict[str, str]:
    """The core's reasons for not taking a form's values, by block (``response_action: errors``): each
    under its property's input; one that names no input, under the first."""
    names = [field.name for field in prompt.form_fields()]
    shown: dict[str, str] = {}
    for error in errors:
        block = error.property if error.property in names else names[0]
        sentence = f"{error.problem[:1].upper()}{error.problem[1:]}."
        shown[block] = f"{shown[block]} {sentence}" if block in shown else sentence
    if not shown:
        shown[names[0]] = notice or "This was not taken; check the values and submit again."
    return {block: shorten(text, ERROR_LIMIT) for block, text in shown.items()}
