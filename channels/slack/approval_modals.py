"""An approval's two modals: Deny with reason… (one text box) and Edit and approve… (an input per argument
of the call), read back as the note or the arguments the core decides on. Pure.

The edit modal types each argument by its current value: text a text box (several lines when long), a
number a number input, true/false a select, anything else its JSON in a text box. Read back, numbers are
numbers again and JSON is parsed; whether the call as edited may run is the core's to decide (the tool's
``input_schema``), and what it refuses is shown under the argument's input. The prompt id rides in
``private_metadata``; the reason box is block ``note``, the arguments are blocks ``a<i>`` in the call's order.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from channels.slack.control_ids import EDIT_CALLBACK, FIELD, NOTE, REASON_CALLBACK
from channels.slack.controls import LABEL_LIMIT, input_block, option, plain, shorten
from gateway.sdk import MAX_NOTE_CHARS, FieldError, Prompt, notices, parse_typed

TEXT_INPUT_LIMIT = 3_000  # Slack's longest plain_text_input (and its initial value)
SECTION_LIMIT = 3_000  # characters in a section block's text
ERROR_LIMIT = 2_000  # characters Slack shows under an input
MULTILINE_PAST = 150  # a text box taller than one line past this many characters
MAX_ARGUMENT_INPUTS = 95  # a modal takes 100 blocks: the rest of a huge call is kept as it is
REASON_LABEL = "Reason"
KEPT_NOTE = "Kept as they are (too long to edit here): "
_INTEGER = re.compile(r"[+-]?\d{1,300}")
_DECIMAL = re.compile(r"[+-]?(?:\d{1,300}(?:\.\d{0,300})?|\.\d{1,300})(?:[eE][+-]?\d{1,3})?")


@dataclass(frozen=True, slots=True)
class EditReading:
    """A submitted edit modal: the call's arguments as edited, or errors by block id to show in it.

    ``arguments`` is None when the submission does not fit the call (an input missing or of another
    kind): it is refused, not shown as an error.
    """

    arguments: dict[str, Any] | None
    errors: dict[str, str] = field(default_factory=dict)


def _modal(
    callback: str, prompt: Prompt, title: str, submit: str, blocks: list[dict[str, Any]]
) -> dict[str, Any]:
    return {
        "type": "modal",
        "callback_id": callback,
        "private_metadata": prompt.prompt_id,
        "title": plain(title),
        "submit": plain(submit),
        "close": plain("Cancel"),
        "blocks": blocks,
    }


def _question(prompt: Prompt) -> list[dict[str, Any]]:
    """The approval's question, atop its modals."""
    texts = [question.question for question in prompt.questions[:1]]
    return [{"type": "section", "text": plain(shorten(text, SECTION_LIMIT))} for text in texts]


# Deny with reason… -------------------------------------------------------------------------------------


def reason_view(prompt: Prompt) -> dict[str, Any]:
    """The modal that denies ``prompt`` with the reason typed in its one box."""
    box = {
        "type": "plain_text_input",
        "action_id": NOTE,
        "multiline": True,
        "max_length": MAX_NOTE_CHARS,
        "focus_on_load": True,
    }
    blocks = [*_question(prompt), input_block(NOTE, REASON_LABEL, box)]
    return _modal(REASON_CALLBACK, prompt, "Deny with a reason", "Deny", blocks)


def read_reason(values: dict[str, Any]) -> str | None:
    """The reason a submitted deny modal's ``state.values`` hold ('' when left empty); None when its box
    is not there."""
    state = (values.get(NOTE) or {}).get(NOTE)
    if not isinstance(state, dict) or state.get("type") != "plain_text_input":
        return None
    value = state.get("value")
    return value if isinstance(value, str) else ""


def reason_errors(_prompt: Prompt, _problems: tuple[FieldError, ...], notice: str | None) -> dict[str, str]:
    """Why the core did not take the denial, under the reason box (``response_action: errors``)."""
    return {NOTE: shorten(notice or notices.TRY_AGAIN, ERROR_LIMIT)}


# Edit and approve… -------------------------------------------------------------------------------------


def _kind(value: Any) -> str:
    """How an argument is edited: ``text``, ``number``, ``boolean`` or ``json``."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    return "text" if isinstance(value, str) else "json"


def _shown(value: Any) -> str:
    """An argument as its input starts: the text itself, a number as Slack writes one, else JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, float):
        text = repr(value)
        return text if "e" not in text else format(Decimal(text), "f")
    return json.dumps(value, indent=2, ensure_ascii=False)


def _property(prompt: Prompt, name: str) -> dict[str, Any]:
    properties = (prompt.input_schema or {}).get("properties")
    described = properties.get(name) if isinstance(properties, dict) else None
    return described if isinstance(described, dict) else {}


