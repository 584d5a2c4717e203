"""An approval's two forms on Discord: Deny with reason… (one text field) and Edit and approve… (a text field
per argument of the call), read back for the core's answer step. Pure.

A Discord form holds five fields. A call of up to five arguments gets a field each; a longer one gets a
field for each of its first four and a fifth holding the rest as one JSON object (an argument left out of
it keeps its value). An argument whose value does not fit a field (4,000 characters) is kept as it is; a
typed ``edit {…}`` can still change it. Each field starts with the argument's value, text as it is and
anything else as JSON. What comes back is read by the core as a typed ``name: value`` line is (text where
the argument was text, else JSON) and checked against the tool's schema there.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import discord

from channels.discord.choices import FieldValue, Refused
from channels.discord.control_ids import NOTE_FIELD, Action, ControlId, field_id
from gateway.sdk import MAX_NOTE_CHARS, Prompt, PromptKind, notices, parse_typed, shorten

MAX_FIELDS = 5  # a form's components
MAX_TEXT_INPUT = 4000
MAX_TITLE = 45  # a form's title, and a field's label
MAX_LABEL_DESCRIPTION = 100
SHORT_TEXT = 100  # up to this many characters (and one line) a field is one line high
ARGUMENT = "arg"  # the fields of the edit form are arg:<i>, in the call's order
REST = "rest"  # the field holding the rest of a long call, as JSON
REASON_TITLE, EDIT_TITLE = "Deny with a reason", "Edit and approve"
REASON_LABEL = "Reason"
REST_LABEL = "Other arguments (JSON)"
JSON_HINT = "Written as JSON (a number, true or false, a list, an object)."


@dataclass(frozen=True, slots=True)
class EditLayout:
    """Which arguments of the call the edit form shows: each with a field of its own (``own``), together
    as one JSON object (``rest``), or not at all (``kept``, too long for a field)."""

    own: list[str]
    rest: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)


def check_opens(prompt: Prompt, control: ControlId) -> None:
    """Deny with reason… is on every approval; Edit and approve… only on one whose call may be edited."""
    if prompt.kind is not PromptKind.APPROVAL:
        raise Refused()
    if control.action is Action.EDIT and (not prompt.editable or prompt.tool_call is None):
        raise Refused()


# Deny with reason… -------------------------------------------------------------------------------------


def reason_form(prompt: Prompt) -> discord.ui.Modal:
    """The form that denies ``prompt`` with the reason typed in its one field."""
    modal = discord.ui.Modal(title=REASON_TITLE, custom_id=ControlId(Action.NOTE, prompt.prompt_id).encode())
    question = prompt.questions[0].question if prompt.questions else ""
    box: discord.ui.TextInput[Any] = discord.ui.TextInput(
        custom_id=NOTE_FIELD,
        style=discord.TextStyle.paragraph,
        required=True,
        max_length=min(MAX_NOTE_CHARS, MAX_TEXT_INPUT),
    )
    description = shorten(question, MAX_LABEL_DESCRIPTION) or None
    modal.add_item(discord.ui.Label(text=REASON_LABEL, description=description, component=box))
    return modal


def read_reason(submitted: Mapping[str, FieldValue]) -> str:
    """The reason a submitted deny form gives; Refused when its field is not there."""
    reason = submitted.get(NOTE_FIELD)
    if not isinstance(reason, str):
        raise Refused()
    return reason


# Edit and approve… -------------------------------------------------------------------------------------


def _arguments(prompt: Prompt) -> dict[str, Any]:
    return dict(prompt.tool_call.arguments) if prompt.tool_call is not None else {}


def _shown(value: Any, *, indent: int | None = None) -> str:
    """An argument as its field starts: text as it is, anything else as JSON."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, indent=indent)


def _rest_text(arguments: dict[str, Any], names: list[str]) -> str:
    return json.dumps({name: arguments[name] for name in names}, ensure_ascii=False, indent=2)


