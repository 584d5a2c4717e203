"""An approval's card actions on Teams, and what they send back, read for the core's answer step. Pure.

Approve and Deny are buttons. Deny with reason… is an ``Action.ShowCard`` holding a text box and the
``Action.Execute`` that denies with its text as the note. Where the call may be edited, Edit and approve…
is another, holding an input per argument (a toggle for true/false, else a text box with the value: text
as it is, anything else as JSON) and Approve with edits. The core reads each value as a typed
``name: value`` line is (text where the argument was text, else JSON) and checks the call against the
tool's schema. A card has room for so much: past ``EDIT_BUDGET`` characters of arguments (or
``MAX_ARGUMENT_INPUTS`` of them) the rest are kept as they are, and a line says which.
"""

from __future__ import annotations

import json
from typing import Any

from microsoft_teams.cards import (
    AdaptiveCard,
    CardElement,
    ExecuteAction,
    ShowCardAction,
    TextBlock,
    TextInput,
    ToggleInput,
)

from channels.teams.control_ids import NOTE_ID, REF_KEY, ControlRef, Verb, argument_id, verb
from gateway.sdk import MAX_NOTE_CHARS, Prompt, ToolCall, notices, shorten

LABEL_LIMIT = 200
INPUT_TEXT_LIMIT = 4_096  # the longest value a text box takes
MULTILINE_PAST = 80
EDIT_BUDGET = 8_000  # characters of argument values a card carries in its edit inputs (Teams: ~28 KB)
MAX_ARGUMENT_INPUTS = 20
APPROVE, DENY = "Approve", "Deny"
DENY_WITH_REASON, SEND_REASON, REASON_LABEL = "Deny with reason…", "Deny with reason", "Reason"
EDIT_AND_APPROVE, SEND_EDIT = "Edit and approve…", "Approve with edits"
KEPT = "Kept as they are (too long to edit here; reply edit {…} to change them): "


def _execute(title: str, action: Verb, ref: ControlRef, style: str | None = None) -> ExecuteAction:
    button = ExecuteAction(title=title, verb=verb(action), data={REF_KEY: ref.encode()})
    if style is not None:
        button.style = style  # type: ignore[assignment]
    return button


def _shown(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def editable(arguments: dict[str, Any]) -> tuple[list[str], list[str]]:
    """The arguments the card has an input for, in the call's order, and those kept as they are."""
    inputs: list[str] = []
    kept: list[str] = []
    spent = 0
    for name, value in arguments.items():
        size = len(_shown(value))
        fits = size <= INPUT_TEXT_LIMIT and spent + size <= EDIT_BUDGET and len(inputs) < MAX_ARGUMENT_INPUTS
        (inputs if fits else kept).append(name)
        spent += size if fits else 0
    return inputs, kept


def _argument_input(index: int, name: str, value: Any) -> CardElement:
    label = shorten(name, LABEL_LIMIT)
    if isinstance(value, bool):
        return ToggleInput(
            id=argument_id(index),
            label=label,
            title=label,
            value="true" if value else "false",
            value_on="true",
            value_off="false",
        )
    shown = _shown(value)
    return TextInput(
        id=argument_id(index),
        label=label,
        value=shown or None,
        max_length=INPUT_TEXT_LIMIT,
        is_multiline=len(shown) > MULTILINE_PAST or "\n" in shown or not isinstance(value, str) or None,
        placeholder=None if isinstance(value, str) else "JSON",
    )


def approval_actions(
    ref: ControlRef, tool_call: ToolCall | None, *, can_edit: bool, grantable: bool
) -> list[Any]:
    """Approve, Deny, Approve for this session (``grantable``: a call one approver settles), Deny with
    reason… and (``can_edit``) Edit and approve…."""
    reason = TextInput(
        id=NOTE_ID,
        label=REASON_LABEL,
        is_multiline=True,
        is_required=True,
        error_message=notices.EMPTY_TEXT,
        max_length=MAX_NOTE_CHARS,
    )
    reason_card = AdaptiveCard(
        body=[reason], actions=[_execute(SEND_REASON, Verb.REASON, ref, "destructive")]
    )
    actions: list[Any] = [
        _execute(APPROVE, Verb.PICK, ControlRef(ref.prompt_id, 0, 0), "positive"),
        _execute(DENY, Verb.PICK, ControlRef(ref.prompt_id, 0, 1), "destructive"),
    ]
    if grantable:
        actions.append(_execute(notices.APPROVE_FOR_SESSION, Verb.SESSION, ControlRef(ref.prompt_id, 0, 0)))
    actions.append(ShowCardAction(title=DENY_WITH_REASON, card=reason_card))
    if can_edit and tool_call is not None:
        inputs, kept = editable(tool_call.arguments)
        body = [_argument_input(index, name, tool_call.arguments[name]) for index, name in enumerate(inputs)]
        if kept:
            body.append(
                TextBlock(text=shorten(KEPT + ", ".join(kept), LABEL_LIMIT), wrap=True, is_subtle=True)
            )
        if body:
            edit_card = AdaptiveCard(body=body, actions=[_execute(SEND_EDIT, Verb.EDIT, ref, "positive")])
            actions.append(ShowCardAction(title=EDIT_AND_APPROVE, card=edit_card))
    return actions


def read_reason(data: dict[str, Any]) -> str | None:
    """The reason a Deny with reason press sends ('' when empty); None when it is not text."""
    reason = data.get(NOTE_ID, "")
    return reason if isinstance(reason, str) else None


def read_edit(prompt: Prompt, data: dict[str, Any]) -> dict[str, list[str]] | None:
    """The call's arguments as an Approve with edits press types them (``{name: [value]}``, for the core to
    read); an input the press does not carry keeps its argument as it is. None when a value is not text."""
    arguments = prompt.tool_call.arguments if prompt.tool_call is not None else {}
    fields: dict[str, list[str]] = {}
    for index, name in enumerate(editable(arguments)[0]):
        value = data.get(argument_id(index))
        if value is None:
            continue
        if not isinstance(value, str):
            return None
        fields[name] = [value]
    return fields