def _element(prompt: Prompt, name: str, value: Any) -> dict[str, Any]:
    """The input for one argument, prefilled with its current value (``action_id`` is FIELD)."""
    kind = _kind(value)
    if kind == "boolean":
        choices = [option("true", "true"), option("false", "false")]
        return {
            "type": "static_select",
            "action_id": FIELD,
            "options": choices,
            "initial_option": choices[0 if value else 1],
        }
    if kind == "number":
        decimals = isinstance(value, float) or _property(prompt, name).get("type") == "number"
        return {
            "type": "number_input",
            "action_id": FIELD,
            "is_decimal_allowed": decimals,
            "initial_value": _shown(value),
        }
    shown = _shown(value)
    element: dict[str, Any] = {
        "type": "plain_text_input",
        "action_id": FIELD,
        "multiline": kind == "json" or "\n" in shown or len(shown) > MULTILINE_PAST,
        "max_length": TEXT_INPUT_LIMIT,
    }
    if shown:
        element["initial_value"] = shown
    return element


def _editable(prompt: Prompt) -> tuple[list[str], list[str]]:
    """The arguments the modal has an input for, in the call's order, and the ones kept as they are (too
    long for an input, or past the modal's size)."""
    arguments = prompt.tool_call.arguments if prompt.tool_call else {}
    inputs: list[str] = []
    kept: list[str] = []
    for name, value in arguments.items():
        fits = _kind(value) in ("number", "boolean") or len(_shown(value)) <= TEXT_INPUT_LIMIT
        (inputs if fits and len(inputs) < MAX_ARGUMENT_INPUTS else kept).append(name)
    return inputs, kept


def edit_view(prompt: Prompt) -> dict[str, Any]:
    """The modal that approves ``prompt``'s call with its arguments as edited: an input per argument."""
    arguments = prompt.tool_call.arguments if prompt.tool_call else {}
    name = prompt.tool_call.name if prompt.tool_call else ""
    intro = f"Change the arguments of {name}, then approve the call as changed."
    blocks: list[dict[str, Any]] = [{"type": "section", "text": plain(shorten(intro, SECTION_LIMIT))}]
    inputs, kept = _editable(prompt)
    for index, argument in enumerate(inputs):
        value = arguments[argument]
        description = _property(prompt, argument).get("description")
        hint = description if isinstance(description, str) and description.strip() else None
        element = _element(prompt, argument, value)
        blocks.append(input_block(f"a{index}", argument, element, optional=_kind(value) == "text", hint=hint))
    if kept:
        blocks.append(
            {"type": "context", "elements": [plain(shorten(KEPT_NOTE + ", ".join(kept), LABEL_LIMIT))]}
        )
    return _modal(EDIT_CALLBACK, prompt, "Edit and approve", "Approve", blocks)


def _number(text: str) -> int | float | None:
    if _INTEGER.fullmatch(text):
        return int(text)
    if _DECIMAL.fullmatch(text):
        number = float(text)
        return number if number not in (float("inf"), float("-inf")) else None
    return None


def _typed(kind: str, state: dict[str, Any]) -> tuple[Any, str | None]:
    """One input's value typed back to its argument's kind, or the error to show under it."""
    if kind == "boolean":
        chosen = (state.get("selected_option") or {}).get("value")
        if chosen not in ("true", "false"):
            return None, notices.CHOOSE_TRUE_OR_FALSE
        return chosen == "true", None
    value = state.get("value")
    text = value if isinstance(value, str) else ""
    if kind == "text":
        return text, None
    if kind == "number":
        number = _number(text.strip())
        return (number, None) if number is not None else (None, notices.NOT_A_NUMBER)
    try:
        return parse_typed(text), None
    except ValueError as exc:
        return None, notices.not_json(str(exc))


_STATES = {"boolean": "static_select", "number": "number_input", "text": "plain_text_input"}


def read_edit(prompt: Prompt, values: dict[str, Any]) -> EditReading:
    """The call's arguments a submitted edit modal's ``state.values`` give: each input typed back; the
    arguments kept as they are unchanged."""
    arguments = dict(prompt.tool_call.arguments) if prompt.tool_call else {}
    errors: dict[str, str] = {}
    for index, name in enumerate(_editable(prompt)[0]):
        kind = _kind(arguments[name])
        state = (values.get(f"a{index}") or {}).get(FIELD)
        if not isinstance(state, dict) or state.get("type") != _STATES.get(kind, "plain_text_input"):
            return EditReading(None)
        arguments[name], error = _typed(kind, state)
        if error is not None:
            errors[f"a{index}"] = error
    return EditReading(None if errors else arguments, errors)


def edit_errors(prompt: Prompt, problems: tuple[FieldError, ...], notice: str | None) -> dict[str, str]:
    """The core's reasons for not taking the edited call, by block (``response_action: errors``): each
    under the input of the argument it names (``items.0`` names ``items``), one naming none under the
    first input, and with no reason given the core's notice there. Empty when the modal has no input."""
    inputs = _editable(prompt)[0]
    if not inputs:
        return {}
    shown: dict[str, str] = {}
    for problem in problems:
        path = problem.property
        named = [name for name in inputs if path == name or path.startswith(f"{name}.")]
        block = f"a{inputs.index(max(named, key=len))}" if named else "a0"
        sentence = f"{problem.problem[:1].upper()}{problem.problem[1:]}."
        shown[block] = f"{shown[block]} {sentence}" if block in shown else sentence
    if not shown:
        shown["a0"] = notice or notices.edit_not_taken("the arguments were not taken")
    return {block: shorten(text, ERROR_LIMIT) for block, text in shown.items()}
