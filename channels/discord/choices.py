"""What a submitted form answers, read against the prompt it claims, and which buttons open a form. Pure
functions."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import discord

from channels.discord.control_ids import Action, ControlId, field_id
from gateway import notices
from gateway.models import Prompt, PromptKind, Question

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


def single_select(question: Question) -> bool:
    return bool(question.options) and not question.multi_select


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
    """The form of every question: one answer list per question, in the prompt's order."""
    if prompt.kind is not PromptKind.ASK_USER_QUESTION:
        raise Refused()
    answers: list[list[str]] = []
    for index, question in enumerate(prompt.questions):
        if not question.options:
            answers.append([typed(fields.get(field_id("text", index)), required=True)])
            continue
        other = typed(fields.get(field_id("other", index)), required=False)
        picked = fields.get(field_id("pick", index), [])
        chosen = chosen_labels(question, picked if isinstance(picked, list) else [picked], allow_none=True)
        if question.multi_select:
            answers.append(chosen + ([other] if other else []))
        elif other:  # Other… overrides a pick: the person typed what they meant
            answers.append([other])
        elif chosen:
            answers.append(chosen)
        else:
            raise Refused(NOT_ON_A_FORM)
    return answers


def chosen_labels(question: Question, values: Sequence[object], *, allow_none: bool = False) -> list[str]:
    """Option indexes from a select as labels, in option order; one for a single-select question."""
    labels = question.labels
    indexes: set[int] = set()
    for value in values:
        if not (isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 2):
            raise Refused()
        index = int(value)
        if index >= len(labels) or index in indexes:
            raise Refused()
        indexes.add(index)
    if single_select(question) and len(indexes) > 1:
        raise Refused()
    if single_select(question) and not indexes and not allow_none:
        raise Refused()
    return [label for index, label in enumerate(labels) if index in indexes]


def typed(value: FieldValue | None, *, required: bool) -> str:
    """A text field's value, verbatim; blank counts as not given."""
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise Refused(notices.EMPTY_TEXT)
        return ""
    if not isinstance(value, str):
        raise Refused()
    return value


@dataclass(frozen=True, slots=True)
class Reply:
    """The private answer to a press: a notice, and a button to go on with (a form's next page)."""

    text: str
    view: discord.ui.View | None = None