def layout(prompt: Prompt) -> EditLayout:
    """How the call's arguments fit the form's five fields (see the module's docstring)."""
    arguments = _arguments(prompt)
    fitting = [name for name, value in arguments.items() if len(_shown(value)) <= MAX_TEXT_INPUT]
    kept = [name for name in arguments if name not in fitting]
    if len(fitting) <= MAX_FIELDS:
        return EditLayout(fitting, kept=kept)
    own, rest = fitting[: MAX_FIELDS - 1], fitting[MAX_FIELDS - 1 :]
    if len(_rest_text(arguments, rest)) > MAX_TEXT_INPUT:  # too long together: five of their own
        return EditLayout(fitting[:MAX_FIELDS], kept=[*fitting[MAX_FIELDS:], *kept])
    return EditLayout(own, rest, kept)


def _description(prompt: Prompt, name: str, value: Any) -> str | None:
    """What the field's label says under it: the schema's words for the argument, or how to write it."""
    properties = (prompt.input_schema or {}).get("properties")
    described = properties.get(name) if isinstance(properties, dict) else None
    words = described.get("description") if isinstance(described, dict) else None
    if isinstance(words, str) and words.strip():
        return shorten(words, MAX_LABEL_DESCRIPTION)
    return None if isinstance(value, str) else JSON_HINT


def _box(custom_id: str, shown: str, *, required: bool) -> discord.ui.TextInput[Any]:
    short = len(shown) <= SHORT_TEXT and "\n" not in shown
    return discord.ui.TextInput(
        custom_id=custom_id,
        style=discord.TextStyle.short if short else discord.TextStyle.paragraph,
        default=shown or None,
        required=required,
        max_length=MAX_TEXT_INPUT,
    )


def edit_form(prompt: Prompt) -> discord.ui.Modal:
    """The form that approves ``prompt``'s call with its arguments as edited."""
    modal = discord.ui.Modal(title=EDIT_TITLE, custom_id=ControlId(Action.EDITED, prompt.prompt_id).encode())
    arguments, fits = _arguments(prompt), layout(prompt)
    for index, name in enumerate(fits.own):
        value = arguments[name]
        # A text argument may be emptied; anything else must still be written as something.
        box = _box(field_id(ARGUMENT, index), _shown(value), required=not isinstance(value, str))
        label = shorten(name, MAX_TITLE)
        modal.add_item(
            discord.ui.Label(text=label, description=_description(prompt, name, value), component=box)
        )
    if fits.rest:
        box = _box(REST, _rest_text(arguments, fits.rest), required=True)
        names = shorten(f"{', '.join(fits.rest)}; one left out keeps its value", MAX_LABEL_DESCRIPTION)
        modal.add_item(discord.ui.Label(text=REST_LABEL, description=names, component=box))
    return modal


def read_edit(prompt: Prompt, submitted: Mapping[str, FieldValue]) -> dict[str, list[str]]:
    """The call's arguments a submitted edit form gives, as typed (``{name: [value]}``, for the core to
    read); Refused when a field is missing, or the rest is not a JSON object (saying so)."""
    fits = layout(prompt)
    fields: dict[str, list[str]] = {}
    if fits.rest:
        fields.update(_read_rest(submitted.get(REST)))
    for index, name in enumerate(fits.own):  # an argument's own field wins over the same name in the rest
        value = submitted.get(field_id(ARGUMENT, index))
        if not isinstance(value, str):
            raise Refused()
        fields[name] = [value]
    return fields


def _read_rest(raw: FieldValue | None) -> dict[str, list[str]]:
    if not isinstance(raw, str):
        raise Refused()
    try:
        rest = parse_typed(raw)
    except ValueError as exc:
        raise Refused(notices.edit_not_taken(notices.not_json(str(exc)))) from None
    if not isinstance(rest, dict):
        raise Refused(notices.edit_not_taken(notices.REST_NOT_AN_OBJECT))
    return {str(name): [_shown(value)] for name, value in rest.items()}
