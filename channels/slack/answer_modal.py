"""The answer form, a Slack modal with every question of a prompt, read back as one set of answers. Pure.

Each question is an input block: options as radio buttons or checkboxes (a select menu past ten), with
an optional "Other answer" box under them, since every option list also takes free text; a question
without options is a text box. The prompt id rides in ``private_metadata``; a question's blocks are
``q<i>`` (its options), ``o<i>`` (its "Other answer") and ``t<i>`` (its text box), by position.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from channels.slack.control_ids import ANSWER_CALLBACK, CHOICE, TEXT
from channels.slack.controls import MAX_CHECKBOXES, input_block, option, option_indexes, plain, shorten
from gateway.sdk import Prompt, Question, Unanswered, map_form, notices

TEXT_INPUT_LIMIT = 3_000  # Slack's longest plain_text_input
OTHER_LABEL = "Other answer"
PICK_ONE = notices.UNANSWERED[Unanswered.NONE]
NOT_BOTH = notices.UNANSWERED[Unanswered.BOTH]
TYPE_SOMETHING = notices.UNANSWERED[Unanswered.EMPTY]
# Where a question without an answer says why: under its options (q), its other box (o) or text box (t).
_SHOWN = {
    Unanswered.NONE: ("q", PICK_ONE),
    Unanswered.BOTH: ("o", NOT_BOTH),
    Unanswered.EMPTY: ("t", TYPE_SOMETHING),
}


@dataclass(frozen=True, slots=True)
class FormReading:
    """A submitted form: one answer list per question, or errors by block id to show in the form.

    ``answers`` is None when the submission does not fit the prompt (a block missing, an option index
    out of range): it is refused, not shown as an error.
    """

    answers: list[list[str]] | None
    errors: dict[str, str] = field(default_factory=dict)


def other_label(question: Question, several: bool) -> str:
    """The label of a question's "Other answer" box: names the question when the form has several."""
    if not several:
        return OTHER_LABEL
    return f"{OTHER_LABEL} ({shorten(question.header or question.question, 80)})"


def _options_element(question: Question, checked: list[int]) -> dict[str, Any]:
    few = len(question.options) <= MAX_CHECKBOXES
    options = [
        option(item.label, str(index), item.description if few else None)
        for index, item in enumerate(question.options)
    ]
    element: dict[str, Any] = {"action_id": CHOICE, "options": options}
    if question.multi_select:
        element["type"] = "checkboxes" if few else "multi_static_select"
        initial = [options[index] for index in checked if 0 <= index < len(options)]
        if initial:
            element["initial_options"] = initial
    else:
        element["type"] = "radio_buttons" if few else "static_select"
    if not few:
        element["placeholder"] = plain("Choose any…" if question.multi_select else "Choose…")
    return element


def _text_element(*, multiline: bool, focus: bool) -> dict[str, Any]:
    element: dict[str, Any] = {
        "type": "plain_text_input",
        "action_id": TEXT,
        "multiline": multiline,
        "max_length": TEXT_INPUT_LIMIT,
    }
    if focus:
        element["focus_on_load"] = True
    return element


def form_view(
    prompt: Prompt, *, focus_other: bool = False, checked: list[int] | None = None
) -> dict[str, Any]:
    """The modal for ``prompt``. ``focus_other`` puts the cursor in the first "Other answer" box (the
    "Other…" button); ``checked`` carries a multi-select's boxes already ticked in the message."""
    several = len(prompt.questions) > 1
    blocks: list[dict[str, Any]] = []
    for index, question in enumerate(prompt.questions):
        if question.options:
            element = _options_element(question, (checked or []) if index == 0 else [])
            blocks.append(input_block(f"q{index}", question.question, element, optional=True))
            focus = focus_other and index == 0
            other = _text_element(multiline=False, focus=focus)
            blocks.append(input_block(f"o{index}", other_label(question, several), other, optional=True))
        else:
            text = _text_element(multiline=True, focus=index == 0 and not focus_other)
            blocks.append(input_block(f"t{index}", question.question, text, optional=False))
    return {
        "type": "modal",
        "callback_id": ANSWER_CALLBACK,
        "private_metadata": prompt.prompt_id,
        "title": plain("Answer"),
        "submit": plain("Submit"),
        "close": plain("Cancel"),
        "blocks": blocks,
    }


def _text(values: dict[str, Any], block_id: str) -> str | None:
    """A text box's value ('' when left empty), or None when the block is not in the form."""
    state = values.get(block_id, {}).get(TEXT)
    if not isinstance(state, dict):
        return None
    value = state.get("value")
    return value if isinstance(value, str) else ""


def read_form(prompt: Prompt, values: dict[str, Any]) -> FormReading:
    """The answers a submitted form's ``state.values`` give, checked against the prompt's questions."""
    picked: list[list[int]] = []
    typed: list[str] = []
    for index, question in enumerate(prompt.questions):
        indexes: list[int] | None = []
        if question.options:
            state = values.get(f"q{index}", {}).get(CHOICE)
            indexes = option_indexes(state, len(question.options)) if isinstance(state, dict) else None
        text = _text(values, f"o{index}" if question.options else f"t{index}")
        if indexes is None or text is None:
            return FormReading(None)
        picked.append(indexes)
        typed.append(text.strip() if question.options else text)
    read = map_form(prompt.questions, picked, typed)
    errors = {f"{_SHOWN[why][0]}{index}": _SHOWN[why][1] for index, why in read.unanswered.items()}
    return FormReading(read.answers, errors)
