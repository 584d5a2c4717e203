"""What a submitted form answers, read against the prompt it claims, and which buttons open a form. Pure
functions."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import discord

from channels.discord.control_ids import Action, ControlId, field_id
from gateway.sdk import Prompt, PromptKind, Unanswered, map_form, notices

FieldValue = str | list[str]

NOT_ON_A_FORM = "Answer every question of the form (pick an option or type an answer), then submit again."


class Refused(Exception):
    """A press that is not taken; the message is what the person is told, privately."""

    def __init__(self, message: str = notices.MISMATCH) -> None:
        super().__init__(message)
        self.message = message


def form_fields(components: object) -> dict[str, FieldValue]:
    """A submitted form's fields by custom id: a select's values, a text field's value."""
    fields: dict[str, FieldValue] = {}
    stack = list(components) if isinstance(components, list) else []
    while stack:
        component = stack.pop(0)
        if not isinstance(component, dict):
            continue
        if isinstance(component.get("components"), list):  # an action row
            stack.extend(component["components"])
        if isinstance(component.get("component"), dict):  # a label
            stack.append(component["component"])
        custom_id = component.get("custom_id")
        if not isinstance(custom_id, str):
            continue
        if isinstance(component.get("values"), list):
            fields[custom_id] = [str(value) for value in component["values"]]
        elif isinstance(component.get("value"), str):
            fields[custom_id] = component["value"]
    return fields


def check_opens_form(prompt: Prompt, control: ControlId) -> None:
    """A button that opens a form must be one this prompt's message could carry."""
    if control.action is Action.WRITE:  # drawn on one-question prompts only
        if len(prompt.questions) != 1 or control.question != 0 or prompt.kind is PromptKind.APPROVAL:
            raise Refused()
        if prompt.kind is PromptKind.TEXT and prompt.questions[0].options:
            raise Refused()
    elif control.action is Action.FORM:
        if prompt.kind is not PromptKind.ASK_USER_QUESTION:
            raise Refused()
    else:
        raise Refused()


def form_answers(prompt: Prompt, fields: Mapping[str, FieldValue]) -> list[list[str]]:
    """The form of every question: one answer list per question, in the prompt's order. An answer typed
    under Other… wins over an option picked: the person typed what they meant."""
    if prompt.kind is not PromptKind.ASK_USER_QUESTION:
        raise Refused()
    picked: list[list[int]] = []
    typed: list[str] = []
    for index, question in enumerate(prompt.questions):
        text = fields.get(field_id("other" if question.options else "text", index), "")
        chosen = fields.get(field_id("pick", index), []) if question.options else []
        if not isinstance(text, str):
            raise Refused()
        indexes = [option_index(value) for value in (chosen if isinstance(chosen, list) else [chosen])]
        picked.append([] if text.strip() and not question.multi_select else indexes)
        typed.append(text)
    read = map_form(prompt.questions, picked, typed)
    if read.unanswered:
        why = next(iter(read.unanswered.values()))
        raise Refused(notices.EMPTY_TEXT if why is Unanswered.EMPTY else NOT_ON_A_FORM)
    if read.answers is None:
        raise Refused()
    return read.answers


def option_index(value: object) -> int:
    """A select's value as an option index (-1 for one no select of ours sends)."""
    ok = isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 2
    return int(value) if ok and isinstance(value, str) else -1


@dataclass(frozen=True, slots=True)
class Reply:
    """The private answer to a press: a notice, and a button to go on with (a form's next page)."""

    text: str
    view: discord.ui.View | None = None
