"""What a press or a submitted form answers, checked against the prompt it claims, and what the presser
is told. Pure functions."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import discord

from channels.discord.control_ids import TEXT_FIELD, Action, ControlId, field_id
from gateway.models import Prompt, PromptKind, PromptState, Question
from gateway.render import NO_SELECTION, answers_summary
from gateway.service import Outcome, Received

FieldValue = str | list[str]

NOT_THIS_PROMPT = "That control does not match its prompt, so nothing was changed."
NOT_ON_A_FORM = "Answer every question of the form (pick an option or type an answer), then submit again."
EMPTY_TEXT = "Type an answer before submitting; nothing was changed."
NOT_ALLOWED = (
    "Your answer was not taken: only the person who started this run and the agent's approvers can "
    "answer its prompts."
)
NO_LONGER_OPEN = "This prompt is no longer open, so nothing was changed."
UNKNOWN_PROMPT = "This control belongs to a prompt Threadgate no longer knows, so nothing was changed."
ALREADY_RECEIVED = "This answer was already received."
TRY_AGAIN = "Threadgate could not take your answer just now; nothing was changed. Please try again."
DECLINED = "✓ You declined it."
PAGE_KEPT = "Fields {first}–{last} of {total} are kept. Continue with the rest:"


class Refused(Exception):
    """A press that is not taken; the message is what the person is told, privately."""

    def __init__(self, message: str = NOT_THIS_PROMPT) -> None:
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


def the_question(prompt: Prompt, control: ControlId) -> Question:
    """The one question a message control belongs to: such controls exist on one-question prompts only."""
    if len(prompt.questions) != 1 or control.question != 0:
        raise Refused()
    return prompt.questions[0]


def check_opens_form(prompt: Prompt, control: ControlId) -> None:
    """A button that opens a form must be one this prompt's message could carry."""
    if control.action is Action.WRITE:
        question = the_question(prompt, control)
        if prompt.kind is PromptKind.APPROVAL or (prompt.kind is PromptKind.TEXT and question.options):
            raise Refused()
    elif control.action is Action.FORM:
        if prompt.kind is not PromptKind.ASK_USER_QUESTION:
            raise Refused()
    else:
        raise Refused()


def press_answers(prompt: Prompt, control: ControlId, values: Sequence[object]) -> list[list[str]]:
    """A button or select on the prompt's message: one answer list for its one question."""
    question = the_question(prompt, control)
    labels = question.labels
    if control.action is Action.PICK:
        if not single_select(question) or control.option >= len(labels):
            raise Refused()
        return [[labels[control.option]]]
    if control.action is Action.NONE:
        if not question.multi_select:
            raise Refused()
        return [[]]
    if control.action is Action.MENU:
        if not labels or prompt.kind is PromptKind.APPROVAL:
            raise Refused()
        return [chosen_labels(question, values)]
    raise Refused()


def text_answers(prompt: Prompt, control: ControlId, fields: Mapping[str, FieldValue]) -> list[list[str]]:
    """The text form: a free-text answer, or the Other… answer to an option list, verbatim."""
    if control.action is not Action.TEXT:
        raise Refused()
    check_opens_form(prompt, ControlId(Action.WRITE, control.prompt_id, control.question))
    return [[typed(fields.get(TEXT_FIELD), required=True)]]


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
            raise Refused(EMPTY_TEXT)
        return ""
    if not isinstance(value, str):
        raise Refused()
    return value


def structured(prompt: Prompt, answers: list[list[str]]) -> list[dict[str, Any]]:
    """The full answer set the core takes as it stands: one entry per question, by question id."""
    return [
        {"question_id": question.id or f"q{index + 1}", "question": question.question, "answer": answer}
        for index, (question, answer) in enumerate(zip(prompt.questions, answers, strict=True))
    ]


def summary(answers: list[list[str]]) -> str:
    """``staging``; ``CSV import · KPI cards, Table`` for several questions: for people reading the log."""
    return " · ".join(", ".join(answer) if answer else NO_SELECTION for answer in answers)


@dataclass(frozen=True, slots=True)
class Reply:
    """The private answer to a press: a notice, and a button to go on with (a form's next page)."""

    text: str
    view: discord.ui.View | None = None


def settled_notice(prompt: Prompt) -> str:
    """What a late press is told: how the prompt settled, without repeating the prompt."""
    if prompt.prompt_state is PromptState.ANSWERED:
        given = answers_summary(prompt.answers or [])
        return f"This prompt was already answered ({given}); nothing was changed."
    if prompt.prompt_state is PromptState.CANCELLED:
        return f"This prompt was cancelled ({prompt.reason or 'cancelled'}); nothing was changed."
    return NO_LONGER_OPEN


def outcome_notice(received: Received, answer_summary: str, asked: Prompt) -> str:
    """The private answer to a press, from what the core made of it (``asked``: the prompt as read
    before the press reached the core, for a stale press the core returns no prompt for)."""
    if received.outcome is Outcome.ANSWERED:
        return f"✓ Your answer was taken: {answer_summary}"
    if received.outcome is Outcome.DECLINED:
        return DECLINED
    if received.outcome is Outcome.KEPT and received.notice:  # a value the form's validator refused
        return received.notice
    if received.outcome is Outcome.NOT_ALLOWED:
        return NOT_ALLOWED
    if received.outcome is Outcome.DUPLICATE:
        return ALREADY_RECEIVED
    prompt = received.prompt or asked
    return NO_LONGER_OPEN if prompt.pending else settled_notice(prompt)
